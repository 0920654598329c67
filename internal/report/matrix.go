package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/patchkit/patchkit/internal/matrix"
	"github.com/patchkit/patchkit/internal/untrusted"
)

// RenderUnbuilt writes, for the matrix, each selected unit that no build
// line builds (err is their matrix.UnbuiltError, whose lines name them) and
// each one the repository acknowledges as unbuilt, on w (stderr: the
// matrix's stdout is its JSON). With -o github each unbuilt unit is also an
// ::error annotation on the build entry's Makefile, each acknowledged one a
// ::notice, on out after the JSON line (workflow commands never go to
// stderr).
func RenderUnbuilt(w, out io.Writer, f Format, makefile string, unbuilt, acknowledged []matrix.Unbuilt, err error) error {
	var b, gh strings.Builder
	if err != nil {
		for _, l := range strings.Split(err.Error(), "\n") {
			b.WriteString("patchkit: " + l + "\n")
		}
		if f == GitHub {
			for _, u := range unbuilt {
				fmt.Fprintf(&gh, "::error file=%s,line=1,title=%s::%s\n", ghProp(makefile), ghProp("patchkit matrix: unbuilt unit"),
					ghEscape(fmt.Sprintf("%s has a spec, but nothing builds it: add `%s`, or acknowledge it under unbuilt: in .patchkit.yaml", u.Unit.Dir, u.Want)))
			}
		}
	}
	for _, u := range acknowledged {
		fmt.Fprintf(&b, "patchkit: note: %s is not built (%s: %s)\n", u.Unit.Dir, u.Where, u.Reason)
		if f == GitHub {
			fmt.Fprintf(&gh, "::notice title=%s::%s\n", ghProp("patchkit matrix: unbuilt unit"), ghEscape(fmt.Sprintf("%s is not built: %s", u.Unit.Dir, u.Reason)))
		}
	}
	if _, werr := io.WriteString(w, b.String()); werr != nil {
		return werr
	}
	_, werr := io.WriteString(out, gh.String())
	return werr
}

// Matrix is what `patchkit matrix` prints: the paths a change builds (unit
// directories, or build directories with --by build-dir). Its text, its
// JSON and the first line of -o github are the one-line JSON array that
// DESIGN.md fixes and CI reads (head -n1); the command prints its JSON
// through Text, so that it stays on one line. Its markdown, for a step
// summary or a comment, lists the paths and the selected units that
// nothing builds. What RenderUnbuilt writes (stderr, annotations) follows.
type Matrix struct {
	Paths []string
	// Makefile is the build entry's Makefile, which Unbuilt's lines are
	// missing from.
	Makefile     string
	Unbuilt      []matrix.Unbuilt
	Acknowledged []matrix.Unbuilt
}

// Command implements Result.
func (m Matrix) Command() string { return "matrix" }

// Text implements Texter: the JSON array, on one line.
func (m Matrix) Text() string {
	paths := m.Paths
	if paths == nil {
		paths = []string{}
	}
	b, _ := json.Marshal(paths) // strings always marshal
	return string(b) + "\n"
}

// GitHub implements GitHubber: the JSON line; RenderUnbuilt's annotations
// follow it.
func (m Matrix) GitHub() string { return m.Text() }

// Markdown implements Markdowner.
func (m Matrix) Markdown() string {
	var b strings.Builder
	switch len(m.Paths) {
	case 0:
		b.WriteString("### patchkit matrix: nothing to build\n")
	case 1:
		b.WriteString("### patchkit matrix: 1 to build\n\n")
	default:
		fmt.Fprintf(&b, "### patchkit matrix: %d to build\n\n", len(m.Paths))
	}
	for _, p := range m.Paths {
		fmt.Fprintf(&b, "- %s\n", untrusted.CodeSpan(p))
	}
	if len(m.Unbuilt) > 0 {
		fmt.Fprintf(&b, "\n#### ❌ Selected, but nothing in %s builds them\n\n", untrusted.CodeSpan(m.Makefile))
		for _, u := range m.Unbuilt {
			fmt.Fprintf(&b, "- %s (selected by %s): add %s\n", untrusted.CodeSpan(u.Unit.Dir), untrusted.CodeSpan(u.Because), untrusted.CodeSpan(u.Want))
		}
	}
	if len(m.Acknowledged) > 0 {
		b.WriteString("\n#### Not built, as .patchkit.yaml says\n\n")
		for _, u := range m.Acknowledged {
			fmt.Fprintf(&b, "- %s: %s\n", untrusted.CodeSpan(u.Unit.Dir), untrusted.InlineMarkdown(u.Reason))
		}
	}
	return b.String()
}
