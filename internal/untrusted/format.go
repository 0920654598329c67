package untrusted

import "strings"

// The escapes of the output formats: each makes untrusted text safe where a
// format puts it (a workflow command, a markdown table cell, a link target,
// HTML), so that report renders and this package alone rewrites text.

// annotationMessage encodes what would end a workflow command's message.
var annotationMessage = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")

// annotationProperty also encodes what would end a property value.
var annotationProperty = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")

// AnnotationMessage is Text for the message of a GitHub workflow command
// (::error ...::message): '%' and line breaks are encoded, so that the
// message stays on its command's line and starts no command of its own.
func AnnotationMessage(s string) string { return annotationMessage.Replace(Text(s)) }

// AnnotationProperty is AnnotationMessage for a workflow command's property
// value (file=, title=): ':' and ',' are encoded as well.
func AnnotationProperty(s string) string { return annotationProperty.Replace(Text(s)) }

// tableCell keeps text inside one markdown table cell.
var tableCell = strings.NewReplacer("|", `\|`, "\n", "<br>")

// TableCell is Text for a markdown table cell or a code span in one: a
// pipe escaped, line breaks as <br>.
func TableCell(s string) string { return tableCell.Replace(Text(s)) }

// MarkdownCell is TableCell for server text outside a code span (a commit
// subject, evidence, a message): inert as Markdown makes it as well, so no
// mention, image, link or HTML is live.
func MarkdownCell(s string) string { return tableCell.Replace(Markdown(Text(s))) }

// linkTarget keeps a URL from closing a markdown link early.
var linkTarget = strings.NewReplacer("(", "%28", ")", "%29", " ", "%20", "|", "%7C", "<", "%3C", ">", "%3E")

// LinkTarget is Text for the target of a markdown link, [text](target).
func LinkTarget(s string) string { return linkTarget.Replace(Text(s)) }

// htmlText escapes what HTML reads as markup in text.
var htmlText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// HTMLText escapes s for HTML text (not an attribute) inside markdown, as in
// a <details> summary. s is Text already.
func HTMLText(s string) string { return htmlText.Replace(s) }

// Unticked replaces backquotes with quotes, so that s neither opens nor
// closes a markdown code span.
func Unticked(s string) string { return strings.ReplaceAll(s, "`", "'") }

// CodeSpan puts s, on one line and Unticked, in a markdown code span. s is
// Text already.
func CodeSpan(s string) string { return "`" + strings.ReplaceAll(Unticked(s), "\n", " ") + "`" }

// Fence is a markdown code fence that s cannot close: three backquotes, or
// more than the longest run in s.
func Fence(s string) string {
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence
}

// visible shows what a conflict's text hides.
var visible = strings.NewReplacer("\r", `\r`, "\t", "→   ")

// Visible shows the whitespace of one line of a file (a conflict's expected
// or actual line): its line end dropped, a carriage return as \r, a tab as
// an arrow. s is Text already.
func Visible(s string) string { return visible.Replace(strings.TrimSuffix(s, "\n")) }
