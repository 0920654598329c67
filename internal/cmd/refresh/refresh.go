// Package refresh is the `patchkit refresh` command.
package refresh

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/report"
	upgradestage "github.com/patchkit/patchkit/internal/upgrade"
)

// Options are the flags and dependencies of `patchkit refresh`.
type Options struct {
	Factory *cmdutil.Factory
	// Images are the units named: the first argument, and every later
	// one that is no patch file (*.diff, *.patch).
	Images []string
	// Patches limits the rewrite to these patch files (names or paths).
	Patches []string
}

// NewCmdRefresh returns the refresh command. runF replaces the run function in tests.
func NewCmdRefresh(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "refresh IMAGE... [PATCH...]",
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

Several IMAGEs (every argument that does not end in .diff or .patch is an
IMAGE) are refreshed one after the other, each its own write, the PATCH
names in each: a fix to one release branch's series carried to the others.
The output lists each, -o json as an array; the exit code is the worst.

Exit codes: 0 refreshed (or nothing to do); 1 a patch does not apply at the
pin; 2 bad input.`,
		Args: cobra.MinimumNArgs(1),
	}
	return cmdutil.NewCommand(cmd, opts, runF, cmdutil.Staged(f, run), func(_ *cobra.Command, args []string) error {
		opts.Images = args[:1]
		for _, a := range args[1:] {
			if strings.HasSuffix(a, ".diff") || strings.HasSuffix(a, ".patch") {
				opts.Patches = append(opts.Patches, a)
			} else {
				opts.Images = append(opts.Images, a)
			}
		}
		return nil
	})
}

func run(ctx context.Context, opts *Options, format report.Format, env pipeline.Env) error {
	f := opts.Factory
	work := func(ctx context.Context, im *pipeline.Image) (report.Refresh, error) {
		files, err := upgradestage.Refresh(ctx, upgradestage.RefreshInput{
			Root: env.Root, Spec: im.Spec, Cache: im.Cache, PinCommit: im.Commit, Patches: im.Patches,
			Names: opts.Patches, Offline: f.Offline, Txn: f.Txn(),
		})
		out := report.Refresh{Image: im.Name, Ref: im.Ref}
		for _, r := range files {
			out.Patches = append(out.Patches, report.RefreshedFile{File: r.File, Changed: r.Changed})
		}
		return out, err
	}
	if len(opts.Images) == 1 {
		out, err := pipeline.One(ctx, f.Runner(env), opts.Images[0], work)
		if err != nil {
			return err
		}
		return report.RenderRefresh(f.IO.Out, format, out)
	}
	r := f.Runner(env)
	r.Alone = true
	units, err := pipeline.Run(ctx, r, opts.Images, work)
	if err != nil {
		return err
	}
	out := report.Units{Name: "refresh"}
	for _, u := range units {
		if u.Err != nil {
			out.Results = append(out.Results, report.UnitFailed{Image: u.Name, Error: u.Err.Error(), ExitCode: cmdutil.ExitCode(u.Err), Verb: "not refreshed"})
			continue
		}
		out.Results = append(out.Results, u.Result)
	}
	if err := report.Export(f.IO.Out, format, out); err != nil {
		return err
	}
	return diag.Exit(pipeline.Worst(units))
}
