// Package obsolete is the `patchkit obsolete-check` command.
package obsolete

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/patchkit/patchkit/internal/chart"
	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
	obsoletestage "github.com/patchkit/patchkit/internal/obsolete"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/report"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/untrusted"
)

// Options are the flags and dependencies of `patchkit obsolete-check`.
type Options struct {
	Factory *cmdutil.Factory
	// Images are the images named; none means every image under images/.
	Images []string
	// Refs replaces the releases and branches of the spec (--refs).
	Refs []string
	// Write records Applied-Upstream in the patches found present (--write).
	Write bool
}

// listBound is how many upstreams a run lists (and fetches) at once
// (pipeline.Prefetch).
var listBound = 4

// NewCmdObsolete returns the obsolete-check command. runF replaces the run
// function in tests.
func NewCmdObsolete(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "obsolete-check [IMAGE...] [--refs REF,...] [--write]",
		Short: "Find which upstream releases make each patch obsolete",
		Long: `Chart units (patchkit-charts.yaml) are scanned too: their releases after the
pin (a Helm repository's index.yaml, an OCI chart's tags, the git tags their
tag template names), each patch applies, present or conflict as the
Makefile's tool sees it.

Scan the upstream refs newer than the pin and give every patch a status at
each: the tags matching upstream.releases that are newer than the pin, in
semantic-version order (tags that are not semantic versions follow, by
commit date, flagged), then upstream.branches. With a commit id as pin, the
tags scanned are those that contain it, and the higher versions than the
latest release it contains; the others are listed as skipped. --refs scans
the refs given instead. The upstream cache is refreshed once per run, not
with --offline.

Each patch is tested as git would apply the series: on the ref's tree, with
the earlier patches that are still needed applied first, then hunk by hunk.
A hunk is there when it reverse-applies, or when its lines are there in its
own context (added lines in place, removed lines gone) and the commit that
landed them is in the ref.

  applies     the ref still needs the patch, and it applies (offsets shown)
  present     the change is there: the patch reverse-applies cleanly, or
              every hunk is still there and upstream landed this change
              (a commit with the same patch-id, or one where it
              reverse-applied; named)
  partial     some hunks are there, the others are not (named)
  superseded  every hunk is there in upstream's own version, or at least
              two thirds of its changed lines are upstream (added lines not
              already in the file at the pin, removed lines gone); the
              commit that landed them is named
  conflict    nothing of it is upstream and it does not apply: it needs a
              refresh (the failing hunk is shown)

The first scanned final release (a tag, not a prerelease) where a patch is
present or superseded obsoletes it; a prerelease that carried it first is
shown beside it. --write records that release as the Applied-Upstream
header of each patch found present there; if a write fails, the error
lists the files already written.

In a run of several units, image or chart, a unit that cannot be checked
(its upstream cannot be reached) fails alone: it is reported with the
reason ("not checked: ..."), the others are checked, and the exit is the
worst status. Stderr says each unit as it finishes (on a terminal, also
each step); stdout is the report only.

Exit codes: 0 every patch applies at every scanned ref; 1 a patch is
present, partial, superseded or in conflict somewhere; 2 bad input.`,
	}
	cmdutil.NewCommand(cmd, opts, runF, cmdutil.Staged(f, run), func(_ *cobra.Command, args []string) error {
		opts.Images = args
		if f.UpstreamURL != "" && len(args) != 1 {
			return &cmdutil.UsageError{Err: errors.New("--upstream-url replaces the upstream of one image: name exactly one IMAGE")}
		}
		return nil
	})
	cmd.Flags().StringSliceVar(&opts.Refs, "refs", nil, "scan these upstream refs (tags, branches or commit ids), in this order, instead of the releases and branches of the spec")
	cmd.Flags().BoolVar(&opts.Write, "write", false, "add or update the Applied-Upstream header of each patch found present in a release")
	return cmd
}

