// Package gate is the `patchkit gate` command.
package gate

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
	gatestage "github.com/patchkit/patchkit/internal/gate"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/report"
)

// Options are the flags and dependencies of `patchkit gate`.
type Options struct {
	Factory *cmdutil.Factory
	Image   string
	// gateOpts are extra options for the gate (tests).
	gateOpts []gatestage.Option
}

// NewCmdGate returns the gate command. runF replaces the run function in tests.
func NewCmdGate(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "gate IMAGE",
		Short: "Run the image's regression test and check which patch owns which subtest",
		Long: `Run the regression test of the image's spec (test.package, test.run) on the
patched tree, with the test.inject files added: 'go test -json -count=1
-trimpath' (-trimpath unless GOFLAGS already sets it either way, so the build
cache is shared between runs and only changed packages compile). The
gate passes only if the named test ran and passed with all its subtests; a
-run pattern that matches nothing is a failure.

Then check ownership: the test must fail on the unpatched pin, and with each
patch dropped in turn, the subtests that go red must be exactly those the
patch's Test: header names. The patch × subtest matrix is printed.

The go command's environment passes through (GOCACHE, GOPATH, GOPROXY,
GOFLAGS); with --offline, GOPROXY=off.

Exit codes: 0 the gate passed and every patch owns its tests; 1 the test
failed, or an ownership finding; 2 bad input.`,
		Args: cobra.ExactArgs(1),
	}
	return cmdutil.NewCommand(cmd, opts, runF, cmdutil.Staged(f, run), func(_ *cobra.Command, args []string) error {
		opts.Image = args[0]
		return nil
	})
}

// run gates the image. A damaged cache is never a verdict: online it is
// repaired and the gate run again (every read of the cache comes before
// anything is printed); offline it is exit 2.
func run(ctx context.Context, opts *Options, format report.Format, env pipeline.Env) error {
	f := opts.Factory
	env.Shallow = true // reads the pin's tree, not its history
	r := f.Runner(env)
	r.Repair = true
	out, err := pipeline.One(ctx, r, opts.Image, func(ctx context.Context, im *pipeline.Image) (outcome, error) {
		g, err := gatestage.New(env.Root, im.Spec, append([]gatestage.Option{
			gatestage.WithOffline(f.Offline),
			gatestage.WithProgress(f.IO.Progress()),
		}, opts.gateOpts...)...)
		if err != nil {
			return outcome{}, err
		}
		res, src, err := im.Apply()
		if err != nil {
			return outcome{}, err
		}
		up := report.UpstreamRef{URL: im.URL, Ref: im.Ref, Commit: im.Commit}
		if !res.OK {
			// The gate cannot run on a series that does not apply: say why.
			return outcome{apply: &report.Apply{Image: im.Name, Upstream: up, OK: false, Patches: res.Patches}}, nil
		}
		full, own, err := g.Check(ctx, src, res.Changes, im.Patches)
		if err != nil {
			return outcome{}, err
		}
		gate := report.NewGate(im.Name, up, g, full, own)
		return outcome{gate: &gate}, nil
	})
	if err != nil {
		return err
	}
	if out.apply != nil {
		if err := report.RenderApply(f.IO.Out, format, []report.Apply{*out.apply}, true); err != nil {
			return err
		}
		return diag.ErrFindings
	}
	if err := report.RenderGate(f.IO.Out, format, []report.Gate{*out.gate}, true); err != nil {
		return err
	}
	if !out.gate.OK {
		return diag.ErrFindings
	}
	return nil
}

// outcome is what the gate of one image gives to render: the series that
// does not apply, or the gate's run.
type outcome struct {
	apply *report.Apply
	gate  *report.Gate
}
