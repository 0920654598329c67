package untrusted

import "strings"

// markdownInert breaks what GitHub-flavoured markdown would make live in
// text from a server (an upstream commit's subject, a message): a mention
// (@user, @org/team) notifies, an image loads from its URL, a link or an
// autolinked URL invites a click, an HTML tag renders. A zero-width space
// after "@", inside "://" and after "www" keeps the text readable and
// inert; brackets are escaped, so neither [text](url) nor ![alt](url) is
// one; angle brackets become entities.
var markdownInert = strings.NewReplacer(
	"@", "@\u200b",
	"://", ":\u200b//",
	"www.", "www\u200b.",
	"[", `\[`,
	"]", `\]`,
	"<", "&lt;",
	">", "&gt;",
)

// Markdown makes s inert in markdown text outside code spans (see
// markdownInert), then neutralises workflow commands (Neutralise).
func Markdown(s string) string {
	return Neutralise(markdownInert.Replace(s))
}
