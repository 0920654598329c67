package ghapi

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/go-github/v60/github"

	"github.com/patchkit/patchkit/internal/httpguard"
)

// Item is the state of a pull request or an issue, as `patchkit status`
// shows it. Title and User are server text: render them through untrusted.
type Item struct {
	// Number is the PR or issue number.
	Number int
	// PR says the item is a pull request.
	PR bool
	// State is open, closed or, for a pull request, merged.
	State string
	// MergeCommit is the commit that merged a pull request.
	MergeCommit string
	Title       string
	User        string
	// URL is its web page.
	URL string
}

// Item returns the state of pull request or issue number of owner/repo: a
// pull request when pr says so (GET /repos/{o}/{r}/pulls/{n}), else an issue
// (GET /repos/{o}/{r}/issues/{n}), which may turn out a pull request (GitHub
// answers both for a PR number); it is then read as one.
func (c *Client) Item(ctx context.Context, owner, repo string, number int, pr bool) (Item, error) {
	if err := checkRepo(owner, repo); err != nil {
		return Item{}, err
	}
	if number <= 0 {
		return Item{}, fmt.Errorf("GitHub %s/%s#%d: bad number", owner, repo, number)
	}
	if !pr {
		what := fmt.Sprintf("issue #%d of %s/%s", number, owner, repo)
		is, _, err := c.gh.Issues.Get(ctx, owner, repo, number)
		if err != nil {
			return Item{}, reword(c.scrub(c.classify(what, err)))
		}
		if !is.IsPullRequest() {
			return Item{Number: number, State: is.GetState(), Title: is.GetTitle(), User: is.GetUser().GetLogin(), URL: is.GetHTMLURL()}, nil
		}
	}
	what := fmt.Sprintf("pull request #%d of %s/%s", number, owner, repo)
	p, _, err := c.gh.PullRequests.Get(ctx, owner, repo, number)
	if err != nil {
		return Item{}, reword(c.scrub(c.classify(what, err)))
	}
	it := Item{Number: number, PR: true, State: p.GetState(), Title: p.GetTitle(), User: p.GetUser().GetLogin(), URL: p.GetHTMLURL()}
	if p.GetMerged() {
		it.State = "merged"
		if sha := p.GetMergeCommitSHA(); fullSHA(sha) {
			it.MergeCommit = sha
		}
	}
	return it, nil
}

// Dashboard is the issue `patchkit status --issue` keeps up to date.
type Dashboard struct {
	Number  int
	URL     string
	Created bool
	// Changed says the body was written (a new issue, or a body that differed).
	Changed bool
}

// UpsertIssue keeps one open issue of owner/repo titled title with body
// body: it edits the open issue with that exact title (the first found, its
// body only when it differs), or creates it. Like Renovate's Dependency
// Dashboard, the title is the key.
func (c *Client) UpsertIssue(ctx context.Context, owner, repo, title, body string) (Dashboard, error) {
	if err := checkRepo(owner, repo); err != nil {
		return Dashboard{}, err
	}
	what := fmt.Sprintf("the issue %q of %s/%s", title, owner, repo)
	opt := &github.IssueListByRepoOptions{State: "open", ListOptions: github.ListOptions{PerPage: 100}}
	for page := 1; ; page++ {
		list, resp, err := c.gh.Issues.ListByRepo(ctx, owner, repo, opt)
		if err != nil {
			return Dashboard{}, reword(c.scrub(c.classify(what, err)))
		}
		for _, is := range list {
			if is.IsPullRequest() || is.GetTitle() != title {
				continue
			}
			d := Dashboard{Number: is.GetNumber(), URL: is.GetHTMLURL()}
			if is.GetBody() == body {
				return d, nil
			}
			if _, _, err := c.gh.Issues.Edit(ctx, owner, repo, d.Number, &github.IssueRequest{Body: github.String(body)}); err != nil {
				return Dashboard{}, reword(c.scrub(c.classify(what, err)))
			}
			d.Changed = true
			return d, nil
		}
		if resp == nil || resp.NextPage == 0 {
			break
		}
		if page >= MaxPages {
			return Dashboard{}, c.scrub(fmt.Errorf("listing the open issues of %s/%s: GET %s still names a next page after %d pages, the limit: refused", owner, repo, httpguard.Redact(resp.Request.URL), MaxPages))
		}
		opt.Page = resp.NextPage
	}
	is, _, err := c.gh.Issues.Create(ctx, owner, repo, &github.IssueRequest{Title: github.String(title), Body: github.String(body)})
	if err != nil {
		return Dashboard{}, reword(c.scrub(c.classify(what, err)))
	}
	return Dashboard{Number: is.GetNumber(), URL: is.GetHTMLURL(), Created: true, Changed: true}, nil
}

func checkRepo(owner, repo string) error {
	for _, s := range []string{owner, repo} {
		if s == "" || strings.ContainsAny(s, "/?#% \t\n") || s == "." || s == ".." {
			return fmt.Errorf("GitHub repository %s/%s: bad name %q", owner, repo, s)
		}
	}
	return nil
}

// ParseItem reads a GitHub pull request or issue URL
// (https://github.com/owner/repo/pull/N, .../issues/N, with any #fragment or
// trailing path): owner, repo, number, and whether it names a pull request.
// host is ParseRepo's.
func ParseItem(raw, host string) (owner, repo string, number int, pr bool, ok bool) {
	owner, repo, ok = ParseRepo(raw, host)
	if !ok || !strings.Contains(raw, "://") {
		return "", "", 0, false, false
	}
	raw, _, _ = strings.Cut(raw, "#")
	raw, _, _ = strings.Cut(raw, "?")
	i := strings.Index(raw, "/"+owner+"/"+repo+"/")
	if i < 0 {
		return "", "", 0, false, false
	}
	parts := strings.Split(raw[i+len(owner)+len(repo)+3:], "/")
	if len(parts) < 2 || (parts[0] != "pull" && parts[0] != "pulls" && parts[0] != "issues") {
		return "", "", 0, false, false
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil || n <= 0 {
		return "", "", 0, false, false
	}
	return owner, repo, n, parts[0] != "issues", true
}

// reword says what status asked for: classify's messages speak of diffs.
func reword(err error) error {
	msg := err.Error()
	if !strings.Contains(msg, "getting the diff of ") && !strings.Contains(msg, "cannot give the diff of ") {
		return err
	}
	msg = strings.Replace(msg, "getting the diff of ", "getting ", 1)
	msg = strings.Replace(msg, "cannot give the diff of ", "cannot give ", 1)
	return &scrubbed{msg: msg, err: err}
}
