package ghapi

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v60/github"
)

// PullRequest is an open pull request that EnsurePullRequest opened or updated.
type PullRequest struct {
	Number  int    `json:"number"`
	URL     string `json:"url"`
	Created bool   `json:"created"`
}

// EnsurePullRequest opens a pull request from branch head into base of
// owner/repo, or, when one from head is open already, updates its title and
// body: one pull request per branch, however often it runs. head is a
// branch of owner/repo itself.
func (c *Client) EnsurePullRequest(ctx context.Context, owner, repo, head, base, title, body string) (*PullRequest, error) {
	for _, s := range []string{owner, repo, head, base} {
		if s == "" || strings.ContainsAny(s, "?#% \t\n:") {
			return nil, fmt.Errorf("pull request %s/%s %s -> %s: bad name %q", owner, repo, head, base, s)
		}
	}
	open, _, err := c.gh.PullRequests.List(ctx, owner, repo, &github.PullRequestListOptions{
		State: "open", Head: owner + ":" + head, ListOptions: github.ListOptions{PerPage: 10},
	})
	if err != nil {
		return nil, c.scrub(fmt.Errorf("listing the pull requests of %s/%s from %s: %w", owner, repo, head, err))
	}
	for _, pr := range open {
		if pr.GetHead().GetRef() != head {
			continue
		}
		upd, _, err := c.gh.PullRequests.Edit(ctx, owner, repo, pr.GetNumber(), &github.PullRequest{Title: &title, Body: &body})
		if err != nil {
			return nil, c.scrub(fmt.Errorf("updating pull request #%d of %s/%s: %w", pr.GetNumber(), owner, repo, err))
		}
		return &PullRequest{Number: upd.GetNumber(), URL: upd.GetHTMLURL()}, nil
	}
	pr, _, err := c.gh.PullRequests.Create(ctx, owner, repo, &github.NewPullRequest{Title: &title, Head: &head, Base: &base, Body: &body})
	if err != nil {
		return nil, c.scrub(fmt.Errorf("opening a pull request on %s/%s from %s: %w", owner, repo, head, err))
	}
	return &PullRequest{Number: pr.GetNumber(), URL: pr.GetHTMLURL(), Created: true}, nil
}
