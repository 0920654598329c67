package report

import (
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/patchkit/patchkit/internal/gate"
	"github.com/patchkit/patchkit/internal/txn"
	"github.com/patchkit/patchkit/internal/upgrade"
)

// Upgrade is one `patchkit upgrade` run: the plan, whether it was written,
// and the gate's verdict on the result.
type Upgrade struct {
	Image  string `json:"image"`
	DryRun bool   `json:"dryRun"`
	OK     bool   `json:"ok"`
	*upgrade.Result
	// Gate is the gate's result on the new ref with the kept series, nil
	// when the spec has no test.
	Gate *gate.Result `json:"gate"`
	// DroppedTests are the tests the dropped patches owned, with their
	// status in the gate run: they must pass on the new ref without them.
	DroppedTests []TestStatus `json:"droppedTests,omitempty"`
	// Written is every file the run wrote or deleted, in order: empty for
	// a dry run, and for a failed one unless KeepConflicts asked for it.
	Written []txn.Done `json:"written"`
	// KeepConflicts is --keep-conflicts: a failed upgrade writes the rest.
	KeepConflicts bool `json:"keepConflicts,omitempty"`
}

// TestStatus is one test's status in a gate run ("" when it did not run).
type TestStatus struct {
	Name   string `json:"name"`
	Patch  string `json:"patch"`
	Status string `json:"status"`
}

// Refresh is one `patchkit refresh` run.
type Refresh struct {
	Image   string          `json:"image"`
	Ref     string          `json:"ref"`
	Patches []RefreshedFile `json:"patches"`
}

// RefreshedFile says whether refresh rewrote a patch.
type RefreshedFile struct {
	File    string `json:"file"`
	Changed bool   `json:"changed"`
}

// RenderUpgrade writes an upgrade in format f; markdown is fit for a pull
// request's body.
func RenderUpgrade(w io.Writer, f Format, u Upgrade) error {
	switch f {
	case JSON:
		return writeJSON(w, []Upgrade{u}, true)
	case Markdown:
		return upgradeMarkdown(w, u)
	}
	var b strings.Builder
	verb := "upgraded"
	switch {
	case u.DryRun:
		verb = "would upgrade (dry run, nothing written)"
	case len(u.Written) == 0 && !u.OK:
		verb = "did not upgrade"
	}
	p := u.Pin
	fmt.Fprintf(&b, "%s: %s %s (%s) -> %s (%s) in %s\n", u.Image, verb, p.From, short(p.FromCommit), p.To, short(p.ToCommit), p.File)
	for _, pf := range u.Patches {
		fmt.Fprintf(&b, "  %-9s %s: %s\n", pf.Fate, path.Base(pf.File), oneLine(pf.Evidence))
		for _, c := range pf.Conflicts {
			writeConflictText(&b, c)
		}
	}
	writeGateText(&b, u)
	for _, d := range u.Written {
		fmt.Fprintf(&b, "  %s\n", writtenLine(d))
	}
	fmt.Fprintf(&b, "%s\n", upgradeVerdict(u))
	s := b.String()
	if f == GitHub {
		s = neutralise(s)
	}
	_, err := io.WriteString(w, Redact(s))
	return err
}

func writeConflictText(b *strings.Builder, c upgrade.Conflict) {
	fmt.Fprintf(b, "      %s %s: %s\n", c.Path, c.Hunk, oneLine(c.Message))
	for _, l := range c.Expected {
		fmt.Fprintf(b, "        expected | %s\n", l)
	}
	for _, l := range c.Actual {
		fmt.Fprintf(b, "        found    | %s\n", l)
	}
}

func writeGateText(b *strings.Builder, u Upgrade) {
	if u.Gate == nil {
		b.WriteString("  gate: no test in the spec\n")
		return
	}
	fmt.Fprintf(b, "  gate %s: %s\n", passFail(u.Gate.OK), oneLine(u.Gate.Message))
	for _, t := range u.DroppedTests {
		fmt.Fprintf(b, "    %s (owned by dropped %s): %s\n", t.Name, path.Base(t.Patch), statusOrNotRun(t.Status))
	}
}

func statusOrNotRun(s string) string {
	if s == "" {
		return "did not run"
	}
	return s
}

