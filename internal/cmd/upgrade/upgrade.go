// Package upgrade is the `patchkit upgrade` command.
package upgrade

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/patchkit/patchkit/internal/chart"
	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
	gatestage "github.com/patchkit/patchkit/internal/gate"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/report"
	"github.com/patchkit/patchkit/internal/spec"
	upgradestage "github.com/patchkit/patchkit/internal/upgrade"
)

// Options are the flags and dependencies of `patchkit upgrade`.
type Options struct {
	Factory *cmdutil.Factory
	// Images are the units named: one, or several, each upgraded on its own.
	Images []string
	// Image is the unit being upgraded.
	Image string
	// Into is the new unit's directory (--into): the unit is copied there
	// and carried to the new ref; the unit itself is left as it is.
	Into string
	// To is the ref to move to (--to); "" is the newest final release.
	To string
	// DryRun prints the plan and writes nothing (--dry-run).
	DryRun bool
	// OpenPR opens or updates the upgrade's pull request (--open-pr).
	OpenPR bool
	// Base is the pull request's base branch (--base).
	Base string
	// KeepConflicts writes the rest of a failed upgrade (--keep-conflicts).
	KeepConflicts bool
	// gateOpts are extra options for the gate (tests).
	gateOpts []gatestage.Option
	// prOpts configure the pull request step (tests).
	prOpts prOptions
}

// NewCmdUpgrade returns the upgrade command. runF replaces the run function in tests.
func NewCmdUpgrade(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "upgrade IMAGE... [--to REF] [--dry-run] [--open-pr] [--into DIR]",
		Short: "Move the pin to a newer upstream release and carry the series forward",
		Long: `Move the image's pin to REF (default: the newest final release matching
upstream.releases; a prerelease only when --to names it) and carry the
series forward, each patch to one fate:

(IMAGE may name a chart unit by its vendored directory: upgrade then
re-vendors it at REF, default the newest release, with its series applied as
the Makefile applies it, and moves the pin where it lives; a series that does
not apply writes nothing and exits 1. See docs/upgrade.md.)

  dropped    the new ref carries it (obsolete-check says present, or
             superseded): the file is deleted, the commit that landed it named
  kept       it applies at the new ref and is canonical already
  refreshed  it applies at the new ref; rewritten canonically (see refresh)
  merged     it no longer applies, but a three-way merge (the pin's file as
             base, the new ref's as ours, the patched pin as theirs) is clean:
             the rebased patch replaces it
  conflict   the merge conflicts: the conflict is shown hunk by hunk
             (expected vs found), and nothing is written (see below)

Only the pin's line moves in the spec (comments and quoting kept). When the
spec has a test, the gate runs on the new ref with the kept series, and the
tests the dropped patches owned must pass there.

Every file is written at the end, after the plan and the gate, as one
transaction under the repository lock (see docs/reliability.md): a file
edited while upgrade ran refuses the whole write ("the file changed since it
was read"), and a run killed while writing is completed by the next patchkit
command. A failed upgrade (a conflict, or the gate) writes nothing unless
--keep-conflicts asks for the rest: the pin's move and the other patches'
fates, the conflicting patches left as they were. The output lists every
file written.
--dry-run prints the plan and writes nothing. -o markdown is a pull
request's body; -o json the plan (see docs/upgrade.md).

--open-pr (for CI, see .github/workflows/obsolete-check.yaml) then commits
what was written (nothing to commit, no pull request: pass --keep-conflicts
for one that shows a conflict) on the branch patchkit/upgrade-IMAGE, pushes it to origin, and
opens a pull request with the summary as its body, or updates the body of
the one already open from that branch (GITHUB_TOKEN, GITHUB_REPOSITORY).

--into DIR (a new release branch) copies the unit into DIR instead, its
spec, pin file, version places, patch directory and other files, and
carries the series there (default: the newest final release, or the pin
when there is none newer), dropping what upstream carries and writing the
pin in DIR, in one write set; the unit itself is only read. A DIR with no
slash is beside the unit (--into 1-37 next to projects/o/r/1-36); one that
exists and is not empty is refused (exit 2).

Several IMAGEs are upgraded one after the other, each its own plan and
write (a fix carried to every release branch); the output lists each, -o
json as an array, and the exit code is the worst. --into and --open-pr take
one IMAGE.

Exit codes: 0 upgraded (or already at the newest release); 1 a patch
conflicts or the gate fails (nothing written, or with --keep-conflicts the
rest); 2 bad input, or a file changed while upgrade ran.`,
		Args: cobra.MinimumNArgs(1),
	}
	cmdutil.NewCommand(cmd, opts, runF, cmdutil.Staged(f, run), func(_ *cobra.Command, args []string) error {
		opts.Images, opts.Image = args, args[0]
		if opts.OpenPR && opts.DryRun {
			return &cmdutil.UsageError{Err: errors.New("--open-pr and --dry-run exclude each other")}
		}
		if len(args) > 1 && (opts.Into != "" || opts.OpenPR) {
			return &cmdutil.UsageError{Err: errors.New("--into and --open-pr take one IMAGE")}
		}
		if opts.Into != "" && opts.OpenPR {
			return &cmdutil.UsageError{Err: errors.New("--into creates a new unit: commit it with the repository's own review, not --open-pr")}
		}
		return nil
	})
	cmd.Flags().StringVar(&opts.To, "to", "", "upstream ref to move to (default: the newest final release matching upstream.releases)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print the plan and write nothing")
	cmd.Flags().BoolVar(&opts.OpenPR, "open-pr", false, "commit on patchkit/upgrade-IMAGE, push, and open or update its pull request")
	cmd.Flags().StringVar(&opts.Base, "base", "", "base branch of the pull request (default: the branch checked out)")
	cmd.Flags().StringVar(&opts.Into, "into", "", "copy the unit into this new directory (beside the unit when it has no slash) and carry the series there; the unit is left as it is")
	cmd.Flags().BoolVar(&opts.KeepConflicts, "keep-conflicts", false, "when a patch conflicts or the gate fails, write the rest of the upgrade anyway (conflicting patches left as they were)")
	return cmd
}

