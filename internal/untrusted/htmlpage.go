package untrusted

import (
	"strings"
	"unicode/utf8"
)

// The escapes of an html page written without html/template (a template
// engine in the binary keeps every exported method of every linked type:
// internal/arch's TestBinaryKeepsMethodElimination), each byte for byte as
// html/template or text/template writes a string (TestHTMLEscapesMatchTemplates).
// s is Text already.

// HTMLPage escapes s for an html page's text or a quoted attribute value as
// html/template does: NUL becomes U+FFFD; ", &, ', +, < and > their
// character references; nothing else changes (invalid UTF-8 included).
func HTMLPage(s string) string { return escapeHTML(s, true) }

// HTMLEscape is text/template's HTMLEscapeString: HTMLPage but for '+'.
func HTMLEscape(s string) string { return escapeHTML(s, false) }

// escapeHTML is HTMLEscape, and with plus also escapes '+'.
func escapeHTML(s string, plus bool) string {
	var b strings.Builder
	written := 0
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		var repl string
		switch r {
		case 0:
			repl = "\uFFFD"
		case '"':
			repl = "&#34;"
		case '&':
			repl = "&amp;"
		case '\'':
			repl = "&#39;"
		case '<':
			repl = "&lt;"
		case '>':
			repl = "&gt;"
		case '+':
			if plus {
				repl = "&#43;"
			}
		}
		if repl != "" {
			if written == 0 {
				b.Grow(len(s) + 8)
			}
			b.WriteString(s[written:i])
			b.WriteString(repl)
			written = i + w
		}
		i += w
	}
	if written == 0 {
		return s
	}
	b.WriteString(s[written:])
	return b.String()
}

// HTMLHref is s in a quoted href as html/template writes it: "#ZgotmplZ" for
// a scheme other than http, https or mailto; otherwise s with each byte
// that is neither unreserved nor reserved in a URL (RFC 3986), and each '%'
// that does not start an escape, percent-encoded; then escaped as HTMLPage.
func HTMLHref(s string) string {
	if scheme, _, ok := strings.Cut(s, ":"); ok && !strings.Contains(scheme, "/") &&
		!strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https") && !strings.EqualFold(scheme, "mailto") {
		return "#ZgotmplZ"
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if urlKept(c) || c == '%' && i+2 < len(s) && isHexDigit(s[i+1]) && isHexDigit(s[i+2]) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte("0123456789abcdef"[c>>4])
		b.WriteByte("0123456789abcdef"[c&15])
	}
	return HTMLPage(b.String())
}

// urlKept is a byte a URL keeps as it is: reserved or unreserved.
func urlKept(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$&*+,/:;=?@[]-._~", c) >= 0
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
