// Package status is the `patchkit status` command.
package status

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/ghapi"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/report"
	"github.com/patchkit/patchkit/internal/spec"
	statusstage "github.com/patchkit/patchkit/internal/status"
	"github.com/patchkit/patchkit/internal/untrusted"
)

// Options are the flags and dependencies of `patchkit status`.
type Options struct {
	Factory *cmdutil.Factory
	// Images are the units named; none means every unit.
	Images []string
	// Issue keeps the dashboard issue up to date (--issue).
	Issue bool
	// Repo is the GitHub repository of the dashboard issue (--repo),
	// default $GITHUB_REPOSITORY.
	Repo string
}

// NewCmdStatus returns the status command. runF replaces the run function in
// tests.
func NewCmdStatus(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "status [IMAGE...] [--issue [--repo OWNER/NAME]]",
		Short: "Show the patch debt: pins behind upstream, patches to drop, patches nobody forwarded",
		Long: `Report on every image unit (or those named): its pin, the newest upstream
release matching upstream.releases and how many releases behind the pin is;
for each patch, when the repository added it (its git history, first
parents) and how many pin changes it has survived, its obsolete-check
verdict at the newest release (obsoletedBy and the commit), and its link
upstream with its state:

  commit  a backport (Origin): the first release that has the commit, or
          the release obsolete-check found carrying it
  pr      Origin names a PR, or Forwarded: is a PR URL: open, merged (in
          which release) or closed, from the GitHub API
  issue   a Bug: URL of a GitHub issue: open or closed
  none    an original change that upstream was never told about

Findings: droppable (the newest release carries it), no-upstream and no-pr
(an original change with no upstream PR: carried forever until forwarded,
see patchkit forward), pr-closed-unmerged, conflict. The history is the
number of carried patches after each commit of the repository that touched a
series, per unit and in total.

-o text, json, markdown (an issue body) or html (one self-contained page
with an SVG chart, nothing fetched). --issue writes the markdown into one
open issue titled "` + report.StatusTitle + `" of --repo (default
$GITHUB_REPOSITORY), creating it when missing; it needs GITHUB_TOKEN.
GitHub is asked with GITHUB_TOKEN (else GH_TOKEN) at GITHUB_API_URL; with
--offline nothing is asked and PR and issue states are unknown.

Exit codes: 0 the report was made (findings included: it is a dashboard);
2 bad input, or the dashboard issue could not be written. A unit that cannot
be reported on (its upstream unreachable, a bad spec) is a line of the report
with its error, and the run exits 2 after printing it.`,
	}
	cmdutil.NewCommand(cmd, opts, runF, run, func(_ *cobra.Command, args []string) error {
		opts.Images = args
		if opts.Repo != "" && !opts.Issue {
			return &cmdutil.UsageError{Err: errors.New("--repo names the repository of the dashboard issue: give --issue too")}
		}
		if opts.Issue && f.Offline {
			return &cmdutil.UsageError{Err: errors.New("--issue writes to GitHub: it cannot run with --offline")}
		}
		return nil
	})
	cmd.Flags().BoolVar(&opts.Issue, "issue", false, "create or update the dashboard issue with the markdown report")
	cmd.Flags().StringVar(&opts.Repo, "repo", "", "the GitHub repository (OWNER/NAME) of the dashboard issue (default $GITHUB_REPOSITORY)")
	return cmd
}

func run(ctx context.Context, opts *Options) error {
	f := opts.Factory
	format, err := report.ParseStatusFormat(f.Output)
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	env, err := f.Env()
	if err != nil {
		return err
	}
	var owner, repo string
	if opts.Issue {
		full := opts.Repo
		if full == "" {
			full = os.Getenv("GITHUB_REPOSITORY")
		}
		var ok bool
		if owner, repo, ok = strings.Cut(full, "/"); !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
			return &cmdutil.UsageError{Err: fmt.Errorf("--issue: --repo %q (or $GITHUB_REPOSITORY): want OWNER/NAME", full)}
		}
	}
	images, err := f.Images(env.Root, opts.Images)
	if err != nil {
		return err
	}
	so := statusstage.Options{Root: env.Root}
	var gh *ghapi.Client
	if !env.Offline {
		if gh, err = ghapi.FromEnv(ghapi.WithTimeout(env.FetchTimeout)); err != nil {
			return &cmdutil.UsageError{Err: err}
		}
		so.GitHub = statusstage.Memo(gh)
	}
	rep := &statusstage.Report{}
	fetched := map[string]bool{}
	// One unit's failure is a line of the dashboard, not the end of it;
	// the run still exits 2 once the report is out.
	r := pipeline.Runner{Env: env, Repair: true, Alone: len(images) > 1}
	units, err := pipeline.Run(ctx, r, images, func(ctx context.Context, im *pipeline.Image) (*statusstage.Unit, error) {
		return unit(ctx, im, so, fetched)
	})
	if err != nil {
		return err
	}
	var failed []error
	for _, u := range units {
		if u.Err == nil {
			rep.Units = append(rep.Units, *u.Result)
			continue
		}
		failed = append(failed, fmt.Errorf("%s: %w", u.Name, u.Err))
		dir := u.Name
		if s, err := spec.Load(env.Root, u.Name); err == nil {
			dir = s.Dir
		}
		rep.Units = append(rep.Units, statusstage.Unit{Name: u.Name, Dir: dir, Releases: []string{}, Patches: []statusstage.Patch{}, History: []statusstage.Point{}, Error: untrusted.Error(u.Err)})
	}
	rep.History = statusstage.Total(rep.Units)
	rep.Shared = statusstage.Share(rep.Units)
	if opts.Issue {
		d, err := gh.UpsertIssue(ctx, owner, repo, report.StatusTitle, report.StatusMarkdown(rep))
		if err != nil {
			return fmt.Errorf("the dashboard issue: %w", err)
		}
		verb := "unchanged"
		switch {
		case d.Created:
			verb = "created"
		case d.Changed:
			verb = "updated"
		}
		fmt.Fprintf(f.IO.ErrOut, "dashboard issue #%d %s: %s\n", d.Number, verb, d.URL)
	}
	if err := report.RenderStatus(f.IO.Out, format, rep); err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d units could not be reported on: %w", len(failed), len(images), errors.Join(failed...))
	}
	return nil
}

// unit refreshes the unit's upstream cache once per run (fetched
// remembers the URLs done) and collects its status.
func unit(ctx context.Context, im *pipeline.Image, so statusstage.Options, fetched map[string]bool) (*statusstage.Unit, error) {
	if !fetched[im.URL] {
		if err := im.Cache.Fetch(ctx); err != nil {
			return nil, err
		}
		fetched[im.URL] = true
	}
	u, err := statusstage.CollectUnit(ctx, statusstage.UnitInput{Cache: im.Cache, Spec: im.Spec, PinCommit: im.Commit, Patches: im.Patches}, so)
	if err != nil {
		return nil, im.Cache.AsFault(err)
	}
	return u, nil
}
