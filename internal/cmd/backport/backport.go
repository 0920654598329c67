// Package backport is the `patchkit backport` command.
package backport

import (
	"context"
	"path/filepath"

	"github.com/spf13/cobra"

	backportstage "github.com/patchkit/patchkit/internal/backport"
	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/report"
	"github.com/patchkit/patchkit/internal/spec"
)

// Options are the flags and dependencies of `patchkit backport`.
type Options struct {
	Factory   *cmdutil.Factory
	Image     string
	Commit    string
	Name      string
	Reference bool
}

// NewCmdBackport returns the backport command. runF replaces the run function in tests.
func NewCmdBackport(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "backport IMAGE COMMIT [--name SLUG] [--reference]",
		Short: "Add an upstream commit to an image's patch series",
		Long: `Write patches/IMAGE/NNNN-SLUG.diff from the upstream commit COMMIT (a full or
abbreviated id, a tag or a branch), as the last patch of the series: a DEP-3
header (Subject from the commit, Origin: upstream with the commit URL, Bug
from the "Fixes #N" references and issue URLs of its message, Author, and
the message body), then the diff as 'git show --format= --binary' prints it.
SLUG is --name, else made from the subject; NNNN is the next number.

The command then applies the series with the new patch to the pin and says
whether it applies. A patch that does not apply is still written, for you to
refresh by hand, and the exit code is 1.

--reference writes NNNN-SLUG.ref.diff instead: a reference file with the
header and the fields "Reference: <commit id>" and "Patch-Id: <its
git patch-id --stable>", and no diff. patchkit applies the commit's diff in
its place, and refuses it (exit 2) if the patch-id no longer matches. A
reference that does not apply to the pin is not written (exit 1): run
without --reference for a file you can edit. 'git apply' of the glob fails on
a reference file; apply a series with references without patchkit by
applying, in glob order, each file or, for a reference, the output of
'git show --format= --binary <Reference>' in a checkout of the upstream.`,
		Args: cobra.ExactArgs(2),
	}
	cmdutil.NewCommand(cmd, opts, runF, cmdutil.Staged(f, run), func(_ *cobra.Command, args []string) error {
		opts.Image, opts.Commit = args[0], args[1]
		return nil
	})
	cmd.Flags().StringVar(&opts.Name, "name", "", "file name part (default: made from the commit's subject)")
	cmd.Flags().BoolVar(&opts.Reference, "reference", false, "write a reference file (commit id and patch-id, no diff) instead of the diff")
	return cmd
}

func run(ctx context.Context, opts *Options, format report.Format, env pipeline.Env) error {
	f := opts.Factory
	// The patch files as they are before the series is read: the write is
	// refused if they change meanwhile.
	s, err := spec.Load(env.Root, opts.Image)
	if err != nil {
		return err
	}
	listed, err := backportstage.ListPatches(filepath.Join(env.Root, filepath.FromSlash(s.Patches)))
	if err != nil {
		return err
	}
	r := f.Runner(env)
	r.EmptySeries = true // the first backport of a unit makes its patch directory
	out, err := pipeline.One(ctx, r, opts.Image, func(ctx context.Context, im *pipeline.Image) (report.Backport, error) {
		s := im.Spec
		added, err := backportstage.Add(ctx, backportstage.Request{
			Cache: im.Cache, RepoURL: s.Upstream.URL, Display: s.Patches, Existing: im.Patches,
			Rev: opts.Commit, PinCommit: im.Commit, Slug: opts.Name, Reference: opts.Reference,
		}, backportstage.Into{Root: env.Root, Listed: listed, Txn: f.Txn(), Offline: f.Offline})
		if err != nil {
			return report.Backport{}, err
		}
		return report.Backport{
			Raised: added.Raised,
			Image:  opts.Image, Commit: added.Commit.ID, Subject: added.Commit.Subject,
			File: added.Path, Reference: opts.Reference, PatchID: added.PatchID,
			Ref: im.Ref, Applies: added.Applies, Errors: added.Errors,
			SeriesFails: added.SeriesFails, Written: added.Written,
		}, nil
	})
	if err != nil {
		return err
	}
	if err := report.RenderBackport(f.IO.Out, format, out); err != nil {
		return err
	}
	if !out.Applies {
		return diag.ErrFindings
	}
	return nil
}
