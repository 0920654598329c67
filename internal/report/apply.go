package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/patchkit/patchkit/internal/apply"
)

// UpstreamRef is the upstream a series was applied to.
type UpstreamRef struct {
	URL    string `json:"url"`
	Ref    string `json:"ref"`
	Commit string `json:"commit"`
}

// Apply is the result of `patchkit apply` for one image.
type Apply struct {
	Image string `json:"image"`
	// Unit is the image unit's directory relative to the root.
	Unit     string              `json:"unit,omitempty"`
	Upstream UpstreamRef         `json:"upstream"`
	OK       bool                `json:"ok"`
	Patches  []apply.PatchResult `json:"patches"`
	// Out is the directory the patched tree was written to, "" with --check or on failure.
	Out string `json:"out,omitempty"`
	// Error says why this unit could not be applied when others were (its
	// upstream could not be fetched, its spec does not load), and ExitCode
	// the exit code it alone would give.
	Error    string `json:"error,omitempty"`
	ExitCode int    `json:"exitCode,omitempty"`
}

// RenderApply writes apply results in format f.
func RenderApply(w io.Writer, f Format, results []Apply, single bool) error {
	for i := range results {
		r := &results[i]
		r.Upstream.URL = Redact(r.Upstream.URL)
		if r.Patches == nil {
			r.Patches = []apply.PatchResult{}
		}
		for j := range r.Patches {
			if r.Patches[j].Errors == nil {
				r.Patches[j].Errors = []apply.Problem{}
			}
			for k := range r.Patches[j].Errors {
				cleanProblem(&r.Patches[j].Errors[k])
			}
		}
	}
	switch f {
	case JSON:
		return writeJSON(w, results, single)
	case Markdown:
		return applyMarkdown(w, results)
	case GitHub:
		return applyGitHub(w, results)
	default:
		return applyText(w, results)
	}
}

