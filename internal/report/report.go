// Package report renders every stage's result as text, json, markdown or
// GitHub annotations. Stages return data; only this package formats it.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

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

// writeJSON prints one object for one result and an array for several, as
// DESIGN.md fixes. single says whether the command was given exactly one image.
func writeJSON[T any](w io.Writer, items []T, single bool) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if single && len(items) == 1 {
		return enc.Encode(items[0])
	}
	if items == nil {
		items = []T{}
	}
	return enc.Encode(items)
}

// Redact is untrusted.Text, the one exit for text from servers and
// subprocesses: it hides credentials in every form and neutralises workflow
// commands. Renderers pass every message, URL and output field through it.
func Redact(s string) string { return untrusted.Text(s) }

// ghEscape escapes a GitHub workflow command's message, after Redact: an
// annotation never carries a secret nor a command of its own.
func ghEscape(s string) string {
	s = Redact(s)
	s = strings.ReplaceAll(s, "%", "%25")
	s = strings.ReplaceAll(s, "\r", "%0D")
	return strings.ReplaceAll(s, "\n", "%0A")
}

// ghProp escapes a GitHub workflow command's property value.
func ghProp(s string) string {
	s = ghEscape(s)
	s = strings.ReplaceAll(s, ":", "%3A")
	return strings.ReplaceAll(s, ",", "%2C")
}

// mdCell escapes a markdown table cell, after Redact.
// mdText is mdCell for text outside a code span that a server may have
// written (commit subjects, evidence, messages): mentions, images, links
// and HTML made inert (untrusted.Markdown).
func mdText(s string) string {
	s = untrusted.Markdown(Redact(s))
	s = strings.ReplaceAll(s, "|", "\\|")
	return strings.ReplaceAll(s, "\n", "<br>")
}

func mdCell(s string) string {
	s = Redact(s)
	s = strings.ReplaceAll(s, "|", "\\|")
	return strings.ReplaceAll(s, "\n", "<br>")
}
