package verify

import (
	"context"

	"github.com/patchkit/patchkit/internal/chart"
	"github.com/patchkit/patchkit/internal/pipeline"
	verifystage "github.com/patchkit/patchkit/internal/verify"
)

// verifyCharts runs the chart units' checks (vendored, chart-pin), as
// verify results named by the unit's directory.
func verifyCharts(ctx context.Context, env pipeline.Env, units []*chart.Unit) ([]verifystage.Result, bool, error) {
	f := chart.NewFetcher(env.Root, env.CacheDir, env.Offline)
	f.Timeout = env.FetchTimeout
	var out []verifystage.Result
	failed := false
	for _, u := range units {
		res, err := f.Verify(ctx, u)
		if err != nil {
			return nil, false, err
		}
		r := verifystage.Result{Image: res.Unit, Unit: res.Unit, Pin: res.Pin, OK: res.OK}
		for _, c := range res.Checks {
			r.Checks = append(r.Checks, verifystage.Check{Patch: c.File, Check: c.Check, Status: c.Status, Message: c.Message, Line: c.Line, Cause: c.Cause, Files: c.Files})
		}
		failed = failed || !res.OK
		out = append(out, r)
	}
	return out, failed, nil
}
