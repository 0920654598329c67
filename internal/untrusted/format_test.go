package untrusted

import "testing"

func TestFormatEscapes(t *testing.T) {
	const tok = "ghp_0123456789abcdefABCDEF"
	tests := []struct {
		name string
		f    func(string) string
		in   string
		want string
	}{
		{"AnnotationMessage", AnnotationMessage, "50% done\r\n::error::x " + tok, "50%25 done%0D%0A: :error::x ***"},
		{"AnnotationMessage encoded break", AnnotationMessage, "a%0A::warning::b", "a%250A: :warning::b"},
		{"AnnotationProperty", AnnotationProperty, "a.diff:3,title=x\n", "a.diff%3A3%2Ctitle=x%0A"},
		{"TableCell", TableCell, "a | b\nc @x", `a \| b<br>c @x`},
		{"MarkdownCell", MarkdownCell, "a | [b](https://e) @x\n::y", "a \\| \\[b\\](https:\u200b//e) @\u200bx<br>: :y"},
		{"LinkTarget", LinkTarget, "https://e/a (b)|<c>", "https://e/a%20%28b%29%7C%3Cc%3E"},
		{"LinkTarget userinfo", LinkTarget, "https://u:" + tok + "@e/x", "https://***@e/x"},
		{"HTMLText", HTMLText, "<b>&</b>", "&lt;b&gt;&amp;&lt;/b&gt;"},
		{"Unticked", Unticked, "a `b`", "a 'b'"},
		{"CodeSpan", CodeSpan, "a `b`\nc", "`a 'b' c`"},
		{"Fence", Fence, "a ``` b ```` c", "`````"},
		{"Fence plain", Fence, "a", "```"},
		{"Visible", Visible, "a\tb\r\n", `a→   b\r`},
	}
	for _, tt := range tests {
		if got := tt.f(tt.in); got != tt.want {
			t.Errorf("%s(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestSideband(t *testing.T) {
	tests := []struct{ in, want string }{
		{"remote: Counting objects: 50% (1/2)\x1b[K", "remote: Counting objects: 50% (1/2)"},
		{"remote: \x1b[31mdenied\x1b[0m\a\x7f", "remote: denied"},
		{"cut \xe2\x82 here\ttab \ufffd", "cut  here\ttab "},
	}
	for _, tt := range tests {
		if got := Sideband(tt.in); got != tt.want {
			t.Errorf("Sideband(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestHide(t *testing.T) {
	if got := Hide("GET https://x/?t=abc failed: abc", "abc"); got != "GET https://x/?t=*** failed: ***" {
		t.Errorf("Hide = %q", got)
	}
	if got := Hide("abc", ""); got != "abc" {
		t.Errorf("Hide of no secret = %q", got)
	}
}
