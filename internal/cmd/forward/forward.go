// Package forward is the `patchkit forward` command.
package forward

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
	forwardstage "github.com/patchkit/patchkit/internal/forward"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/report"
)

// Options are the flags and dependencies of `patchkit forward`.
type Options struct {
	Factory *cmdutil.Factory
	// Patch is the patch file, relative to the repository root.
	Patch string
	// To is the upstream ref to carry it to (--to), default the upstream's
	// default branch (HEAD).
	To string
	// Out is the directory written (--out).
	Out string
	// Author is "Name <email>" (--author), default the header's Author.
	Author string
	// PR is the pull request URL to record as Forwarded: (--pr).
	PR string
	// WithTest adds the injected test files to the commit (--with-test).
	WithTest bool
}

// NewCmdForward returns the forward command. runF replaces the run function
// in tests.
func NewCmdForward(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "forward PATCH [--to REF] [--out DIR] [--author 'NAME <EMAIL>'] [--with-test] | forward PATCH --pr URL",
		Short: "Prepare the upstream pull request of an original change, and record it",
		Long: `Carry an original change (a patch whose Origin names no upstream commit or
PR) from the pin to the upstream's default branch (--to another ref), as
upgrade carries a patch: it applies there and is rendered at the new line
numbers, or a three-way merge rebases it, or it conflicts (exit 1, nothing
written). Then write into --out (default _output/forward under the root):

  NNNN-<subject>.patch   git format-patch output of the change on that
                         branch, authored by the Author: header (or --author),
                         dated SOURCE_DATE_EPOCH when set
  NNNN-<subject>.pr.md   the pull request body: Description, Bug, and the
                         regression test (Test:, and where the spec injects it)

--with-test adds the unit's injected test files (test.inject) to the commit
at their places in the tree, so the regression test goes upstream too.

The patches before PATCH in the series are applied at the pin first, so the
three-way merge starts from the state PATCH was written against.

Once the pull request is open, record it: forward PATCH --pr URL sets the
patch's Forwarded: header to URL, and patchkit status follows its state from
then on.

Exit codes: 0 written (or recorded); 1 the change conflicts on the branch;
2 bad input (a backport, no author, a PATCH in no unit's series).`,
		Args: cobra.ExactArgs(1),
	}
	cmdutil.NewCommand(cmd, opts, runF, cmdutil.Staged(f, run), func(_ *cobra.Command, args []string) error {
		opts.Patch = args[0]
		if opts.PR != "" && (opts.To != "" || opts.Out != "" || opts.Author != "" || opts.WithTest) {
			return &cmdutil.UsageError{Err: errors.New("--pr records the URL only: it takes no --to, --out, --author or --with-test")}
		}
		return nil
	})
	cmd.Flags().StringVar(&opts.To, "to", "", "the upstream ref to carry the change to (default: the upstream's default branch)")
	cmd.Flags().StringVar(&opts.Out, "out", "", "the directory to write the format-patch file and the PR body into (default _output/forward)")
	cmd.Flags().StringVar(&opts.Author, "author", "", "the author of the commit, 'Name <email>' (default: the patch's Author: header)")
	cmd.Flags().BoolVar(&opts.WithTest, "with-test", false, "add the unit's injected test files (test.inject) to the commit, at their places in the tree")
	cmd.Flags().StringVar(&opts.PR, "pr", "", "record this pull request URL as the patch's Forwarded: header")
	return cmd
}

func run(ctx context.Context, opts *Options, format report.Format, env pipeline.Env) error {
	f := opts.Factory
	s, rel, err := forwardstage.FindPatch(env.Root, opts.Patch)
	if err != nil {
		return err
	}
	if opts.PR != "" {
		changed, err := forwardstage.Record(env.Root, s, rel, opts.PR, pipeline.SeriesOptions(s)...)
		if err != nil {
			return err
		}
		return report.RenderForward(f.IO.Out, format, report.Forward{Result: &forwardstage.Result{Patch: rel}, Forwarded: opts.PR, Changed: changed})
	}
	out, err := pipeline.One(ctx, f.Runner(env), s.Dir, func(ctx context.Context, im *pipeline.Image) (report.Forward, error) {
		res, files, err := forwardstage.Submit(ctx, forwardstage.Submission{
			Root: env.Root, Cache: im.Cache, Spec: im.Spec, PinCommit: im.Commit, Patches: im.Patches,
			Patch: rel, To: opts.To, Out: opts.Out, Author: opts.Author, WithTest: opts.WithTest,
		})
		return report.Forward{Result: res, Files: files}, err
	})
	if err != nil {
		return err
	}
	if err := report.RenderForward(f.IO.Out, format, out); err != nil {
		return err
	}
	if out.Result.Mail == nil {
		return diag.ErrFindings
	}
	return nil
}
