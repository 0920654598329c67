package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/patchkit/patchkit/internal/diag"
)

// A Result is what one command prints. Export renders it: JSON itself, the
// other formats through the methods the result has (Texter, Markdowner,
// GitHubber, HTMLer). A result without one of them refuses that format.
type Result interface {
	// Command names the command, for the error that refuses a format.
	Command() string
}

// Texter is a result with a text form (-o text).
type Texter interface{ Text() string }

// Markdowner is a result with a markdown form (-o markdown).
type Markdowner interface{ Markdown() string }

// GitHubber is a result with a GitHub Actions form (-o github): workflow
// commands, each field escaped (annotate).
type GitHubber interface{ GitHub() string }

// HTMLer is a result with an html page (status's -o html).
type HTMLer interface{ HTML(w io.Writer) error }

// JSONer is a result whose JSON is another value than the result itself
// (the shape DESIGN.md fixes).
type JSONer interface{ JSON() any }

// cleaner is a result whose server text passes through untrusted before any
// format renders it: clean returns it cleaned.
type cleaner interface{ clean() Result }

// Export writes r in format f: JSON with two-space indents and no HTML
// escaping (indentWriter; nothing when r fails to encode), the others as r
// renders them, each in one write ("" is text). A
// format r does not have is a usage error (exit 2) that names those it has.
func Export(w io.Writer, f Format, r Result) error {
	if f == "" {
		f = Text // as ParseFormat reads no -o
	}
	if err := CheckFormat(f, r); err != nil {
		return err
	}
	if c, ok := r.(cleaner); ok {
		r = c.clean()
	}
	var s string
	switch f {
	case JSON:
		var v any = r
		if j, ok := r.(JSONer); ok {
			v = j.JSON()
		}
		enc := json.NewEncoder(newIndentWriter(w, "  "))
		enc.SetEscapeHTML(false)
		return enc.Encode(v)
	case HTML:
		return r.(HTMLer).HTML(w)
	case Text:
		s = r.(Texter).Text()
	case Markdown:
		s = r.(Markdowner).Markdown()
	case GitHub:
		s = r.(GitHubber).GitHub()
	}
	if s == "" {
		return nil
	}
	_, err := io.WriteString(w, s)
	return err
}

// Formats are the formats r renders, in the order -o's help lists them.
func Formats(r Result) []Format {
	out := []Format{}
	if _, ok := r.(Texter); ok {
		out = append(out, Text)
	}
	out = append(out, JSON)
	if _, ok := r.(Markdowner); ok {
		out = append(out, Markdown)
	}
	if _, ok := r.(GitHubber); ok {
		out = append(out, GitHub)
	}
	if _, ok := r.(HTMLer); ok {
		out = append(out, HTML)
	}
	return out
}

// CheckFormat refuses a format r does not render: a command calls it
// before it fetches or writes anything.
func CheckFormat(f Format, r Result) error {
	return CheckFormats(r.Command(), f, Formats(r)...)
}

// CheckFormats refuses f unless it is one of have, with a usage error
// (exit 2): "refresh: -o html is not supported; use text, json or markdown".
func CheckFormats(command string, f Format, have ...Format) error {
	if slices.Contains(have, f) {
		return nil
	}
	names := make([]string, len(have))
	for i, h := range have {
		names[i] = string(h)
	}
	list := names[len(names)-1]
	if len(names) > 1 {
		list = strings.Join(names[:len(names)-1], ", ") + " or " + list
	}
	return &diag.UsageError{Err: fmt.Errorf("%s: -o %s is not supported; use %s", command, f, list)}
}

// Run is a command's results, one per image. Single says the command was
// given exactly one image: its JSON is then one object, else an array.
type Run[T any] struct {
	Results []T
	Single  bool
}

// JSON implements JSONer.
func (r Run[T]) JSON() any { return jsonItems(r.Results, r.Single) }

// jsonItems is the JSON of a command's results, as DESIGN.md fixes it: one
// object for one result when the command was given exactly one image
// (single), else an array ([] for none).
func jsonItems[T any](items []T, single bool) any {
	if single && len(items) == 1 {
		return items[0]
	}
	if items == nil {
		items = []T{}
	}
	return items
}

// annotate writes one GitHub workflow command: ::level
// file=F,line=L,title=T::msg. file "" leaves out file and line, line 0 the
// line; msg is escaped already (ghEscape).
func annotate(b *strings.Builder, level, file string, line int, title, msg string) {
	b.WriteString("::" + level + " ")
	if file != "" {
		b.WriteString("file=" + ghProp(file) + ",")
		if line > 0 {
			fmt.Fprintf(b, "line=%d,", line)
		}
	}
	b.WriteString("title=" + ghProp(title) + "::" + msg + "\n")
}
