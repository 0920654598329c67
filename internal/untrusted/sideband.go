package untrusted

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// csi is a terminal control sequence, as "remote:" lines carry (ESC[K).
var csi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// Sideband drops what a line of git's sideband output ("remote: ...")
// carries besides text: terminal escapes, other control characters than
// tab, U+FFFD and the invalid UTF-8 a cut through a character leaves. What
// is left is still untrusted: it is printed through Text.
func Sideband(line string) string {
	line = csi.ReplaceAllString(strings.ToValidUTF8(line, ""), "")
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || r < 0x20 && r != '\t' || r == 0x7f {
			return -1
		}
		return r
	}, line)
}

// Hide replaces every occurrence of secret in s with Mask: for a caller
// that holds the one secret a message may carry (a client's token), before
// the message leaves it as an error. "" hides nothing.
func Hide(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, Mask)
}