// cleanProblem passes a problem's text through Redact: its expected and
// actual lines come from the patch and the upstream tree.
func cleanProblem(e *apply.Problem) {
	e.Message = Redact(e.Message)
	e.Hunk = Redact(e.Hunk)
	for i := range e.Expected {
		e.Expected[i] = Redact(e.Expected[i])
	}
	for i := range e.Actual {
		e.Actual[i] = Redact(e.Actual[i])
	}
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func applyText(w io.Writer, results []Apply) error {
	var b strings.Builder
	for _, r := range results {
		if r.Error != "" {
			fmt.Fprintf(&b, "%s: not applied: %s\n", r.Image, r.Error)
			continue
		}
		verdict := "ok"
		if !r.OK {
			verdict = "FAILED"
		}
		fmt.Fprintf(&b, "%s: %s at %s (%s): %s\n", r.Image, r.Upstream.URL, r.Upstream.Ref, short(r.Upstream.Commit), verdict)
		for _, p := range r.Patches {
			status := p.Status
			if status == apply.StatusFailed {
				status = "FAILED"
			}
			fmt.Fprintf(&b, "  %-8s %s%s\n", status, p.Name, offsets(p.Hunks))
			for _, e := range p.Errors {
				writeProblem(&b, "    ", e)
			}
		}
		if r.Out != "" {
			fmt.Fprintf(&b, "  wrote %s\n", r.Out)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func offsets(hunks []apply.HunkResult) string {
	var moved []string
	for _, h := range hunks {
		if h.Offset != 0 {
			moved = append(moved, fmt.Sprintf("%s %s offset %+d", h.Path, strings.TrimSpace(hunkRange(h.Hunk)), h.Offset))
		}
	}
	if len(moved) == 0 {
		return ""
	}
	return " (" + strings.Join(moved, "; ") + ")"
}

// hunkRange keeps "@@ -a,b +c,d @@" of a hunk header.
func hunkRange(h string) string {
	if i := strings.Index(h[min(2, len(h)):], "@@"); i >= 0 {
		return h[:i+4]
	}
	return h
}

// writeProblem prints a problem as git does (file:line: message.) and, for a
// conflict, the expected context beside what the tree has.
func writeProblem(b *strings.Builder, indent string, e apply.Problem) {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Kind == apply.KindWhitespace {
		// exactly as git apply reports it: "x.diff:14: trailing whitespace."
		fmt.Fprintf(b, "%s%s: %s.\n", indent, loc, strings.TrimSuffix(e.Message, "."))
		return
	}
	msg := e.Message
	if e.Path != "" && !strings.Contains(msg, e.Path) {
		msg = e.Path + ": " + msg
	}
	fmt.Fprintf(b, "%s%s: %s\n", indent, loc, msg)
	if e.Hunk != "" {
		fmt.Fprintf(b, "%s  %s\n", indent, e.Hunk)
	}
	if len(e.Expected) == 0 && len(e.Actual) == 0 {
		return
	}
	width := 0
	for _, l := range e.Expected {
		width = max(width, len(visible(l)))
	}
	width = min(max(width, len("expected")), 60)
	near := "tree has"
	if e.NearLine > 0 {
		near = fmt.Sprintf("tree has at line %d", e.NearLine)
	}
	fmt.Fprintf(b, "%s  %-*s | %s\n", indent, width, "expected", near)
	n := max(len(e.Expected), len(e.Actual))
	for i := 0; i < n; i++ {
		var l, r string
		if i < len(e.Expected) {
			l = visible(e.Expected[i])
		}
		if i < len(e.Actual) {
			r = visible(e.Actual[i])
		}
		mark := " "
		if l != r {
			mark = "!"
		}
		if len(l) > width {
			l = l[:width-1] + "…"
		}
		fmt.Fprintf(b, "%s%s %-*s | %s\n", indent, mark, width, l, r)
	}
}

// visible shows tabs and line ends so whitespace conflicts can be seen.
func visible(s string) string {
	s = strings.TrimSuffix(s, "\n")
	s = strings.ReplaceAll(s, "\r", `\r`)
	return strings.ReplaceAll(s, "\t", "→   ")
}

func applyMarkdown(w io.Writer, results []Apply) error {
	var b strings.Builder
	for _, r := range results {
		if r.Error != "" {
			fmt.Fprintf(&b, "### ❌ `%s` not applied\n\n%s\n\n", r.Image, mdEscapeErr(r.Error))
			continue
		}
		icon := "✅"
		if !r.OK {
			icon = "❌"
		}
		fmt.Fprintf(&b, "### %s `%s` on `%s` (`%s`)\n\n", icon, r.Image, r.Upstream.Ref, short(r.Upstream.Commit))
		b.WriteString("| patch | status | details |\n|---|---|---|\n")
		for _, p := range r.Patches {
			var details []string
			for _, e := range p.Errors {
				details = append(details, fmt.Sprintf("`%s:%d` %s", e.File, e.Line, e.Message))
			}
			if len(details) == 0 {
				details = append(details, strings.TrimSpace(strings.Trim(offsets(p.Hunks), " ()")))
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", mdCell(p.Name), p.Status, mdText(strings.Join(details, "\n")))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func applyGitHub(w io.Writer, results []Apply) error {
	var b strings.Builder
	for _, r := range results {
		if r.Error != "" {
			fmt.Fprintf(&b, "::error title=%s::%s\n", ghProp("patchkit apply"), ghEscape(r.Image+": not applied: "+r.Error))
			continue
		}
		for _, p := range r.Patches {
			for _, e := range p.Errors {
				msg := e.Message
				if e.Path != "" && !strings.Contains(msg, e.Path) {
					msg = e.Path + ": " + msg
				}
				if e.Hunk != "" {
					msg += "\n" + e.Hunk
				}
				fmt.Fprintf(&b, "::error file=%s,line=%d,title=%s::%s\n", ghProp(e.File), max(e.Line, 1), ghProp("patchkit apply "+e.Kind), ghEscape(msg))
			}
		}
		if r.OK {
			fmt.Fprintf(&b, "::notice title=patchkit apply::%s: %d patches apply to %s\n", ghEscape(r.Image), len(r.Patches), ghEscape(r.Upstream.Ref))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
