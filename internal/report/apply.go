package report

import (
	"fmt"
	"strings"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/untrusted"
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

// ApplyRun is one `patchkit apply` run.
type ApplyRun struct{ Run[Apply] }

// Command implements Result.
func (ApplyRun) Command() string { return "apply" }

// clean redacts the upstream URLs and the problems' text, and makes absent
// lists empty ones for the JSON.
func (r ApplyRun) clean() Result {
	for i := range r.Results {
		a := &r.Results[i]
		a.Upstream.URL = Redact(a.Upstream.URL)
		if a.Patches == nil {
			a.Patches = []apply.PatchResult{}
		}
		for j := range a.Patches {
			if a.Patches[j].Errors == nil {
				a.Patches[j].Errors = []apply.Problem{}
			}
			for k := range a.Patches[j].Errors {
				cleanProblem(&a.Patches[j].Errors[k])
			}
			for k := range a.Patches[j].Warnings {
				cleanProblem(&a.Patches[j].Warnings[k])
			}
		}
	}
	return r
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

// Text implements Texter.
func (run ApplyRun) Text() string {
	var b strings.Builder
	for _, r := range run.Results {
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
			for _, e := range p.Warnings {
				writeProblem(&b, "    warning: ", e)
			}
		}
		if r.Out != "" {
			fmt.Fprintf(&b, "  wrote %s\n", r.Out)
		}
	}
	return b.String()
}

func offsets(hunks []apply.HunkResult) string {
	var moved []string
	for _, h := range hunks {
		switch {
		case h.Fuzz != 0:
			moved = append(moved, fmt.Sprintf("%s %s offset %+d with fuzz %d", h.Path, strings.TrimSpace(hunkRange(h.Hunk)), h.Offset, h.Fuzz))
		case h.Offset != 0:
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

// visible is untrusted.Visible: tabs and line ends shown, so that
// whitespace conflicts can be seen.
func visible(s string) string { return untrusted.Visible(s) }

// Markdown implements Markdowner.
func (run ApplyRun) Markdown() string {
	var b strings.Builder
	for _, r := range run.Results {
		if r.Error != "" {
			fmt.Fprintf(&b, "### ❌ `%s` not applied\n\n%s\n\n", r.Image, untrusted.CodeSpan(r.Error))
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
	return b.String()
}

// GitHub implements GitHubber.
func (run ApplyRun) GitHub() string {
	var b strings.Builder
	for _, r := range run.Results {
		if r.Error != "" {
			annotate(&b, "error", "", 0, "patchkit apply", ghEscape(r.Image+": not applied: "+r.Error))
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
				annotate(&b, "error", e.File, max(e.Line, 1), "patchkit apply "+e.Kind, ghEscape(msg))
			}
		}
		if r.OK {
			annotate(&b, "notice", "", 0, "patchkit apply", fmt.Sprintf("%s: %d patches apply to %s", ghEscape(r.Image), len(r.Patches), ghEscape(r.Upstream.Ref)))
		}
	}
	return b.String()
}
