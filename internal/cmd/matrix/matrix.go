// Package matrix is the `patchkit matrix` command.
package matrix

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/matrix"
	"github.com/patchkit/patchkit/internal/report"
	"github.com/patchkit/patchkit/internal/spec"
)

// Options are the flags and dependencies of `patchkit matrix`.
type Options struct {
	Factory *cmdutil.Factory
	// Changed is a file listing changed paths, "-" for stdin, FULL or "".
	Changed string
	// By is how selected units are named: unit (their directories) or
	// build-dir (the directory of the build line that builds them).
	By string
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

A changed file selects a unit when it is one of the unit's inputs: its
directory, its patch directory, its injected tests, its Dockerfile, the
files its pin is read from, its stamp targets, the paths and globs of its
spec's inputs: key, and the Makefile of the directory its build line names.
A change to a shared input (the shared: list of .patchkit.yaml, the build
entry's Makefile, .patchkit.yaml itself) selects every unit.

The build entry is the build: target of the root Makefile (build.makefile and
build.target in .patchkit.yaml). Its 'make image IMAGE=<name>' and 'make -C
DIR image' lines ($(MAKE) too) build the units: a -C line builds every unit
under DIR. A selected unit that no line builds is a finding (exit 1): the
units that build are still printed, and each unbuilt one is named on stderr
with the line to add (-o github adds an ::error annotation on stdout, after
the JSON line: read the matrix with head -n1), never a
silent []. A unit that .patchkit.yaml's unbuilt: list names, with a reason,
is reported on stderr and does not fail.

--by build-dir prints the directories of the build lines instead
(packages/system/kamaji), and selects a -C line's directory also for a change
to any file under it, patchkit unit or not, as a build-matrix script that
emits package directories does.

-o text (the default), json and github print the JSON array on one line;
-o markdown lists the paths, and the units nothing builds, for a step
summary or a pull-request comment.`,
		Args: cobra.MaximumNArgs(1),
	}
	cmdutil.NewCommand(cmd, opts, runF, run, func(_ *cobra.Command, args []string) error {
		if len(args) == 1 {
			opts.Changed = args[0]
		}
		if opts.By != matrix.ByUnit && opts.By != matrix.ByBuildDir {
			return &cmdutil.UsageError{Err: fmt.Errorf("--by %q: give unit or build-dir", opts.By)}
		}
		return nil
	})
	cmd.Flags().StringVar(&opts.By, "by", matrix.ByUnit, "name selected units by their directory (unit) or by their build line's directory (build-dir)")
	return cmd
}

func run(_ context.Context, opts *Options) error {
	f := opts.Factory
	// -o is checked before anything is read: matrix renders every format
	// (report.Matrix), and any other is refused with exit 2.
	format, err := f.Format()
	if err != nil {
		return err
	}
	if err := report.CheckFormat(format, report.Matrix{}); err != nil {
		return err
	}
	root, err := f.ResolveRoot()
	if err != nil {
		return err
	}
	repo, err := spec.LoadRepo(root)
	if err != nil {
		return err
	}
	plan, err := matrix.Load(root, repo)
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
	sel := plan.Select(root, changed, full, opts.By)
	// The units that build are printed even when some do not: a CI job
	// builds them, and the unbuilt ones fail it below. The JSON is the
	// one-line array (Matrix.Text), not an indented one.
	out := format
	if out == report.JSON {
		out = report.Text
	}
	m := report.Matrix{Paths: sel.Paths, Makefile: plan.Entry.Makefile, Unbuilt: sel.Unbuilt, Acknowledged: sel.Acknowledged}
	if err := report.Export(f.IO.Out, out, m); err != nil {
		return err
	}
	if err := report.RenderUnbuilt(f.IO.ErrOut, f.IO.Out, format, plan.Entry.Makefile, sel.Unbuilt, sel.Acknowledged, sel.Err(plan.Entry)); err != nil {
		return err
	}
	if len(sel.Unbuilt) > 0 {
		return diag.ErrFindings
	}
	return nil
}
