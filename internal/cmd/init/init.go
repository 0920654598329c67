// Package initcmd is the `patchkit init` command.
package initcmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/patchkit/patchkit/internal/adopt"
	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/report"
)

// Options are the flags and dependencies of `patchkit init`.
type Options struct {
	Factory *cmdutil.Factory
	// Dirs are the directories to search, relative to --root; none means all.
	Dirs []string
	// Force replaces specs that exist (--force).
	Force bool
	// DryRun writes nothing (--dry-run).
	DryRun bool
}

// NewCmdInit returns the init command. runF replaces the run function in tests.
func NewCmdInit(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "init [DIR...]",
		Short: "Write a patchkit.yaml for each image unit a repository already has",
		Long: `Find the image units under each DIR (relative to --root; the whole
repository when none is given, skipping .git, _output, vendor and
node_modules): a Dockerfile or Containerfile that fetches an upstream (git
clone [--branch REF] URL, with a later git checkout REF, or a GitHub archive
URL .../archive/refs/tags/REF.tar.gz or .../archive/REF.tar.gz) and applies
a patch directory it copies (COPY patches /patches, then git apply or
patch -p1 of files in it).

For each, read the upstream URL and the pin the build uses: an ARG default,
or the --build-arg of the Makefile recipe that builds the directory and the
Makefile variable behind it. Write patchkit.yaml beside the Dockerfile,
pointing at the pin's source (upstream.ref: {dockerfile-arg: TAG} or
{makefile-var: VERSION, makefile: ../../Makefile}) rather than copying it,
with build.context unit. A spec that exists is kept (--force replaces it).

It also reads each package Makefile's update target for chart units, the
vendored directories it fetches (helm pull from a Helm repository or
oci://, curl .../archive/refs/tags/TAG.tar.gz | tar -x --strip N of a
subdirectory, a release asset by wget -O or curl -o, a shared %-update rule
driven by REPO_URL, CHART_NAME, CHART_VERSION) and patches (patch -pN < F,
git apply F, in the recipe's order), and writes one patchkit-charts.yaml per
package (kind "chart" in -o json). A patch file in a package's patches/
that no line applies, and a fetch or patch line it cannot read, are listed
as units that could not be read.

Print what was written, and each unit found that could not be read, with
why. -o json prints an array of {"dir","spec","upstream":{"url","ref"},
"patches","status"}. Exit 0 when every unit found has a spec, 1 when some
could not be read, 2 on bad input (nothing is written).`,
	}
	cmdutil.NewCommand(cmd, opts, runF, run, func(_ *cobra.Command, args []string) error {
		opts.Dirs = args
		return nil
	})
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace patchkit.yaml files that exist")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print what would be written, write nothing")
	return cmd
}

func run(ctx context.Context, opts *Options) error {
	f := opts.Factory
	format, err := f.Format()
	if err != nil {
		return err
	}
	root, err := f.ResolveRoot()
	if err != nil {
		return err
	}
	units, err := adopt.ScanContext(ctx, root, opts.Dirs)
	if err != nil {
		return err
	}
	if !opts.DryRun {
		if err := adopt.Write(ctx, root, units, opts.Force, f.Txn()); err != nil {
			return err
		}
	}
	if units, err = withCharts(root, opts, units); err != nil {
		return err
	}
	if err := report.RenderInit(f.IO.Out, format, units); err != nil {
		return err
	}
	for _, u := range units {
		if u.Status == adopt.StatusUnreadable {
			return diag.ErrFindings
		}
	}
	return nil
}
