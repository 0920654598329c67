package untrusted

import "strings"

// inlineEscape backslash-escapes what would make markup of a table cell or
// an inline span ("|" ends a cell, "`" opens a code span, "*" and "_"
// emphasis, "!" an image) and folds line breaks. It runs before
// markdownInert, whose own escapes ("\[") it must not double.
var inlineEscape = strings.NewReplacer(
	`\`, `\\`,
	"`", "\\`",
	"|", `\|`,
	"*", `\*`,
	"_", `\_`,
	"!", `\!`,
	"\r\n", " ",
	"\n", " ",
	"\r", " ",
)

// InlineMarkdown is Text for server text (a PR title, a user name) that a
// markdown document shows inline, as in a table cell or an issue body: on
// one line, with no markup of its own (inlineEscape), and inert as Markdown
// makes text: no mention notifies, no image or link is live, no HTML
// renders.
func InlineMarkdown(s string) string {
	return Markdown(inlineEscape.Replace(Text(s)))
}
