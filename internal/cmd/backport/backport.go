// Package backport is the `patchkit backport` command.
package backport

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/patchkit/patchkit/internal/apply"
	backportstage "github.com/patchkit/patchkit/internal/backport"
	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/gomod"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/report"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/txn"
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
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Image, opts.Commit = args[0], args[1]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return run(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Name, "name", "", "file name part (default: made from the commit's subject)")
	cmd.Flags().BoolVar(&opts.Reference, "reference", false, "write a reference file (commit id and patch-id, no diff) instead of the diff")
	return cmd
}

func run(ctx context.Context, opts *Options) error {
	f := opts.Factory
	format, env, err := f.Setup()
	if err != nil {
		return err
	}
	root := env.Root
	s, err := spec.Load(root, opts.Image)
	if err != nil {
		return err
	}
	dir := filepath.Join(root, filepath.FromSlash(s.Patches))
	listed, err := backportstage.ListPatches(dir) // the write is refused if this changes
	if err != nil {
		return err
	}
	var existing []*series.Patch
	if _, err := os.Stat(dir); err == nil {
		if existing, err = series.Load(dir, s.Patches, pipeline.SeriesOptions(s)...); err != nil {
			return err
		}
	}
	im, err := pipeline.Open(ctx, env, s, "")
	if err != nil {
		return err
	}
	defer im.Close()
	for i, p := range existing {
		if existing[i], err = im.Materialize(ctx, p); err != nil {
			return err
		}
	}
	plan, err := backportstage.NewPlan(ctx, backportstage.Request{
		Cache: im.Cache, RepoURL: s.Upstream.URL, Display: s.Patches, Existing: existing,
		Rev: opts.Commit, PinCommit: im.Commit, Slug: opts.Name, Reference: opts.Reference,
	})
	if errors.Is(err, backportstage.ErrBadRequest) {
		return &cmdutil.UsageError{Err: err}
	}
	if err != nil {
		return err
	}

	src, err := im.Cache.Source(im.Commit)
	if err != nil {
		return err
	}
	before := apply.Series(src, existing)
	after := apply.Series(src, append(existing[:len(existing):len(existing)], plan.Patch))
	if after.Err != nil {
		return after.Err
	}
	last := after.Patches[len(after.Patches)-1]
	// A dependency bump that does not apply is re-expressed at the pin:
	// raise what the pin does not cover yet (docs/obsolete-check.md).
	raised := ""
	if last.Status != apply.StatusApplied && !opts.Reference {
		if raised, err = plan.RaiseBump(ctx, gomod.Go{Offline: f.Offline}, src, existing); err != nil {
			return err
		}
		if raised != "" {
			after = apply.Series(src, append(existing[:len(existing):len(existing)], plan.Patch))
			last = after.Patches[len(after.Patches)-1]
		}
	}
	out := report.Backport{
		Raised: raised,
		Image:  opts.Image, Commit: plan.Commit.ID, Subject: plan.Commit.Subject,
		File: plan.Path, Reference: opts.Reference, PatchID: plan.PatchID,
		Ref: im.Ref, Applies: last.Status == apply.StatusApplied, Errors: last.Errors,
		SeriesFails: !before.OK,
	}
	// A diff that does not apply is written for the user to refresh; a
	// reference cannot be refreshed, so it is written only if it applies.
	if out.Applies || !opts.Reference {
		if err := plan.WriteRepo(ctx, root, listed, txn.Options{Waiting: cmdutil.LockNotice(f.IO)}); err != nil {
			if errors.Is(err, backportstage.ErrBadRequest) {
				return &cmdutil.UsageError{Err: err}
			}
			return err
		}
		out.Written = true
	}
	if err := report.RenderBackport(f.IO.Out, format, out); err != nil {
		return err
	}
	if !out.Applies {
		return diag.ErrFindings
	}
	return nil
}
