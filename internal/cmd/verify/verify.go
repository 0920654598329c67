// Package verify is the `patchkit verify` command.
package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/ghapi"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/report"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/untrusted"
	verifystage "github.com/patchkit/patchkit/internal/verify"
)

// Options are the flags and dependencies of `patchkit verify`.
type Options struct {
	Factory *cmdutil.Factory
	// Images are the images named; none means every image under images/.
	Images []string
	// Online takes upstream diffs from GitHub (--online).
	Online bool
	// GitHub gives the diffs with --online; nil means a client from the
	// environment (GITHUB_TOKEN, GITHUB_API_URL).
	GitHub verifystage.CommitDiffer
	// Scanner decides the applied-upstream check; nil means the
	// obsolete-check engine.
	Scanner verifystage.ReleaseScanner
}

// NewCmdVerify returns the verify command. runF replaces the run function in tests.
func NewCmdVerify(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "verify [IMAGE...] [--online]",
		Short: "Check an image's patch series for a pull request",
		Long: `Check each patch of the images named (every image under images/ when none
is), and report each check as pass, fail, warn or skip:

  apply             the series applies to the pin, as one git apply would
  whitespace        no added line has one of git's default whitespace errors
  header            the fields parse; Origin upstream or backport names a
                    commit; Origin vendor says Forwarded (else a warning);
                    no field that reads like a commit reference goes unread
  backport          a patch naming an upstream commit is identical to its
                    diff (but for @@ lines and index lines), equivalent
                    (same resulting files), or differs (with the interdiff
                    both ways): differs fails for Origin: upstream and warns
                    for Origin: backport; a commit upstream lacks fails
  applied-upstream  Applied-Upstream: vX holds when vX carries the change
                    and the release before it does not
  test              injected test files exist, their directories exist in
                    the patched tree, and Test: names are unique

Chart units (patchkit-charts.yaml, see docs/spec.md) are verified too, and
an IMAGE argument may name one by its vendored directory:

  vendored          the directory equals the upstream at the pin plus the
                    series, applied as the Makefile applies it (GNU patch or
                    git apply), byte for byte; a failure names the files and
                    the cause: the series fails to apply, the upstream
                    version differs, or a file was edited by hand
  chart-pin         warns when the chart's image unit is built from another
                    upstream version than the chart's

The upstream diff comes from the upstream cache, or with --online from
GitHub (GITHUB_TOKEN when set; GITHUB_API_URL for Enterprise Server).
-o github writes annotations, and appends a markdown summary to
$GITHUB_STEP_SUMMARY when it is set. Exit 1 when a check fails.

In a run of several units, a unit that cannot be verified (its upstream,
git or Helm, cannot be reached) fails alone: it is reported with the
reason ("not verified: ..."), the others are verified, and the exit is the
worst status. Stderr says each unit as it finishes (on a terminal, also
each step); stdout is the report only.`,
	}
	cmdutil.NewCommand(cmd, opts, runF, cmdutil.Staged(f, run), func(_ *cobra.Command, args []string) error {
		opts.Images = args
		if opts.Online && f.Offline {
			return &cmdutil.UsageError{Err: errors.New("--online and --offline exclude each other")}
		}
		if f.UpstreamURL != "" && len(args) != 1 {
			return &cmdutil.UsageError{Err: errors.New("--upstream-url needs exactly one IMAGE")}
		}
		return nil
	})
	cmd.Flags().BoolVar(&opts.Online, "online", false, "get upstream commit diffs from the GitHub API (GITHUB_TOKEN when set)")
	return cmd
}

