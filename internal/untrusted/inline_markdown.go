package untrusted

import "strings"

// InlineMarkdown is Text for server text (a PR title, a user name) that a
// markdown document shows inline, as in a table cell or an issue body: it
// cannot notify anyone, load anything or break out of its cell. "@" becomes
// "@\u200b" (a zero-width space after it), so "@user" and "@org/team" mention
// no one; "<" and ">" become "&lt;" and "&gt;", so no HTML (an <img> that
// loads, a comment that hides the rest) passes; "!", "[", "]", "|", "`" and
// "\\" are backslash-escaped, so no image, link, cell break or code span is
// made; a line break becomes a space.
func InlineMarkdown(s string) string {
	s = Text(s)
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		switch r {
		case '@':
			b.WriteString("@\u200b")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '!', '[', ']', '|', '`', '\\', '*', '_':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n', '\r':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
