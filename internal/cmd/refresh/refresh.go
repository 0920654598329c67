// Package refresh is the `patchkit refresh` command.
package refresh

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/spf13/cobra"

	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/gomod"
	"github.com/patchkit/patchkit/internal/pipeline"
	refreshstage "github.com/patchkit/patchkit/internal/refresh"
	"github.com/patchkit/patchkit/internal/report"
	"github.com/patchkit/patchkit/internal/txn"
	upgradestage "github.com/patchkit/patchkit/internal/upgrade"
)

// Options are the flags and dependencies of `patchkit refresh`.
type Options struct {
	Factory *cmdutil.Factory
	Image   string
	// Patches limits the rewrite to these patch files (names or paths).
	Patches []string
}

// NewCmdRefresh returns the refresh command. runF replaces the run function in tests.
func NewCmdRefresh(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "refresh IMAGE [PATCH...]",
		Short: "Rewrite patches canonically at the current pin",
		Long: `Rewrite the image's patches (or only the PATCH files named) in canonical
form at the pin: the header untouched; per file "diff --git", the mode
lines, "index" with 12-hex blob ids, "---"/"+++"; hunks with 3 lines of
context at the line numbers of the tree each patch applies to (the pin and
the patches before it), and no function context after "@@". Binary,
rename and copy diffs, and reference files, are kept as they are.

git apply gives the same tree from the canonical series as from the old
one. Refreshing twice changes nothing; a series already canonical is not
written. Files are written at the end, or not at all.

A dependency-bump patch (only go.mod, go.sum and vendor/modules.txt version
lines) that no longer applies at the pin is re-expressed there: the modules
the pin does not cover yet, raised with go mod edit and go mod tidy against
GOPROXY, never a lower version.

Exit codes: 0 refreshed (or nothing to do); 1 a patch does not apply at the
pin; 2 bad input.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Image, opts.Patches = args[0], args[1:]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return run(cmd.Context(), opts)
		},
	}
	return cmd
}

func run(ctx context.Context, opts *Options) error {
	f := opts.Factory
	format, env, err := f.Setup()
	if err != nil {
		return err
	}
	im, err := pipeline.Prepare(ctx, env, opts.Image, "")
	if err != nil {
		return err
	}
	defer im.Close()
	want, err := selected(im, opts.Patches)
	if err != nil {
		return err
	}
	src, err := im.Cache.Source(im.Commit)
	if err != nil {
		return err
	}
	rendered, err := refreshstage.CanonicalBumps(ctx, gomod.Go{Offline: f.Offline}, src, im.Patches)
	var na *refreshstage.NotApplyingError
	if errors.As(err, &na) {
		return fmt.Errorf("%w: %v", diag.ErrFindings, err)
	}
	if err != nil {
		return err
	}
	out := report.Refresh{Image: opts.Image, Ref: im.Ref}
	plan := &upgradestage.Result{}
	for _, r := range rendered {
		if !want[r.Patch.Path] {
			continue
		}
		out.Patches = append(out.Patches, report.RefreshedFile{File: r.Patch.Path, Changed: r.Changed})
		if r.Changed {
			plan.Writes = append(plan.Writes, upgradestage.Write{Path: r.Patch.Path, Data: r.Text, Prior: r.Read})
		}
	}
	set, err := plan.WriteSet(env.Root, im.Spec, im.Patches)
	if err != nil {
		return err
	}
	if _, err := set.Commit(ctx, txn.Options{Waiting: cmdutil.LockNotice(f.IO)}); err != nil {
		return txn.Explain(err)
	}
	return report.RenderRefresh(f.IO.Out, format, out)
}

// selected returns the patch paths to rewrite: all, or those named (by file
// name or path); a name that is not in the series is a bad invocation.
func selected(im *pipeline.Image, names []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, p := range im.Patches {
		if len(names) == 0 {
			out[p.Path] = true
		}
	}
	for _, n := range names {
		found := false
		for _, p := range im.Patches {
			if n == p.Path || n == p.Name || path.Clean(n) == p.Path {
				out[p.Path], found = true, true
			}
		}
		if !found {
			return nil, &cmdutil.UsageError{Err: fmt.Errorf("%s is not a patch of %s's series", n, im.Spec.Name)}
		}
	}
	return out, nil
}
