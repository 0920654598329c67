// Package propose turns a change that a command wrote into the downstream
// repository into a pull request: it commits the written paths on a branch of
// their own, force-pushes it to origin and opens (or updates) the branch's
// pull request through the GitHub API.
package propose

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/patchkit/patchkit/internal/ghapi"
	"github.com/patchkit/patchkit/internal/untrusted"
)

// Request is one change to propose.
type Request struct {
	Root   string   // the downstream repository's work tree
	Repo   string   // owner/name on GitHub ($GITHUB_REPOSITORY)
	Branch string   // the branch the change is committed to and pushed as
	Base   string   // the pull request's base; "" is the checked-out branch
	Paths  []string // the paths the change wrote, relative to Root
	Title  string   // the commit subject and the pull request's title
	Body   string   // the pull request's body (markdown)
	// GitHub configures the API client (tests point it at an httptest server).
	GitHub []ghapi.Option
}

// Result is the pull request opened or updated.
type Result struct {
	Number  int
	URL     string
	Created bool // false when an open pull request of the branch was updated
}

// PullRequest commits req.Paths on req.Branch (reset to the current HEAD
// first), force-pushes the branch to origin and opens or updates its pull
// request against req.Base.
func PullRequest(ctx context.Context, req Request) (Result, error) {
	owner, name, ok := strings.Cut(req.Repo, "/")
	if !ok || owner == "" || name == "" {
		return Result{}, errors.New("--open-pr: GITHUB_REPOSITORY must name owner/repo")
	}
	base := req.Base
	if base == "" {
		out, err := git(ctx, req.Root, "rev-parse", "--abbrev-ref", "HEAD")
		if err != nil {
			return Result{}, err
		}
		base = out
	}
	if _, err := git(ctx, req.Root, "checkout", "-q", "-B", req.Branch); err != nil {
		return Result{}, err
	}
	if _, err := git(ctx, req.Root, append([]string{"add", "-A", "--"}, req.Paths...)...); err != nil {
		return Result{}, err
	}
	if _, err := git(ctx, req.Root, "commit", "-q", "-m", req.Title); err != nil {
		return Result{}, err
	}
	if _, err := git(ctx, req.Root, "push", "-q", "--force", "origin", "HEAD:refs/heads/"+req.Branch); err != nil {
		return Result{}, err
	}
	c, err := ghapi.FromEnv(req.GitHub...)
	if err != nil {
		return Result{}, err
	}
	pr, err := c.EnsurePullRequest(ctx, owner, name, req.Branch, base, req.Title, req.Body)
	if err != nil {
		return Result{}, err
	}
	return Result{Number: pr.Number, URL: pr.URL, Created: pr.Created}, nil
}

// git runs git in dir (the downstream repository, never an upstream cache);
// its error carries git's output, redacted.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, untrusted.Text(strings.TrimSpace(errOut.String())))
	}
	return strings.TrimSpace(out.String()), nil
}
