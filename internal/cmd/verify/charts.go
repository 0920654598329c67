package verify

import (
	"context"

	"github.com/patchkit/patchkit/internal/chart"
	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/untrusted"
	verifystage "github.com/patchkit/patchkit/internal/verify"
)

// verifyCharts runs the chart units' checks (vendored, chart-pin), as
// verify results named by the unit's directory. With alone (a run of
// several units), a unit whose checks cannot run (its upstream cannot be
// reached, its pin cannot be read) fails alone, as an image unit does: its
// result names it and the reason in one failed vendored check, r.Failed is
// told, and the next unit is verified; worst is the worst exit code of
// those errors. Without alone, and when ctx is done, the error ends the
// run. The units whose spec entry does not load (bad) are reported the
// same way, after the others.
func verifyCharts(ctx context.Context, env pipeline.Env, r pipeline.Runner, p *cmdutil.UnitProgress, units []*chart.Unit, bad []chart.UnitError, alone bool) (out []verifystage.Result, failed bool, worst int, err error) {
	f := chart.NewFetcher(env.Root, env.CacheDir, env.Offline)
	f.Timeout = env.FetchTimeout
	fail := func(b chart.UnitError) {
		if r.Failed != nil {
			r.Failed(b.Dir, b.Err)
		}
		msg := untrusted.Error(b.Err)
		out = append(out, verifystage.Result{Image: b.Dir, Unit: b.Dir, Error: msg, ExitCode: cmdutil.ExitCode(b.Err), Checks: []verifystage.Check{{
			Patch: b.Spec, Line: b.Line, Check: chart.CheckVendored, Status: verifystage.StatusFail, Message: "not verified: " + msg}}})
		failed, worst = true, max(worst, diag.ExitCode(b.Err))
	}
	for _, u := range units {
		p.Step(u.Dir, "verifying "+untrusted.Redact(u.URL()))
		res, err := f.Verify(ctx, u)
		if err != nil {
			if !alone || ctx.Err() != nil {
				return nil, false, 0, err
			}
			fail(chart.UnitError{Dir: u.Dir, Spec: u.Spec, Line: u.Line, Err: err})
			continue
		}
		vr := verifystage.Result{Image: res.Unit, Unit: res.Unit, Pin: res.Pin, OK: res.OK}
		for _, c := range res.Checks {
			vr.Checks = append(vr.Checks, verifystage.Check{Patch: c.File, Check: c.Check, Status: c.Status, Message: c.Message, Line: c.Line, Cause: c.Cause, Files: c.Files})
		}
		p.Done(u.Dir, verdict(vr))
		failed = failed || !res.OK
		out = append(out, vr)
	}
	for _, b := range bad {
		fail(b)
	}
	return out, failed, worst, nil
}
