package obsolete

import (
	"context"

	"github.com/patchkit/patchkit/internal/chart"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/report"
)

// scanCharts runs obsolete-check on chart units: each patch at each
// release after the pin (chart.Fetcher.Scan). A release asset lists no
// releases: such a unit is left out.
func scanCharts(ctx context.Context, env pipeline.Env, units []*chart.Unit) ([]report.Obsolete, error) {
	f := chart.NewFetcher(env.Root, env.CacheDir, env.Offline)
	f.Timeout = env.FetchTimeout
	var out []report.Obsolete
	for _, u := range units {
		if u.Kind() == chart.KindURL {
			continue
		}
		rep, err := f.Scan(ctx, u)
		if err != nil {
			return nil, err
		}
		out = append(out, report.Obsolete{Image: u.Dir, Unit: u.Dir, Report: rep})
	}
	return out, nil
}