func run(ctx context.Context, opts *Options, format report.Format, env pipeline.Env) error {
	if len(opts.Images) <= 1 {
		return runOne(ctx, opts, format, env)
	}
	// Several units: each is upgraded on its own, and one that fails is
	// an entry of the report.
	r := opts.Factory.Runner(env)
	r.Alone = true
	units, err := pipeline.Each(ctx, r, opts.Images, func(ctx context.Context, name string) (report.Result, error) {
		if u, err := chart.Find(env.Root, name); err != nil {
			return nil, err
		} else if u != nil {
			return nil, &diag.InputError{File: name, Msg: "a chart unit is upgraded on its own: patchkit upgrade " + name}
		}
		one := *opts
		one.Image = name
		res, _, err := upgradeImage(ctx, &one, env)
		return res, err
	})
	if err != nil {
		return err
	}
	out := report.Units{Name: "upgrade"}
	worst := pipeline.Worst(units)
	for _, u := range units {
		if u.Err != nil {
			out.Results = append(out.Results, report.UnitFailed{Image: u.Name, Error: u.Err.Error(), ExitCode: cmdutil.ExitCode(u.Err), Verb: "not upgraded"})
			continue
		}
		if up, ok := u.Result.(report.Upgrade); ok && !up.OK {
			worst = max(worst, cmdutil.ExitFindings)
		}
		out.Results = append(out.Results, u.Result)
	}
	if err := report.Export(opts.Factory.IO.Out, format, out); err != nil {
		return err
	}
	return diag.Exit(worst)
}

// runOne is the upgrade of one IMAGE: its result printed as one object.
func runOne(ctx context.Context, opts *Options, format report.Format, env pipeline.Env) error {
	f := opts.Factory
	if u, err := chart.Find(env.Root, opts.Image); err != nil {
		return err
	} else if u != nil {
		if opts.Into != "" {
			return &diag.InputError{File: "--into", Msg: "a chart unit's directory is vendored: --into copies an image unit"}
		}
		return upgradeChart(ctx, f, env, format, u, opts)
	}
	res, up, err := upgradeImage(ctx, opts, env)
	if err != nil {
		return err
	}
	if up == nil {
		return report.Export(f.IO.Out, format, res)
	}
	out := *up
	if err := report.RenderUpgrade(f.IO.Out, format, out); err != nil {
		return err
	}
	if opts.OpenPR && len(out.Written) > 0 {
		if err := openPR(ctx, env.Root, opts, out); err != nil {
			return err
		}
	}
	if !out.OK {
		return diag.ErrFindings
	}
	return nil
}

// upgradeImage upgrades the image unit opts.Image (into opts.Into when
// set) and prints nothing: its result is an UpToDate, or an Upgrade (up).
func upgradeImage(ctx context.Context, opts *Options, env pipeline.Env) (report.Result, *report.Upgrade, error) {
	f := opts.Factory
	into := ""
	if opts.Into != "" {
		u, err := spec.Find(env.Root, opts.Image)
		if err != nil {
			return nil, nil, err
		}
		if into, err = upgradestage.IntoDir(env.Root, u.Dir, opts.Into); err != nil {
			return nil, nil, err
		}
	}
	res, err := pipeline.One(ctx, f.Runner(env), opts.Image, func(ctx context.Context, im *pipeline.Image) (*upgradestage.Outcome, error) {
		return upgradestage.Run(ctx, upgradestage.Request{
			Root: env.Root, Cache: im.Cache, Spec: im.Spec, PinCommit: im.Commit, Patches: im.Patches,
			To: opts.To, DryRun: opts.DryRun, KeepConflicts: opts.KeepConflicts, Offline: f.Offline, Into: into,
			GateOptions: append([]gatestage.Option{
				gatestage.WithOffline(f.Offline),
				gatestage.WithProgress(f.IO.Progress()),
			}, opts.gateOpts...),
			Txn: f.Txn(),
		})
	})
	if errors.Is(err, upgradestage.ErrUpToDate) {
		return report.UpToDate{Image: opts.Image, Message: err.Error()}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	out := report.Upgrade{Image: opts.Image, DryRun: opts.DryRun, OK: res.OK, Result: res.Result, Gate: res.Gate,
		Written: res.Written, KeepConflicts: opts.KeepConflicts}
	for _, t := range res.DroppedTests {
		out.DroppedTests = append(out.DroppedTests, report.TestStatus{Name: t.Name, Patch: t.Patch, Status: t.Status})
	}
	return out, &out, nil
}
