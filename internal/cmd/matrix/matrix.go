// Package matrix is the `patchkit matrix` command.
package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/matrix"
)

// Options are the flags and dependencies of `patchkit matrix`.
type Options struct {
	Factory *cmdutil.Factory
	// Changed is a file listing changed paths, "-" for stdin, FULL or "".
	Changed string
}

// NewCmdMatrix returns the matrix command. runF replaces the run function in tests.
func NewCmdMatrix(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "matrix [CHANGED_FILES | FULL]",
		Short: "Print the image units a change must build, as a JSON array",
		Long: `Print the JSON array of image units (["images/kubeovn"], or []) that a
change must build. CHANGED_FILES is a file with one changed path per line
(relative to --root), or - for stdin. No argument, an empty one, or FULL
selects every unit.

The units are the 'make image IMAGE=<name>' lines of the Makefile's build:
target. A changed file selects a unit when it is under images/<name>/, under
the unit's patch directory, or a file its spec refers to. A change to a
shared build input (cmd/, internal/, go.mod, go.sum, the Makefile,
hack/build-matrix.sh, .github/workflows/) selects every unit.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Changed = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return run(cmd.Context(), opts)
		},
	}
	return cmd
}

func run(_ context.Context, opts *Options) error {
	f := opts.Factory
	root, err := f.ResolveRoot()
	if err != nil {
		return err
	}
	units, err := matrix.Units(filepath.Join(root, "Makefile"), "Makefile")
	if err != nil {
		return err
	}
	var changed []string
	full := opts.Changed == "" || opts.Changed == matrix.Full
	if !full {
		var data []byte
		if opts.Changed == "-" {
			data, err = io.ReadAll(f.IO.In)
		} else {
			data, err = os.ReadFile(opts.Changed)
		}
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return &diag.InputError{File: opts.Changed, Msg: "no such changed-files list (give a file, -, or FULL)"}
			}
			return &diag.InputError{File: opts.Changed, Msg: "reading the changed-files list", Err: err}
		}
		changed = matrix.ParseChanged(data)
	}
	paths, err := matrix.Select(root, units, changed, full)
	if err != nil {
		return err
	}
	out, err := json.Marshal(paths)
	if err != nil {
		return err
	}
	_, err = f.IO.Out.Write(append(out, '\n'))
	return err
}