func upgradeVerdict(u Upgrade) string {
	switch {
	case u.OK && u.DryRun:
		return "ok (dry run: nothing was written)"
	case u.OK:
		return fmt.Sprintf("ok: %d file(s) written", len(u.Written))
	case u.DryRun:
		return "FAILED: a patch conflicts or the gate failed (dry run: nothing was written)"
	case len(u.Written) == 0:
		return "FAILED: a patch conflicts or the gate failed; nothing was written (--keep-conflicts writes the rest of the upgrade)"
	}
	var left []string
	for _, p := range u.Patches {
		if p.Fate == upgrade.FateConflict {
			left = append(left, path.Base(p.File))
		}
	}
	msg := fmt.Sprintf("FAILED: a patch conflicts or the gate failed; as --keep-conflicts asked, %d file(s) were written (listed above)", len(u.Written))
	if len(left) > 0 {
		msg += "; left as they were: " + strings.Join(left, ", ")
	}
	return msg
}

// writtenLine says what the run did to one file.
func writtenLine(d txn.Done) string {
	verb := map[txn.Action]string{txn.ActionWrite: "wrote", txn.ActionCreate: "created", txn.ActionDelete: "deleted"}[d.Action]
	if d.Target != "" {
		return fmt.Sprintf("%s %s (through the link to %s)", verb, d.Path, d.Target)
	}
	return verb + " " + d.Path
}

func upgradeMarkdown(w io.Writer, u Upgrade) error {
	var b strings.Builder
	p := u.Pin
	fmt.Fprintf(&b, "## patchkit upgrade: %s %s → %s\n\n", u.Image, p.From, p.To)
	fmt.Fprintf(&b, "The pin moves from `%s` (`%s`) to `%s` (`%s`) in `%s`.\n\n", p.From, short(p.FromCommit), p.To, short(p.ToCommit), p.File)
	b.WriteString("| patch | fate | status at " + upCell(p.To) + " | evidence |\n|---|---|---|---|\n")
	for _, pf := range u.Patches {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", path.Base(pf.File), pf.Fate, pf.Status, upCell(pf.Evidence))
	}
	for _, pf := range u.Patches {
		if len(pf.Conflicts) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n### `%s` conflicts\n", path.Base(pf.File))
		for _, c := range pf.Conflicts {
			fmt.Fprintf(&b, "\n`%s` %s: %s\n\n```diff\n", c.Path, upCell(c.Hunk), upCell(c.Message))
			for _, l := range c.Expected {
				fmt.Fprintf(&b, "- %s\n", l)
			}
			for _, l := range c.Actual {
				fmt.Fprintf(&b, "+ %s\n", l)
			}
			b.WriteString("```\n(- expected, + found)\n")
		}
	}
	b.WriteString("\n### Gate\n\n")
	if u.Gate == nil {
		b.WriteString("The spec has no test.\n")
	} else {
		fmt.Fprintf(&b, "**%s**: %s\n", passFail(u.Gate.OK), upCell(u.Gate.Message))
		for _, t := range u.DroppedTests {
			fmt.Fprintf(&b, "- `%s` (owned by dropped `%s`): %s\n", t.Name, path.Base(t.Patch), statusOrNotRun(t.Status))
		}
	}
	if len(u.Written) > 0 {
		b.WriteString("\n### Written\n\n")
		for _, d := range u.Written {
			fmt.Fprintf(&b, "- %s\n", upCell(writtenLine(d)))
		}
	}
	fmt.Fprintf(&b, "\n%s\n", upgradeVerdict(u))
	_, err := io.WriteString(w, Redact(b.String()))
	return err
}

// RenderRefresh writes a refresh in format f.
func RenderRefresh(w io.Writer, f Format, r Refresh) error {
	if f == JSON {
		return writeJSON(w, []Refresh{r}, true)
	}
	var b strings.Builder
	n := 0
	for _, p := range r.Patches {
		if p.Changed {
			n++
			fmt.Fprintf(&b, "  rewrote %s\n", p.File)
		}
	}
	fmt.Fprintf(&b, "%s: %d of %d patches rewritten canonically at %s\n", r.Image, n, len(r.Patches), r.Ref)
	_, err := io.WriteString(w, Redact(b.String()))
	return err
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// upCell is one line of text for a markdown table cell or heading.
func upCell(s string) string { return mdText(strings.ReplaceAll(oneLine(s), "`", "'")) }

// neutralise keeps a line from reading as a workflow command.
func neutralise(s string) string {
	ls := strings.Split(s, "\n")
	for i, l := range ls {
		if strings.HasPrefix(strings.TrimSpace(l), "::") {
			ls[i] = " " + strings.Replace(l, "::", ":\u200b:", 1)
		}
	}
	return strings.Join(ls, "\n")
}
