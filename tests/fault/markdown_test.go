package fault

import (
	"regexp"
	"strings"
	"testing"
)

// TestUpstreamSubjectInMarkdown: an upstream commit whose subject mentions
// a team, embeds an image and links out lands a patch; the markdown bodies
// that name it (obsolete-check's issue comment, upgrade's pull request)
// hold no mention that notifies, no image that loads and no live link.
func TestUpstreamSubjectInMarkdown(t *testing.T) {
	subject := "fix a @kubeovn/maintainers ping ![x](https://evil.example/p.png) [see](https://evil.example/x) <img src=https://evil.example/q.png>"
	p := newUpgradeProjectWith(t, false, subject)
	live := map[string]*regexp.Regexp{
		"mention": regexp.MustCompile(`(^|[^\w` + "`" + `])@[A-Za-z0-9]`),
		"image":   regexp.MustCompile(`!\[[^\]]*\]\(`),
		"link":    regexp.MustCompile(`(^|[^\\])\[[^\]]*\]\(https?:`),
		"url":     regexp.MustCompile(`https?://evil`),
		"html":    regexp.MustCompile(`<img\b`),
	}
	for _, args := range [][]string{
		{"obsolete-check", "app", "-o", "markdown"},
		{"upgrade", "app", "--dry-run", "-o", "markdown"},
	} {
		r := p.run(t, args...)
		if !strings.Contains(r.stdout, "ping") {
			t.Fatalf("%v: the subject is not in the output (exit %d):\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		for what, re := range live {
			if m := re.FindString(r.stdout); m != "" {
				t.Errorf("%v: a live %s (%q) in:\n%s", args, what, m, r.stdout)
			}
		}
	}
}
