// Package report renders every stage's result as text, json, markdown or
// GitHub annotations. Stages return data; only this package formats it,
// through one exporter (Export), and every escape of server text it needs
// is internal/untrusted's.
package report

import (
	"fmt"

	"github.com/patchkit/patchkit/internal/untrusted"
)

// Format is an output format.
type Format string

// The output formats.
const (
	Text     Format = "text"
	JSON     Format = "json"
	Markdown Format = "markdown"
	GitHub   Format = "github"
)

// ParseFormat validates -o.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case "":
		return Text, nil
	case Text, JSON, Markdown, GitHub:
		return f, nil
	}
	return "", fmt.Errorf("-o %q: want text, json, markdown or github", s)
}

// Redact is untrusted.Text, the one exit for text from servers and
// subprocesses: it hides credentials in every form and neutralises workflow
// commands. Renderers pass every message, URL and output field through it.
func Redact(s string) string { return untrusted.Text(s) }

// ghEscape is untrusted.AnnotationMessage: a workflow command's message
// never carries a secret, a line break nor a command of its own.
func ghEscape(s string) string { return untrusted.AnnotationMessage(s) }

// ghProp is untrusted.AnnotationProperty, for a property value.
func ghProp(s string) string { return untrusted.AnnotationProperty(s) }

// mdCell is untrusted.TableCell: a markdown table cell, or a code span in
// one.
func mdCell(s string) string { return untrusted.TableCell(s) }

// mdText is untrusted.MarkdownCell: mdCell for text outside a code span
// that a server may have written (commit subjects, evidence, messages).
func mdText(s string) string { return untrusted.MarkdownCell(s) }
