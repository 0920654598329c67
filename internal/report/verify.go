package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/patchkit/patchkit/internal/verify"
)

// RenderVerify writes verify results in format f. single says whether the
// command was given exactly one image (JSON: one object, else an array).
// Every message is redacted (Redact). Text lists the checks that did not
// pass and the passes, patch by patch, without the skips (they are counted);
// markdown is a PR comment; github is one annotation per failed or warning
// check, on the patch file and line.
func RenderVerify(w io.Writer, f Format, results []verify.Result, single bool) error {
	results = cleanVerify(results)
	switch f {
	case JSON:
		return writeJSON(w, results, single)
	case Markdown:
		return VerifySummary(w, results)
	case GitHub:
		return verifyGitHub(w, results)
	default:
		return verifyText(w, results)
	}
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

func verifyText(w io.Writer, results []verify.Result) error {
	var b strings.Builder
	for _, r := range results {
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
	_, err := io.WriteString(w, b.String())
	return err
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
	results = cleanVerify(results)
	var b strings.Builder
	for _, r := range results {
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
			fence := "```"
			for strings.Contains(rest, fence) {
				fence += "`"
			}
			fmt.Fprintf(&b, "<details><summary><code>%s</code> %s: %s</summary>\n\n%s\n%s\n%s\n\n</details>\n\n",
				htmlEscape(c.Patch), c.Check, htmlEscape(first), fence, rest, fence)
		}
		fmt.Fprintf(&b, "%s.\n\n", strings.ToUpper(tally(n)[:1])+tally(n)[1:])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func verifyGitHub(w io.Writer, results []verify.Result) error {
	var b strings.Builder
	for _, r := range results {
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
			fmt.Fprintf(&b, "::%s file=%s,line=%d,title=%s::%s\n", level, ghProp(c.Patch), max(c.Line, 1),
				ghProp("patchkit verify "+c.Check), ghEscape(c.Message))
		}
		if r.OK {
			fmt.Fprintf(&b, "::notice title=patchkit verify::%s: %s\n", ghEscape(r.Image), ghEscape(tally(counts(r))))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
