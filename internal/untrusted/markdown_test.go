package untrusted

import (
	"regexp"
	"testing"
)

func TestMarkdown(t *testing.T) {
	live := []*regexp.Regexp{
		regexp.MustCompile(`(^|[^\w])@[A-Za-z0-9]`),            // a mention
		regexp.MustCompile(`!\[[^\]]*\]\(`),                    // an image
		regexp.MustCompile(`(^|[^\\])\[[^\]]*\]\(`),            // a link
		regexp.MustCompile(`https?://|www\.`),                  // an autolink
		regexp.MustCompile(`<(img|a|script|picture|source)\b`), // HTML
	}
	for _, in := range []string{
		"fix: ping @kubeovn/maintainers and @oilbeater",
		"docs: ![tracker](https://evil.example/pixel.png)",
		"see [the fix](https://evil.example/x) or https://evil.example or www.evil.example",
		`<img src="https://evil.example/p.png"> <a href="x">y</a>`,
	} {
		out := Markdown(in)
		for _, re := range live {
			if re.MatchString(out) {
				t.Errorf("Markdown(%q) = %q: still live (%s)", in, out, re)
			}
		}
	}
}
