package report

import (
	"fmt"
	"path"
	"strings"

	"github.com/patchkit/patchkit/internal/gate"
	"github.com/patchkit/patchkit/internal/txn"
	"github.com/patchkit/patchkit/internal/untrusted"
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

// Command implements Result.
func (Upgrade) Command() string { return "upgrade" }

// Text implements Texter.
func (u Upgrade) Text() string {
	var b strings.Builder
	verb := "upgraded"
	switch {
	case u.DryRun:
		verb = "would upgrade (dry run, nothing written)"
	case len(u.Written) == 0 && !u.OK:
		verb = "did not upgrade"
	}
	p := u.Pin
	switch {
	case u.NewUnit != "":
		fmt.Fprintf(&b, "%s: %s %s: %s (%s) -> %s (%s) in %s\n", u.Image, intoVerb(u), u.NewUnit, p.From, short(p.FromCommit), p.To, short(p.ToCommit), p.File)
	default:
		fmt.Fprintf(&b, "%s: %s %s (%s) -> %s (%s) in %s\n", u.Image, verb, p.From, short(p.FromCommit), p.To, short(p.ToCommit), p.File)
	}
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
	return Redact(b.String())
}

// intoVerb says what upgrade --into did: "copied into", "would copy into".
func intoVerb(u Upgrade) string {
	switch {
	case u.DryRun:
		return "would copy (dry run, nothing written) into"
	case len(u.Written) == 0 && !u.OK:
		return "did not copy into"
	}
	return "copied into"
}

// GitHub implements GitHubber: a notice on each dropped patch, an error on
// each conflict (its expected and found lines in the message), on a failed
// gate and on each dropped patch's test that did not pass, then the verdict
// (a notice, or an error when the upgrade failed).
func (u Upgrade) GitHub() string {
	var b strings.Builder
	for _, pf := range u.Patches {
		switch pf.Fate {
		case upgrade.FateDropped:
			annotate(&b, "notice", pf.File, 0, "patchkit upgrade: dropped", ghEscape(path.Base(pf.File)+": "+oneLine(pf.Evidence)))
		case upgrade.FateConflict:
			if len(pf.Conflicts) == 0 {
				annotate(&b, "error", pf.File, 0, "patchkit upgrade: conflict", ghEscape(path.Base(pf.File)+": "+oneLine(pf.Evidence)))
			}
			for _, c := range pf.Conflicts {
				var m strings.Builder
				writeConflictText(&m, c)
				annotate(&b, "error", pf.File, 0, "patchkit upgrade: conflict", ghEscape(strings.TrimSpace(m.String())))
			}
		}
	}
	if u.Gate != nil && !u.Gate.OK {
		annotate(&b, "error", "", 0, "patchkit upgrade: gate", ghEscape(u.Image+": gate FAILED: "+oneLine(u.Gate.Message)))
	}
	for _, t := range u.DroppedTests {
		if t.Status != gate.StatusPass {
			annotate(&b, "error", t.Patch, 0, "patchkit upgrade: dropped patch's test",
				ghEscape(fmt.Sprintf("%s (owned by dropped %s): %s", t.Name, path.Base(t.Patch), statusOrNotRun(t.Status))))
		}
	}
	for _, d := range u.Written {
		annotate(&b, "notice", "", 0, "patchkit upgrade: written", ghEscape(writtenLine(d)))
	}
	level := "notice"
	if !u.OK {
		level = "error"
	}
	p := u.Pin
	annotate(&b, level, "", 0, "patchkit upgrade",
		ghEscape(fmt.Sprintf("%s: %s (%s) -> %s (%s) in %s: %s", u.Image, p.From, short(p.FromCommit), p.To, short(p.ToCommit), p.File, upgradeVerdict(u))))
	return b.String()
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

// Markdown implements Markdowner: a pull request's body.
func (u Upgrade) Markdown() string {
	var b strings.Builder
	p := u.Pin
	fmt.Fprintf(&b, "## patchkit upgrade: %s %s → %s\n\n", u.Image, p.From, p.To)
	if u.NewUnit != "" {
		fmt.Fprintf(&b, "A new unit, `%s`, copied from `%s` and carried to `%s`; `%s` is left as it is.\n\n", mdCell(u.NewUnit), mdCell(u.Image), p.To, mdCell(u.Image))
	}
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
	return Redact(b.String())
}

// Command implements Result.
func (Refresh) Command() string { return "refresh" }

// rewritten counts the patches refresh rewrote.
func (r Refresh) rewritten() int {
	n := 0
	for _, p := range r.Patches {
		if p.Changed {
			n++
		}
	}
	return n
}

// verdict is the summary line: "x: 1 of 2 patches rewritten canonically at v1".
func (r Refresh) verdict() string {
	return fmt.Sprintf("%s: %d of %d patches rewritten canonically at %s", r.Image, r.rewritten(), len(r.Patches), r.Ref)
}

// Text implements Texter.
func (r Refresh) Text() string {
	var b strings.Builder
	for _, p := range r.Patches {
		if p.Changed {
			fmt.Fprintf(&b, "  rewrote %s\n", p.File)
		}
	}
	b.WriteString(r.verdict() + "\n")
	return Redact(b.String())
}

// Markdown implements Markdowner: a table of the patches, whether each was
// rewritten, and the count.
func (r Refresh) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "### patchkit refresh `%s` at `%s`\n\n", mdCell(r.Image), mdCell(r.Ref))
	if len(r.Patches) > 0 {
		b.WriteString("| patch | rewritten |\n|---|---|\n")
	}
	for _, p := range r.Patches {
		done := "no: canonical already"
		if p.Changed {
			done = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", mdCell(p.File), done)
	}
	fmt.Fprintf(&b, "\n%s.\n", mdText(r.verdict()))
	return b.String()
}

// GitHub implements GitHubber: a notice on each patch rewritten, then the
// count.
func (r Refresh) GitHub() string {
	var b strings.Builder
	for _, p := range r.Patches {
		if p.Changed {
			annotate(&b, "notice", p.File, 0, "patchkit refresh", ghEscape("rewrote canonically at "+r.Ref))
		}
	}
	annotate(&b, "notice", "", 0, "patchkit refresh", ghEscape(r.verdict()))
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// upCell is one line of text for a markdown table cell or heading.
func upCell(s string) string { return mdText(untrusted.Unticked(oneLine(s))) }

// UpToDate is an upgrade with nothing to do: no release newer than the
// pin. Its JSON is {"image","ok":true,"upToDate":true,"message"}.
type UpToDate struct {
	// Image is the image, or the chart unit's directory.
	Image string
	// Message says why: "no newer upstream release than v1.1.0 matching ...".
	Message string
}

// Command implements Result.
func (UpToDate) Command() string { return "upgrade" }

// JSON implements JSONer.
func (u UpToDate) JSON() any {
	return struct {
		Image    string `json:"image"`
		OK       bool   `json:"ok"`
		UpToDate bool   `json:"upToDate"`
		Message  string `json:"message"`
	}{u.Image, true, true, Redact(u.Message)}
}

// Text implements Texter.
func (u UpToDate) Text() string { return Redact(u.Image + ": " + u.Message + "\n") }

// Markdown implements Markdowner.
func (u UpToDate) Markdown() string {
	return fmt.Sprintf("## patchkit upgrade: %s is up to date\n\n%s.\n", upCell(u.Image), upCell(u.Message))
}

// GitHub implements GitHubber.
func (u UpToDate) GitHub() string {
	var b strings.Builder
	annotate(&b, "notice", "", 0, "patchkit upgrade", ghEscape(u.Image+": "+u.Message))
	return b.String()
}

// UnitFailed is a unit of an upgrade or refresh over several units that
// failed on its own (its error said, the others done): in JSON
// {"image", "error", "exitCode"}.
type UnitFailed struct {
	Image    string `json:"image"`
	Error    string `json:"error"`
	ExitCode int    `json:"exitCode"`
	// Verb says what did not happen: "not upgraded", "not refreshed".
	Verb string `json:"-"`
}

// Command implements Result.
func (UnitFailed) Command() string { return "upgrade" }

// Text implements Texter.
func (u UnitFailed) Text() string { return Redact(u.Image + ": " + u.Verb + ": " + u.Error + "\n") }

// Markdown implements Markdowner.
func (u UnitFailed) Markdown() string {
	return fmt.Sprintf("## ❌ %s %s\n\n%s\n", upCell(u.Image), u.Verb, untrusted.CodeSpan(Redact(u.Error)))
}

// GitHub implements GitHubber.
func (u UnitFailed) GitHub() string {
	var b strings.Builder
	annotate(&b, "error", "", 0, "patchkit", ghEscape(u.Image+": "+u.Verb+": "+u.Error))
	return b.String()
}

// Units is the run of upgrade or refresh over several units: each unit's
// result (Upgrade, UpToDate, Refresh or UnitFailed) in order. JSON is an
// array of their objects; the other formats are theirs, one after the
// other, a blank line between two in text.
type Units struct {
	Name    string
	Results []Result
}

// Command implements Result.
func (u Units) Command() string { return u.Name }

// JSON implements JSONer.
func (u Units) JSON() any {
	out := make([]any, 0, len(u.Results))
	for _, r := range u.Results {
		if c, ok := r.(cleaner); ok {
			r = c.clean()
		}
		var v any = r
		if j, ok := r.(JSONer); ok {
			v = j.JSON()
		}
		out = append(out, v)
	}
	return out
}

func (u Units) each(f func(Result) string, sep string) string {
	var parts []string
	for _, r := range u.Results {
		if c, ok := r.(cleaner); ok {
			r = c.clean()
		}
		parts = append(parts, f(r))
	}
	return strings.Join(parts, sep)
}

// Text implements Texter.
func (u Units) Text() string {
	return u.each(func(r Result) string { return r.(Texter).Text() }, "\n")
}

// Markdown implements Markdowner.
func (u Units) Markdown() string {
	return u.each(func(r Result) string { return r.(Markdowner).Markdown() }, "\n")
}

// GitHub implements GitHubber.
func (u Units) GitHub() string {
	return u.each(func(r Result) string { return r.(GitHubber).GitHub() }, "")
}
