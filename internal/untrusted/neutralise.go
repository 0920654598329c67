package untrusted

import (
	"strings"
)

// Neutralise keeps s from being read as a CI workflow command: a line that
// starts, after any leading whitespace, with "::" (GitHub Actions' commands)
// or "##[" (their older form) gets a space inside the marker, and so does
// one after an encoded line break (%0A, %0D), which a runner decodes inside
// a command's message. Other control characters than tab and line breaks
// (terminal escapes among them) become U+FFFD.
func Neutralise(s string) string {
	out, _ := neutralise(s, true)
	return out
}

// neutralise is Neutralise of s when lineStart says whether s starts a line
// (nothing but whitespace before it on its line). It also says whether the
// end of s is such a place, for the next text written after it.
func neutralise(s string, lineStart bool) (string, bool) {
	if !needsNeutralising(s) {
		return s, atLineStart(s, lineStart)
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n' || c == '\r':
			b.WriteByte(c)
			lineStart = true
			i++
			continue
		case lineStart && (c == ' ' || c == '\t'):
			b.WriteByte(c)
			i++
			continue
		case isEncodedBreak(s[i:]):
			b.WriteString(s[i : i+3])
			lineStart = true
			i += 3
			continue
		case lineStart && strings.HasPrefix(s[i:], "::"):
			b.WriteString(": :")
			i += 2
		case lineStart && strings.HasPrefix(s[i:], "##["):
			b.WriteString("# #[")
			i += 3
		case c < 0x20 && c != '\t' || c == 0x7f:
			b.WriteString("\uFFFD")
			i++
		default:
			b.WriteByte(c)
			i++
		}
		lineStart = false
	}
	return b.String(), lineStart
}

// atLineStart reports whether only whitespace follows the last line break
// of s (or, without one, whether s is whitespace after a line start).
func atLineStart(s string, lineStart bool) bool {
	if i := strings.LastIndexAny(s, "\n\r"); i >= 0 {
		s, lineStart = s[i+1:], true
	}
	return lineStart && strings.Trim(s, " \t") == ""
}

func needsNeutralising(s string) bool {
	if strings.Contains(s, "::") || strings.Contains(s, "##[") {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			return true
		}
	}
	return false
}

// isEncodedBreak reports whether s starts with %0A or %0D, in any case.
func isEncodedBreak(s string) bool {
	return len(s) >= 3 && s[0] == '%' && s[1] == '0' && (s[2] == 'A' || s[2] == 'a' || s[2] == 'D' || s[2] == 'd')
}
