package obsolete

import (
	"context"

	"github.com/patchkit/patchkit/internal/chart"
	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/report"
	"github.com/patchkit/patchkit/internal/untrusted"
)

// scanCharts runs obsolete-check on chart units: each patch at each
// release after the pin (chart.Fetcher.Scan). A release asset lists no
// releases: such a unit is left out. With alone (a run of several units),
// a unit that cannot be scanned (its releases cannot be listed, a release
// cannot be fetched) fails alone, as an image unit does: its result names
// it and the reason, r.Failed is told, and the next unit is scanned; worst
// is the worst exit code of those errors. Without alone, and when ctx is
// done, the error ends the run. The units whose spec entry does not load
// (bad) are reported the same way, after the others.
func scanCharts(ctx context.Context, env pipeline.Env, r pipeline.Runner, p *cmdutil.UnitProgress, units []*chart.Unit, bad []chart.UnitError, alone bool) (out []report.Obsolete, worst int, err error) {
	f := chart.NewFetcher(env.Root, env.CacheDir, env.Offline)
	f.Timeout = env.FetchTimeout
	fail := func(dir string, err error) {
		if r.Failed != nil {
			r.Failed(dir, err)
		}
		out = append(out, report.Obsolete{Image: dir, Unit: dir, Error: untrusted.Error(err), ExitCode: cmdutil.ExitCode(err)})
		worst = max(worst, diag.ExitCode(err))
	}
	for _, u := range units {
		if u.Kind() == chart.KindURL {
			continue
		}
		p.Step(u.Dir, "listing the releases of "+untrusted.Redact(u.URL()))
		rep, err := f.Scan(ctx, u)
		if err != nil {
			if !alone || ctx.Err() != nil {
				return nil, 0, err
			}
			fail(u.Dir, err)
			continue
		}
		o := report.Obsolete{Image: u.Dir, Unit: u.Dir, Report: rep}
		p.Done(u.Dir, verdict(o))
		out = append(out, o)
	}
	for _, b := range bad {
		fail(b.Dir, b.Err)
	}
	return out, worst, nil
}
