package upgrade

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/patchkit/patchkit/internal/ghapi"
	"github.com/patchkit/patchkit/internal/report"
)

// prOptions are the seams of the pull request step (tests).
type prOptions struct {
	gh []ghapi.Option
}

// Branch is the branch an image's upgrade is pushed to.
func Branch(image string) string {
	return "patchkit/upgrade-" + strings.NewReplacer("/", "-", " ", "-").Replace(image)
}

// openPR commits the upgrade's writes on Branch(image), force-pushes it to
// origin and opens or updates its pull request, the markdown summary as body.
func openPR(ctx context.Context, root string, opts *Options, u report.Upgrade) error {
	repo := os.Getenv("GITHUB_REPOSITORY")
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" {
		return errors.New("--open-pr: GITHUB_REPOSITORY must name owner/repo")
	}
	base := opts.Base
	if base == "" {
		out, err := git(ctx, root, "rev-parse", "--abbrev-ref", "HEAD")
		if err != nil {
			return err
		}
		base = out
	}
	branch := Branch(opts.Image)
	if _, err := git(ctx, root, "checkout", "-q", "-B", branch); err != nil {
		return err
	}
	args := []string{"add", "-A", "--"}
	for _, w := range u.Written {
		args = append(args, w.Path)
		if w.Target != "" {
			args = append(args, w.Target)
		}
	}
	if _, err := git(ctx, root, args...); err != nil {
		return err
	}
	title := fmt.Sprintf("patchkit upgrade: %s %s → %s", opts.Image, u.Pin.From, u.Pin.To)
	if _, err := git(ctx, root, "commit", "-q", "-m", title); err != nil {
		return err
	}
	if _, err := git(ctx, root, "push", "-q", "--force", "origin", "HEAD:refs/heads/"+branch); err != nil {
		return err
	}
	var body bytes.Buffer
	if err := report.RenderUpgrade(&body, report.Markdown, u); err != nil {
		return err
	}
	c, err := ghapi.FromEnv(opts.prOpts.gh...)
	if err != nil {
		return err
	}
	pr, err := c.EnsurePullRequest(ctx, owner, name, branch, base, title, body.String())
	if err != nil {
		return err
	}
	verb := "updated"
	if pr.Created {
		verb = "opened"
	}
	fmt.Fprintf(opts.Factory.IO.ErrOut, "%s pull request #%d: %s\n", verb, pr.Number, pr.URL)
	return nil
}

// git runs git in dir; its error carries git's output, redacted.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, report.Redact(strings.TrimSpace(errOut.String())))
	}
	return strings.TrimSpace(out.String()), nil
}
