package untrusted

import (
	htmltemplate "html/template"
	"strings"
	"testing"
	texttemplate "text/template"
)

// TestHTMLEscapesMatchTemplates checks HTMLPage, HTMLEscape and HTMLHref
// against the templates whose escaping they reproduce (only the test binary
// links them), on every character those escape, NUL, invalid UTF-8,
// non-ASCII, percent signs and schemes.
func TestHTMLEscapesMatchTemplates(t *testing.T) {
	page := htmltemplate.Must(htmltemplate.New("p").Parse(`<p title="{{.}}">{{.}}</p><a href="{{.}}">x</a>`))
	for _, s := range []string{
		"", "plain", "a<b>&c\"d'e+f", "nul\x00byte", "bad\xffutf8", "é 日本 \uFFFD", "sp ace|{}^`\\",
		"https://h/p?q=a+b&c=d#f", "HTTP://x/%2f%zz%4", "mailto:a@b", "javascript:alert(1)", "data:text/html,x",
		"rel/path:colon", "/abs", "%41%", "ftp://h",
	} {
		var b strings.Builder
		if err := page.Execute(&b, s); err != nil {
			t.Fatal(err)
		}
		want := b.String()
		got := `<p title="` + HTMLPage(s) + `">` + HTMLPage(s) + `</p><a href="` + HTMLHref(s) + `">x</a>`
		if got != want {
			t.Errorf("HTMLPage/HTMLHref(%q):\n got %q\nwant %q", s, got, want)
		}
		if got, want := HTMLEscape(s), texttemplate.HTMLEscapeString(s); got != want {
			t.Errorf("HTMLEscape(%q) = %q, want %q", s, got, want)
		}
	}
}