func run(ctx context.Context, opts *Options, format report.Format, env pipeline.Env) error {
	f := opts.Factory
	charts, images, badCharts, err := f.SelectAlone(spec.NewDiscovery(env.Root), opts.Images)
	if err != nil {
		return err
	}
	if len(images)+len(charts) == 0 && len(badCharts) == 1 {
		return badCharts[0].Err // the one unit: its error is the run's
	}
	units, orphans, err := verifystage.Units(env.Root, images, len(opts.Images) == 0)
	if err != nil {
		return err
	}
	var vopts []verifystage.Option
	if opts.Scanner != nil {
		vopts = append(vopts, verifystage.WithScanner(opts.Scanner))
	}
	if opts.Online {
		gh := opts.GitHub
		if gh == nil {
			c, err := ghapi.FromEnv(ghapi.WithTimeout(env.FetchTimeout))
			if err != nil {
				return &cmdutil.UsageError{Err: err}
			}
			gh = c
		}
		vopts = append(vopts, verifystage.WithOnline(gh))
		if u, err := url.Parse(os.Getenv("GITHUB_SERVER_URL")); err == nil && u.Host != "" {
			vopts = append(vopts, verifystage.WithGitHubHost(u.Hostname()))
		}
	}
	// A damaged cache is no verdict: online it is repaired and the image
	// verified again; offline it is exit 2. One bad unit of several, image
	// or chart, fails alone; the run exits with the worst status. A run of
	// several units says each unit on stderr as it finishes (and, on a
	// terminal, each step).
	alone := len(images)+len(charts)+len(badCharts) > 1
	p := f.UnitProgress(len(images) + len(charts) + len(badCharts))
	r := f.Runner(env)
	r.Repair, r.Alone = true, alone
	r.Failed = p.Failed(r.Failed)
	done, err := pipeline.Each(ctx, r, images, func(ctx context.Context, name string) (*verifystage.Result, error) {
		uenv := env
		uenv.Step = func(step string) { p.Step(name, step) }
		res, err := verifystage.Image(ctx, uenv, name, vopts...)
		if err == nil {
			v := *res
			if c, ok := units[name]; ok {
				v.Checks = append(append([]verifystage.Check(nil), v.Checks...), c)
				v.OK = v.OK && c.Status != verifystage.StatusFail
			}
			p.Done(name, verdict(v))
		}
		return res, err
	})
	if err != nil {
		return err
	}
	results := make([]verifystage.Result, 0, len(images)+len(orphans))
	failed := len(orphans) > 0
	for _, u := range done {
		res := u.Result
		if u.Err != nil {
			msg := untrusted.Error(u.Err)
			res = &verifystage.Result{Image: u.Name, Error: msg, ExitCode: cmdutil.ExitCode(u.Err), Checks: []verifystage.Check{{
				Patch: u.File(), Check: verifystage.CheckApply, Status: verifystage.StatusFail, Message: "not verified: " + msg}}}
		}
		if c, ok := units[u.Name]; ok {
			res.Checks = append(res.Checks, c)
			res.OK = res.OK && c.Status != verifystage.StatusFail
		}
		failed = failed || !res.OK
		results = append(results, *res)
	}
	results = append(results, orphans...)
	chartResults, chartsFailed, chartsWorst, err := verifyCharts(ctx, env, r, p, charts, badCharts, alone)
	if err != nil {
		return err
	}
	results = append(results, chartResults...)
	failed = failed || chartsFailed
	if err := report.RenderVerify(f.IO.Out, format, results, len(opts.Images) == 1 && len(results) == 1); err != nil {
		return err
	}
	if format == report.GitHub {
		if err := appendSummary(os.Getenv("GITHUB_STEP_SUMMARY"), results); err != nil {
			return err
		}
	}
	worst := max(pipeline.Worst(done), chartsWorst)
	if failed {
		worst = max(worst, cmdutil.ExitFindings)
	}
	return diag.Exit(worst)
}

// appendSummary appends the markdown summary to path, when set.
func appendSummary(path string, results []verifystage.Result) error {
	if path == "" {
		return nil
	}
	var b bytes.Buffer
	if err := report.VerifySummary(&b, results); err != nil {
		return err
	}
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("writing the step summary: %w", err)
	}
	if _, err := fh.Write(b.Bytes()); err != nil {
		fh.Close()
		return fmt.Errorf("writing the step summary: %w", err)
	}
	return fh.Close()
}

// verdict is a unit's line of progress: ok or FAILED and its checks'
// statuses counted ("ok (5 pass, 1 warn)").
func verdict(r verifystage.Result) string {
	n := map[string]int{}
	for _, c := range r.Checks {
		n[c.Status]++
	}
	var parts []string
	for _, st := range []string{verifystage.StatusPass, verifystage.StatusFail, verifystage.StatusWarn, verifystage.StatusSkip} {
		if n[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[st], st))
		}
	}
	v := "ok"
	if !r.OK {
		v = "FAILED"
	}
	if len(parts) == 0 {
		return v
	}
	return v + " (" + strings.Join(parts, ", ") + ")"
}
