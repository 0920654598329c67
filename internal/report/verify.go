package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/patchkit/patchkit/internal/untrusted"
	"github.com/patchkit/patchkit/internal/verify"
)

// VerifyRun is one `patchkit verify` run: a result per image. Every
// message is redacted. Text lists the checks that did not pass and the
// passes, patch by patch, without the skips (they are counted); markdown is
// a PR comment (VerifySummary); github is one annotation per failed or
// warning check, on the patch file and line.
type VerifyRun struct{ Run[verify.Result] }

// Command implements Result.
func (VerifyRun) Command() string { return "verify" }

func (r VerifyRun) clean() Result {
	r.Results = cleanVerify(r.Results)
	return r
}

func cleanVerify(in []verify.Result) []verify.Result {
	out := make([]verify.Result, len(in))
	for i, r := range in {
		checks := make([]verify.Check, len(r.Checks))
		for j, c := range r.Checks {
			c.Message = Redact(c.Message)
			checks[j] = c
		}
		r.Checks = checks
		out[i] = r
	}
	return out
}

// counts tallies a result's statuses.
func counts(r verify.Result) map[string]int {
	n := map[string]int{}
	for _, c := range r.Checks {
		n[c.Status]++
	}
	return n
}

func tally(n map[string]int) string {
	var parts []string
	for _, s := range []string{verify.StatusPass, verify.StatusFail, verify.StatusWarn, verify.StatusSkip} {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	if len(parts) == 0 {
		return "no checks"
	}
	return strings.Join(parts, ", ")
}

// Text implements Texter.
func (run VerifyRun) Text() string {
	var b strings.Builder
	for _, r := range run.Results {
		verdict := "ok"
		if !r.OK {
			verdict = "FAILED"
		}
		fmt.Fprintf(&b, "%s: %s (%s)\n", r.Image, verdict, tally(counts(r)))
		last := ""
		for _, c := range r.Checks {
			if c.Status == verify.StatusSkip {
				continue
			}
			if c.Patch != last {
				fmt.Fprintf(&b, "  %s\n", c.Patch)
				last = c.Patch
			}
			status := c.Status
			if status == verify.StatusFail {
				status = "FAIL"
			}
			first, rest, _ := strings.Cut(c.Message, "\n")
			loc := ""
			if c.Line > 0 && c.Status != verify.StatusPass {
				loc = fmt.Sprintf("line %d: ", c.Line)
			}
			fmt.Fprintf(&b, "    %-4s %-16s %s%s\n", status, c.Check, loc, first)
			if rest != "" {
				for _, l := range strings.Split(rest, "\n") {
					fmt.Fprintf(&b, "%27s%s\n", "", l)
				}
			}
		}
	}
	return b.String()
}

var statusIcon = map[string]string{
	verify.StatusPass: "✅",
	verify.StatusFail: "❌",
	verify.StatusWarn: "⚠️",
	verify.StatusSkip: "➖",
}

// VerifySummary writes verify results as markdown: per image, a heading, a
// table of the checks that failed or warned (or a line saying all passed),
// the details of multi-line messages in collapsed blocks, and the counts.
// It is the -o markdown output and the GitHub step summary.
func VerifySummary(w io.Writer, results []verify.Result) error {
	return Export(w, Markdown, VerifyRun{Run[verify.Result]{Results: results}})
}

// Markdown implements Markdowner (VerifySummary).
func (run VerifyRun) Markdown() string {
	var b strings.Builder
	for _, r := range run.Results {
		icon := statusIcon[verify.StatusPass]
		if !r.OK {
			icon = statusIcon[verify.StatusFail]
		}
		n := counts(r)
		fmt.Fprintf(&b, "### %s patchkit verify `%s`\n\n", icon, r.Image)
		var shown []verify.Check
		for _, c := range r.Checks {
			if c.Status == verify.StatusFail || c.Status == verify.StatusWarn {
				shown = append(shown, c)
			}
		}
		if len(shown) == 0 {
			fmt.Fprintf(&b, "All checks pass (%s).\n\n", tally(n))
			continue
		}
		b.WriteString("| patch | check | status | message |\n|---|---|---|---|\n")
		for _, c := range shown {
			loc := c.Patch
			if c.Line > 0 {
				loc = fmt.Sprintf("%s:%d", c.Patch, c.Line)
			}
			first, _, _ := strings.Cut(c.Message, "\n")
			fmt.Fprintf(&b, "| `%s` | %s | %s %s | %s |\n", mdCell(loc), c.Check, statusIcon[c.Status], c.Status, mdText(first))
		}
		b.WriteString("\n")
		for _, c := range shown {
			first, rest, ok := strings.Cut(c.Message, "\n")
			if !ok {
				continue
			}
			fence := untrusted.Fence(rest)
			fmt.Fprintf(&b, "<details><summary><code>%s</code> %s: %s</summary>\n\n%s\n%s\n%s\n\n</details>\n\n",
				htmlEscape(c.Patch), c.Check, htmlEscape(first), fence, rest, fence)
		}
		fmt.Fprintf(&b, "%s.\n\n", strings.ToUpper(tally(n)[:1])+tally(n)[1:])
	}
	return b.String()
}

func htmlEscape(s string) string { return untrusted.HTMLText(s) }

// GitHub implements GitHubber.
func (run VerifyRun) GitHub() string {
	var b strings.Builder
	for _, r := range run.Results {
		for _, c := range r.Checks {
			var level string
			switch c.Status {
			case verify.StatusFail:
				level = "error"
			case verify.StatusWarn:
				level = "warning"
			default:
				continue
			}
			annotate(&b, level, c.Patch, max(c.Line, 1), "patchkit verify "+c.Check, ghEscape(c.Message))
		}
		if r.OK {
			annotate(&b, "notice", "", 0, "patchkit verify", ghEscape(r.Image)+": "+ghEscape(tally(counts(r))))
		}
	}
	return b.String()
}
