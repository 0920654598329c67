package upgrade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/patchkit/patchkit/internal/chart"
	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/report"
)

// upgradeChart moves a chart unit to --to (default: the newest release):
// re-vendors its directory with the series carried forward and moves its
// pin. A series that does not apply at the target is a finding (exit 1)
// and writes nothing.
func upgradeChart(ctx context.Context, f *cmdutil.Factory, env pipeline.Env, format report.Format, u *chart.Unit, opts *Options) error {
	// A chart unit's upgrade prints text or json: any other -o is refused
	// before anything is fetched.
	if err := report.CheckFormats("upgrade of a chart unit", format, report.Text, report.JSON); err != nil {
		return err
	}
	fe := chart.NewFetcher(env.Root, env.CacheDir, env.Offline)
	fe.Timeout = env.FetchTimeout
	up, want, err := fe.PlanUpgrade(ctx, u, opts.To)
	if errors.Is(err, chart.ErrNoNewer) {
		return report.Export(f.IO.Out, format, report.UpToDate{Image: u.Dir, Message: err.Error()})
	}
	if err != nil {
		return err
	}
	if len(up.Problems) == 0 && !opts.DryRun {
		if err := fe.WriteUpgradeContext(ctx, u, up, want, f.Txn()); err != nil {
			return err
		}
	}
	if format == report.JSON {
		b, err := json.MarshalIndent(up, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(f.IO.Out, "%s\n", b)
	} else {
		verb := "would move"
		if up.Written {
			verb = "moved"
		}
		if up.From == up.To { // the pin moved by hand: the directory follows it
			verb = "would re-vendor at"
			if up.Written {
				verb = "re-vendored at"
			}
			fmt.Fprintf(f.IO.Out, "%s: %s %s\n", u.Dir, verb, up.To)
		} else {
			fmt.Fprintf(f.IO.Out, "%s: %s %s -> %s\n", u.Dir, verb, up.From, up.To)
		}
		for _, p := range up.Problems {
			fmt.Fprintf(f.IO.Out, "  the series does not apply: %s\n", p)
		}
		if len(up.Files) > 0 {
			fmt.Fprintf(f.IO.Out, "  files: %s\n", strings.Join(up.Files, ", "))
		}
		for _, p := range up.Pins {
			fmt.Fprintf(f.IO.Out, "  pin: %s\n", p)
		}
		for _, d := range up.Dropped {
			fmt.Fprintf(f.IO.Out, "  dropped: %s (%s)\n", d.File, d.Evidence)
		}
		if len(up.Edited) > 0 {
			fmt.Fprintf(f.IO.Out, "  edited: %s\n", strings.Join(up.Edited, ", "))
		}
		for _, a := range up.Also {
			fmt.Fprintf(f.IO.Out, "  also: %s\n", a)
		}
	}
	if len(up.Problems) > 0 {
		return diag.ErrFindings
	}
	return nil
}
