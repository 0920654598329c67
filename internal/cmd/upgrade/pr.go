package upgrade

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/patchkit/patchkit/internal/ghapi"
	"github.com/patchkit/patchkit/internal/propose"
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

// openPR proposes the upgrade's writes on Branch(image) (internal/propose),
// the markdown summary as body, and says which pull request it opened or
// updated.
func openPR(ctx context.Context, root string, opts *Options, u report.Upgrade) error {
	var body bytes.Buffer
	if err := report.RenderUpgrade(&body, report.Markdown, u); err != nil {
		return err
	}
	timeout, err := opts.Factory.ResolveFetchTimeout()
	if err != nil {
		return err
	}
	req := propose.Request{
		Root: root, Repo: os.Getenv("GITHUB_REPOSITORY"), Branch: Branch(opts.Image), Base: opts.Base,
		Title:  fmt.Sprintf("patchkit upgrade: %s %s → %s", opts.Image, u.Pin.From, u.Pin.To),
		Body:   body.String(),
		GitHub: append([]ghapi.Option{ghapi.WithTimeout(timeout)}, opts.prOpts.gh...),
	}
	for _, w := range u.Written {
		req.Paths = append(req.Paths, w.Path)
		if w.Target != "" {
			req.Paths = append(req.Paths, w.Target)
		}
	}
	pr, err := propose.PullRequest(ctx, req)
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
