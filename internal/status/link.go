package status

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/patchkit/patchkit/internal/ghapi"
	"github.com/patchkit/patchkit/internal/obsolete"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/untrusted"
	"github.com/patchkit/patchkit/internal/upstream"
)

// link finds a patch's upstream link and its state, and whether the patch
// is an original change:
//
//   - Origin names an upstream commit (a backport): kind commit, in the
//     first release that contains it (or, when none does, the release that
//     obsolete-check found carrying the change, as a cherry-pick);
//   - Origin names a PR, or Forwarded: is a PR URL: kind pr, its state from
//     GitHub (open, merged and in which release, closed);
//   - a Bug: URL of a GitHub issue (or PR): kind issue (or pr), its state;
//   - none of these: kind none; Forwarded: not-needed says upstream need
//     not know.
func link(ctx context.Context, in UnitInput, o Options, p *series.Patch, pr *obsolete.PatchReport) (Upstream, bool) {
	h := p.Header
	issue := ""
	for _, b := range h.Bug {
		if _, _, _, _, ok := ghapi.ParseItem(b, o.GitHubHost); ok {
			issue = b
			break
		}
	}
	if og := h.Origin; og.PR > 0 || og.Commit != "" {
		if og.PR > 0 {
			return prLink(ctx, in, o, prURL(in, og), issue), false
		}
		return commitLink(ctx, in, og, pr, issue), false
	}
	if f := h.Forwarded; strings.Contains(f, "://") {
		_, _, _, isPR, ok := ghapi.ParseItem(f, o.GitHubHost)
		switch {
		case ok && isPR:
			return prLink(ctx, in, o, f, issue), true
		case ok:
			issue = f // forwarded as an issue: follow it as one
		default:
			return Upstream{Kind: KindPR, URL: f, State: StateUnknown, Issue: issue, Note: "Forwarded: is not a GitHub pull request or issue URL"}, true
		}
	}
	if issue != "" {
		owner, repo, n, isPR, _ := ghapi.ParseItem(issue, o.GitHubHost)
		u := Upstream{Kind: KindIssue, URL: issue, State: StateUnknown}
		if isPR {
			return prLink(ctx, in, o, issue, ""), true
		}
		it, note := lookup(ctx, o, owner, repo, n, false)
		if note != "" {
			u.Note = note
			return u, true
		}
		if it.PR {
			return prLink(ctx, in, o, issue, ""), true
		}
		u.State, u.Title, u.User = it.State, it.Title, it.User
		return u, true
	}
	u := Upstream{Kind: KindNone, State: StateNotFiled}
	if strings.EqualFold(h.Forwarded, "not-needed") {
		u.State = StateNotNeeded
	}
	return u, true
}

// prURL is the web URL of Origin's PR: its URL, or #N on the upstream.
func prURL(in UnitInput, o series.Origin) string {
	if o.URL != "" {
		return o.URL
	}
	if owner, repo, ok := ghapi.ParseRepo(in.Spec.Upstream.URL, ""); ok {
		return fmt.Sprintf("https://github.com/%s/%s/pull/%d", owner, repo, o.PR)
	}
	return fmt.Sprintf("#%d", o.PR)
}

// commitLink is a backport's link: its commit, and the first release that
// has it.
func commitLink(ctx context.Context, in UnitInput, o series.Origin, pr *obsolete.PatchReport, issue string) Upstream {
	u := Upstream{Kind: KindCommit, URL: o.URL, Commit: o.Commit, Issue: issue, State: StateUnknown}
	if u.URL == "" {
		if owner, repo, ok := ghapi.ParseRepo(in.Spec.Upstream.URL, ""); ok {
			u.URL = fmt.Sprintf("https://github.com/%s/%s/commit/%s", owner, repo, o.Commit)
		}
	}
	rel, err := firstRelease(ctx, in, o.Commit)
	switch {
	case err != nil:
		u.Note = "upstream cache: " + untrusted.Error(err)
	case rel != "":
		u.State, u.Release = StateReleased, rel
	default:
		u.State = StateUnreleased
	}
	if u.Release == "" && pr.ObsoletedBy != "" {
		u.State, u.Release = StateReleased, pr.ObsoletedBy
		u.Note = fmt.Sprintf("%s carries the change as %s", pr.ObsoletedBy, obsolete.Short(pr.Commit))
	}
	return u
}

// prLink is a PR's link and state, from GitHub.
func prLink(ctx context.Context, in UnitInput, o Options, url, issue string) Upstream {
	u := Upstream{Kind: KindPR, URL: url, State: StateUnknown, Issue: issue}
	owner, repo, n, _, ok := ghapi.ParseItem(url, o.GitHubHost)
	if !ok {
		u.Note = "not a GitHub pull request URL"
		return u
	}
	it, note := lookup(ctx, o, owner, repo, n, true)
	if note != "" {
		u.Note = note
		return u
	}
	u.State, u.Title, u.User, u.Commit = it.State, it.Title, it.User, it.MergeCommit
	if it.State == "merged" && it.MergeCommit != "" {
		rel, err := firstRelease(ctx, in, it.MergeCommit)
		switch {
		case err != nil:
			u.Note = "merged; its commit is not in the upstream cache"
		case rel != "":
			u.Release = rel
		default:
			u.Note = "merged; in no release yet"
		}
	}
	return u
}

// lookup asks GitHub, or says why it did not.
func lookup(ctx context.Context, o Options, owner, repo string, n int, pr bool) (ghapi.Item, string) {
	if o.GitHub == nil {
		return ghapi.Item{}, "not looked up: offline"
	}
	it, err := o.GitHub.Item(ctx, owner, repo, n, pr)
	if err != nil {
		return ghapi.Item{}, untrusted.Error(err)
	}
	return it, ""
}

// firstRelease returns the lowest release (a final version matching
// upstream.releases) whose tag contains commit, "" when none does. A commit
// the cache lacks is an error.
func firstRelease(ctx context.Context, in UnitInput, commit string) (string, error) {
	if _, err := in.Cache.Commit(commit); err != nil {
		return "", err
	}
	out, err := git(ctx, in.Cache.Path(), "for-each-ref", "--contains", commit, "--format=%(refname:strip=2)", "refs/tags")
	if err != nil {
		return "", err
	}
	var rel []string
	for _, name := range strings.Fields(string(out)) {
		if ok, _ := path.Match(in.Spec.Upstream.Releases, name); ok && !obsolete.IsPrerelease(name, in.Spec.Upstream.Releases, in.Spec.Upstream.Ref) {
			rel = append(rel, name)
		}
	}
	sort.Slice(rel, func(a, b int) bool {
		if c, ok := upstream.CompareVersions(rel[a], rel[b]); ok {
			return c < 0
		}
		return rel[a] < rel[b]
	})
	if len(rel) == 0 {
		return "", nil
	}
	return rel[0], nil
}