func run(ctx context.Context, opts *Options, format report.Format, env pipeline.Env) error {
	f := opts.Factory
	env.Units = spec.NewDiscovery(env.Root) // one tree walk for every unit
	charts, images, badCharts, err := f.SelectAlone(env.Units, opts.Images)
	if err != nil {
		return err
	}
	// A damaged cache is no verdict: online it is repaired and the image
	// checked again; offline it is exit 2. One bad unit of several fails
	// alone: the others are still checked, and the run exits with the
	// worst status. Chart units fail alone too. A run of several units
	// says each unit on stderr as it finishes (and, on a terminal, each
	// step).
	scanned := 0 // the chart units scanned (a release asset lists no releases)
	for _, u := range charts {
		if u.Kind() != chart.KindURL {
			scanned++
		}
	}
	if len(images)+scanned == 0 && len(badCharts) == 1 {
		return badCharts[0].Err // the one unit: its error is the run's
	}
	alone := len(images)+scanned+len(badCharts) > 1
	p := f.UnitProgress(len(images) + scanned + len(badCharts))
	r := f.Runner(env)
	r.Repair, r.Alone = true, alone
	r.Failed = p.Failed(r.Failed)
	// The units' upstreams are listed (and fetched) listBound at a time
	// first; each unit then takes what was found for it.
	pre := pipeline.Prefetch(ctx, env, images, listBound, func(ctx context.Context, name string) (report.Obsolete, bool, error) {
		return unscanned(ctx, env, name, opts)
	})
	// Each unit takes the image Prefetch prepared and fetched for it, so
	// that its cache is opened once; those not taken are closed. A unit
	// runs as soon as Prefetch is done with its cache, while it lists the
	// next ones. --write changes patch files that another unit's series
	// may share: the units then wait for Prefetch, and prepare afresh.
	defer pre.Close()
	if opts.Write {
		pre.Wait()
	} else {
		r.Prepared = pre.Take
	}
	var written []obsoletestage.Written
	units, err := pipeline.Each(ctx, r, images, func(ctx context.Context, name string) (report.Obsolete, error) {
		// A unit with nothing to scan is answered from the upstream's
		// listing, with no history fetched (issue 24).
		if out, ok, err := pre.Quick(ctx, name); err != nil || ok {
			if err == nil {
				p.Done(name, verdict(out))
			}
			return out, err
		}
		ur := r
		ur.Env.Step = func(step string) { p.Step(name, step) }
		res, err := pipeline.With(ctx, ur, name, func(ctx context.Context, im *pipeline.Image) (report.Obsolete, error) {
			return checkImage(ctx, ur.Env, im, opts, pre)
		})
		if err == nil {
			p.Done(name, verdict(res))
		}
		if we := (*obsoletestage.WriteError)(nil); errors.As(err, &we) {
			// Say what the earlier images wrote too.
			return res, pipeline.Stop(&obsoletestage.WriteError{Written: append(written, we.Written...), Err: we.Err})
		}
		written = append(written, res.Written...)
		return res, err
	})
	pre.Close() // before the chart units (a chart's tags may use a cache)
	if err != nil {
		return err
	}
	var results []report.Obsolete
	findings := false
	for _, u := range units {
		if u.Err != nil {
			results = append(results, report.Obsolete{Image: u.Name, Unit: u.Dir, Error: untrusted.Error(u.Err), ExitCode: cmdutil.ExitCode(u.Err)})
			continue
		}
		findings = findings || u.Result.Report.Findings()
		results = append(results, u.Result)
	}
	chartResults, chartsWorst, err := scanCharts(ctx, env, r, p, charts, badCharts, alone)
	if err != nil {
		return err
	}
	for _, r := range chartResults {
		findings = findings || (r.Report != nil && r.Report.Findings())
	}
	results = append(results, chartResults...)
	if err := report.RenderObsolete(f.IO.Out, format, results, len(opts.Images) == 1 && len(results) == 1); err != nil {
		return err
	}
	worst := max(pipeline.Worst(units), chartsWorst)
	if findings {
		worst = max(worst, cmdutil.ExitFindings)
	}
	return diag.Exit(worst)
}

// checkImage refreshes the image's upstream cache once per run (pre
// remembers the URLs done), scans it and, with --write, records the
// Applied-Upstream headers.
func checkImage(ctx context.Context, env pipeline.Env, im *pipeline.Image, opts *Options, pre *pipeline.Prefetched[report.Obsolete]) (report.Obsolete, error) {
	root := env.Root
	env.At("fetching " + untrusted.Redact(im.URL))
	if err := pre.Fetch(ctx, im); err != nil {
		return report.Obsolete{}, err
	}
	env.At(fmt.Sprintf("scanning %d patch(es)", len(im.Patches)))
	rep, err := obsoletestage.Check(ctx, obsoletestage.Input{
		Cache: im.Cache, Spec: im.Spec, PinCommit: im.Commit, Patches: im.Patches, Refs: opts.Refs,
	})
	if err != nil {
		return report.Obsolete{}, im.Cache.AsFault(err)
	}
	out := report.Obsolete{Image: im.Name, Unit: im.Spec.Dir, Report: rep, Write: opts.Write}
	if opts.Write {
		if out.Written, err = obsoletestage.WriteHeaders(ctx, root, rep, opts.Factory.Txn()); err != nil {
			return report.Obsolete{}, err
		}
	}
	return out, nil
}

// verdict is a unit's line of progress: its patches and refs, and how
// many patches have a finding ("2 patch(es) at 3 ref(s): 1 with findings").
func verdict(o report.Obsolete) string {
	if o.Report == nil {
		return "not checked"
	}
	n := 0
	for _, p := range o.Report.Patches {
		for _, r := range p.Results {
			if r.Finding() {
				n++
				break
			}
		}
	}
	v := fmt.Sprintf("%d patch(es) at %d ref(s)", len(o.Report.Patches), len(o.Report.Refs))
	if n == 0 {
		return v + ": every patch applies"
	}
	return fmt.Sprintf("%s: %d with findings", v, n)
}
