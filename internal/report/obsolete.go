package report

import (
	"fmt"
	"strings"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/obsolete"
	"github.com/patchkit/patchkit/internal/untrusted"
)

// Obsolete is the result of `patchkit obsolete-check` for one image.
type Obsolete struct {
	Image string
	// Unit is the image unit's directory relative to the root.
	Unit   string
	Report *obsolete.Report
	// Write says --write was given; Written lists the Applied-Upstream
	// fields it changed.
	Write   bool
	Written []obsolete.Written
	// Error says why this unit could not be checked (its upstream could not
	// be fetched, its spec does not load) when others were: Report is nil,
	// and ExitCode is the exit code the error alone would give.
	Error    string
	ExitCode int
}

// obsoleteErrorJSON is a unit that could not be checked.
type obsoleteErrorJSON struct {
	Image    string `json:"image"`
	Unit     string `json:"unit,omitempty"`
	OK       bool   `json:"ok"`
	Error    string `json:"error"`
	ExitCode int    `json:"exitCode"`
}

// obsoleteJSON is the JSON shape DESIGN.md fixes, with the evidence added.
type obsoleteJSON struct {
	Image     string `json:"image"`
	Unit      string `json:"unit,omitempty"`
	URL       string `json:"url"`
	Pin       string `json:"pin"`
	PinCommit string `json:"pinCommit"`
	// Refs are the scanned ref names, in scan order; RefsInfo says more.
	Refs     []string           `json:"refs"`
	RefsInfo []obsolete.Ref     `json:"refsInfo"`
	Skipped  []obsolete.Skipped `json:"skipped"`
	OK       bool               `json:"ok"`
	Patches  []obsoletePatch    `json:"patches"`
	Written  []obsolete.Written `json:"written,omitempty"`
}

type obsoletePatch struct {
	File            string           `json:"file"`
	ObsoletedBy     *string          `json:"obsoletedBy"`
	Prerelease      string           `json:"obsoletedByPrerelease,omitempty"`
	Commit          *string          `json:"commit"`
	Evidence        string           `json:"evidence,omitempty"`
	NeededAgainAt   string           `json:"neededAgainAt,omitempty"`
	AppliedUpstream string           `json:"appliedUpstream,omitempty"`
	Results         []obsoleteResult `json:"results"`
}

type obsoleteResult struct {
	Ref      string             `json:"ref"`
	Status   string             `json:"status"`
	Commit   *string            `json:"commit"`
	Subject  string             `json:"subject,omitempty"`
	Via      string             `json:"via"`
	Evidence string             `json:"evidence"`
	Offsets  []apply.HunkResult `json:"offsets,omitempty"`
	Hunks    []obsolete.Hunk    `json:"hunks,omitempty"`
	// Commits are the upstream commits that carry the change or some of
	// its hunks, with which hunks each carries or rewrote.
	Commits    []obsolete.Carrier  `json:"commits,omitempty"`
	AddedLines *obsolete.LineMatch `json:"addedLines,omitempty"`
	Conflict   *apply.Problem      `json:"conflict,omitempty"`
	// Bump and Code are the two parts of a dependency-bump patch's verdict
	// (docs/obsolete-check.md).
	Bump *obsolete.BumpPart `json:"bump,omitempty"`
	Code *obsolete.CodePart `json:"code,omitempty"`
	// Removed names the files upstream deleted, when every file the patch
	// modifies is gone (the status stays conflict; the tables say removed).
	Removed *obsolete.Removed `json:"removed,omitempty"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (o Obsolete) json() obsoleteJSON {
	r := o.Report
	out := obsoleteJSON{
		Image: o.Image, Unit: o.Unit, URL: Redact(r.URL), Pin: r.Pin, PinCommit: r.PinCommit,
		Refs: []string{}, RefsInfo: r.Refs, Skipped: r.Skipped, OK: !r.Findings(), Patches: []obsoletePatch{},
	}
	if out.Skipped == nil {
		out.Skipped = []obsolete.Skipped{}
	}
	if out.RefsInfo == nil {
		out.RefsInfo = []obsolete.Ref{}
	}
	for _, ref := range r.Refs {
		out.Refs = append(out.Refs, ref.Name)
	}
	for i := range r.Patches {
		p := &r.Patches[i]
		jp := obsoletePatch{
			File: p.File, ObsoletedBy: nullable(p.ObsoletedBy), Prerelease: p.ObsoletedByPrerelease, Commit: nullable(p.Commit),
			NeededAgainAt: p.NeededAgainAt, Results: []obsoleteResult{},
		}
		if p.Patch != nil {
			jp.AppliedUpstream = p.Patch.Header.AppliedUpstream
		}
		if res := p.Obsoleting(); res != nil {
			jp.Evidence = res.Evidence
		}
		for _, res := range p.Results {
			jr := obsoleteResult{
				Ref: res.Ref, Status: res.Status, Commit: nullable(res.Commit), Subject: res.Subject,
				Via: res.Via, Evidence: res.Evidence, Offsets: res.Offsets, Hunks: res.Hunks,
				Commits: res.Commits, AddedLines: res.AddedLines, Conflict: res.Conflict, Bump: res.Bump, Code: res.Code,
			}
			if res.TargetRemoved() {
				jr.Removed = res.Removed
			}
			jp.Results = append(jp.Results, jr)
		}
		out.Patches = append(out.Patches, jp)
	}
	if o.Write {
		out.Written = o.Written
		if out.Written == nil {
			out.Written = []obsolete.Written{}
		}
	}
	return out
}

// ObsoleteRun is one `patchkit obsolete-check` run: a result per image.
type ObsoleteRun struct{ Run[Obsolete] }

// Command implements Result.
func (ObsoleteRun) Command() string { return "obsolete-check" }

// JSON implements JSONer: the shape DESIGN.md fixes, an error object for a
// unit that could not be checked.
func (run ObsoleteRun) JSON() any {
	items := make([]any, len(run.Results))
	for i, r := range run.Results {
		if r.Report == nil {
			items[i] = obsoleteErrorJSON{Image: r.Image, Unit: r.Unit, Error: r.Error, ExitCode: r.ExitCode}
			continue
		}
		items[i] = r.json()
	}
	return jsonItems(items, run.Single)
}

// cellRemoved is the table cell of a result whose target upstream removed
// (obsolete.Result.TargetRemoved): its status is conflict.
const cellRemoved = "removed"

// statusCell is a result's status in the tables: its status, or removed.
func statusCell(res obsolete.Result) string {
	if res.TargetRemoved() {
		return cellRemoved
	}
	return res.Status
}

// refGroup is a run of consecutive refs, of the same kind, at which every
// patch has the same status: tables show it as one column.
type refGroup struct{ first, last int }

func groupRefs(r *obsolete.Report) []refGroup {
	var out []refGroup
	same := func(a, b int) bool {
		ra, rb := r.Refs[a], r.Refs[b]
		if ra.Kind != rb.Kind || ra.NonSemver != rb.NonSemver || ra.Kind != obsolete.KindTag {
			return false
		}
		for _, p := range r.Patches {
			if statusCell(p.Results[a]) != statusCell(p.Results[b]) {
				return false
			}
		}
		return true
	}
	for i := range r.Refs {
		if n := len(out); n > 0 && same(out[n-1].last, i) {
			out[n-1].last = i
			continue
		}
		out = append(out, refGroup{i, i})
	}
	return out
}

func (g refGroup) label(r *obsolete.Report) string {
	name := func(i int) string {
		if r.Refs[i].NonSemver {
			return r.Refs[i].Name + "*"
		}
		return r.Refs[i].Name
	}
	if g.first == g.last {
		return name(g.first)
	}
	return fmt.Sprintf("%s..%s (%d)", name(g.first), name(g.last), g.last-g.first+1)
}

func hasNonSemver(r *obsolete.Report) bool {
	for _, ref := range r.Refs {
		if ref.NonSemver {
			return true
		}
	}
	return false
}

// obsoletedCell says which release obsoleted a patch, or "-".
func obsoletedCell(p *obsolete.PatchReport) string {
	if p.ObsoletedBy == "" {
		if p.ObsoletedByPrerelease != "" {
			s := "no final release yet; prerelease " + p.ObsoletedByPrerelease
			if p.NeededAgainAt != "" {
				s += ", needed again at " + p.NeededAgainAt
			}
			return s
		}
		return "-"
	}
	s := fmt.Sprintf("%s (%s)", p.ObsoletedBy, obsolete.Short(p.Commit))
	if p.ObsoletedByPrerelease != "" {
		s += ", first in prerelease " + p.ObsoletedByPrerelease
	}
	if p.NeededAgainAt != "" {
		s += ", needed again at " + p.NeededAgainAt
	}
	return s
}

// maxTextColumns is the number of ref columns above which the text table
// turns: one row per run of refs, one column per patch.
const maxTextColumns = 6

// Text implements Texter.
func (run ObsoleteRun) Text() string {
	var b strings.Builder
	for n, o := range run.Results {
		if n > 0 {
			b.WriteString("\n")
		}
		if o.Report == nil {
			fmt.Fprintf(&b, "%s: not checked: %s\n", o.Image, o.Error)
			continue
		}
		r := o.Report
		pin := r.Pin
		if r.PinCommit != "" && r.PinCommit != r.Pin {
			pin += " (" + obsolete.Short(r.PinCommit) + ")"
		}
		fmt.Fprintf(&b, "%s: %s against %s, pinned at %s; %s scanned\n",
			o.Image, plural(len(r.Patches), "patch", "patches"), Redact(r.URL), pin, plural(len(r.Refs), "ref", "refs"))
		if len(r.Refs) == 0 {
			b.WriteString("  no upstream ref newer than the pin matches upstream.releases, and no branch is configured\n")
			for _, line := range skippedLines(r) {
				b.WriteString("  " + line + "\n")
			}
			continue
		}
		groups := groupRefs(r)
		if len(groups) <= maxTextColumns {
			textByPatch(&b, r, groups)
		} else {
			textByRef(&b, r, groups)
		}
		if hasNonSemver(r) {
			b.WriteString("  * not a semantic version: ordered by commit date, after the versions\n")
		}
		for _, line := range skippedLines(r) {
			b.WriteString("  " + line + "\n")
		}
		textEvidence(&b, r)
		if o.Write {
			if len(o.Written) == 0 {
				b.WriteString("  --write: every Applied-Upstream field is up to date\n")
			}
			for _, wr := range o.Written {
				if wr.Previous != "" {
					fmt.Fprintf(&b, "  wrote %s: Applied-Upstream: %s (was %s)\n", wr.File, wr.AppliedUpstream, wr.Previous)
				} else {
					fmt.Fprintf(&b, "  wrote %s: Applied-Upstream: %s\n", wr.File, wr.AppliedUpstream)
				}
			}
		}
	}
	return b.String()
}

// skippedLines says which release tags were not scanned, one line per
// reason: "skipped 3 release tags (the pin contains them): v1.0.0, ...".
func skippedLines(r *obsolete.Report) []string {
	var reasons []string
	byReason := map[string][]string{}
	for _, s := range r.Skipped {
		if _, ok := byReason[s.Reason]; !ok {
			reasons = append(reasons, s.Reason)
		}
		byReason[s.Reason] = append(byReason[s.Reason], s.Ref)
	}
	var out []string
	for _, reason := range reasons {
		refs := byReason[reason]
		out = append(out, fmt.Sprintf("skipped %s (%s): %s", plural(len(refs), "release tag", "release tags"), reason, strings.Join(refs, ", ")))
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// writeTable writes rows as left-aligned columns, indented, two spaces apart.
func writeTable(b *strings.Builder, indent string, rows [][]string) {
	var width []int
	for _, row := range rows {
		for i, c := range row {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for _, row := range rows {
		line := indent
		for i, c := range row {
			if i == len(row)-1 {
				line += c
				break
			}
			line += c + strings.Repeat(" ", width[i]-len([]rune(c))+2)
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
}

func textByPatch(b *strings.Builder, r *obsolete.Report, groups []refGroup) {
	head := []string{"PATCH"}
	for _, g := range groups {
		head = append(head, g.label(r))
	}
	head = append(head, "OBSOLETED BY")
	rows := [][]string{head}
	for i := range r.Patches {
		p := &r.Patches[i]
		row := []string{p.File}
		for _, g := range groups {
			row = append(row, statusCell(p.Results[g.first]))
		}
		rows = append(rows, append(row, obsoletedCell(p)))
	}
	writeTable(b, "  ", rows)
}

func textByRef(b *strings.Builder, r *obsolete.Report, groups []refGroup) {
	rows := [][]string{}
	for i := range r.Patches {
		p := &r.Patches[i]
		rows = append(rows, []string{fmt.Sprintf("#%d", i+1), p.File, "obsoleted by " + obsoletedCell(p)})
	}
	writeTable(b, "  ", rows)
	b.WriteString("\n")
	head := []string{"REF"}
	for i := range r.Patches {
		head = append(head, fmt.Sprintf("#%d", i+1))
	}
	rows = [][]string{head}
	for _, g := range groups {
		row := []string{g.label(r)}
		for i := range r.Patches {
			row = append(row, statusCell(r.Patches[i].Results[g.first]))
		}
		rows = append(rows, row)
	}
	writeTable(b, "  ", rows)
}

// evidenceRun is a run of consecutive refs at which a patch has the same
// evidence.
type evidenceRun struct {
	first, last int
	res         obsolete.Result
}

func evidenceRuns(p *obsolete.PatchReport) []evidenceRun {
	var out []evidenceRun
	key := func(r obsolete.Result) string { return r.Status + "\x00" + r.Via + "\x00" + r.Evidence }
	for i, res := range p.Results {
		if n := len(out); n > 0 && key(out[n-1].res) == key(res) {
			out[n-1].last = i
			continue
		}
		out = append(out, evidenceRun{i, i, res})
	}
	return out
}

func (e evidenceRun) refs(r *obsolete.Report) string {
	if e.first == e.last {
		return r.Refs[e.first].Name
	}
	return r.Refs[e.first].Name + ".." + r.Refs[e.last].Name
}

// textEvidence writes, per patch, the evidence of each run of refs, but for
// refs where it simply applies.
func textEvidence(b *strings.Builder, r *obsolete.Report) {
	started := false
	for i := range r.Patches {
		p := &r.Patches[i]
		shown := false
		conflictShown := false
		for k, run := range evidenceRuns(p) {
			res := run.res
			if k == 0 && res.Status == obsolete.StatusApplies && len(offsetsMoved(res.Offsets)) == 0 {
				continue
			}
			if !started {
				b.WriteString("\n")
				started = true
			}
			if !shown {
				fmt.Fprintf(b, "  %s\n", p.File)
				shown = true
			}
			if c := res.Conflict; c != nil && !conflictShown && res.Status == obsolete.StatusPartial {
				// What is upstream, and by which commits, first; then the
				// first hunk that needs a refresh.
				conflictShown = true
				fmt.Fprintf(b, "    %s: %s: %s\n", run.refs(r), res.Status, res.Evidence)
				writeProblem(b, "      ", *c)
				continue
			}
			if c := res.Conflict; c != nil && !conflictShown {
				// The problem says what the evidence says, and shows the hunk.
				conflictShown = true
				fmt.Fprintf(b, "    %s: %s\n", run.refs(r), res.Status)
				writeProblem(b, "      ", *c)
				if rest, ok := strings.CutPrefix(res.Evidence, c.Message); ok {
					rest = strings.TrimPrefix(rest, fmt.Sprintf(" (patch line %d)", c.Line))
					if more, ok := strings.CutPrefix(rest, "; "); ok {
						fmt.Fprintf(b, "      %s\n", more)
					}
				}
				continue
			}
			fmt.Fprintf(b, "    %s: %s: %s\n", run.refs(r), res.Status, res.Evidence)
		}
	}
}

func offsetsMoved(hs []apply.HunkResult) []apply.HunkResult {
	var out []apply.HunkResult
	for _, h := range hs {
		if h.Offset != 0 {
			out = append(out, h)
		}
	}
	return out
}

var mdStatus = map[string]string{
	obsolete.StatusApplies:    "applies",
	obsolete.StatusPresent:    "🟢 **present**",
	obsolete.StatusSuperseded: "🟢 **superseded**",
	obsolete.StatusPartial:    "🟡 **partial**",
	obsolete.StatusConflict:   "🔴 **conflict**",
	cellRemoved:               "⚪ **removed**",
}

// Markdown implements Markdowner.
func (run ObsoleteRun) Markdown() string {
	var b strings.Builder
	for _, o := range run.Results {
		if o.Report == nil {
			fmt.Fprintf(&b, "### obsolete-check: `%s` not checked\n\n%s\n\n", o.Image, untrusted.CodeSpan(o.Error))
			continue
		}
		r := o.Report
		fmt.Fprintf(&b, "### obsolete-check: `%s` pinned at `%s` (`%s`)\n\n", o.Image, r.Pin, obsolete.Short(r.PinCommit))
		if len(r.Refs) == 0 {
			b.WriteString("No upstream ref newer than the pin to scan.\n\n")
			mdSkipped(&b, r)
			continue
		}
		groups := groupRefs(r)
		b.WriteString("| patch |")
		for _, g := range groups {
			fmt.Fprintf(&b, " `%s` |", mdCell(g.label(r)))
		}
		b.WriteString(" first obsoleting release | evidence |\n|---|")
		for range groups {
			b.WriteString("---|")
		}
		b.WriteString("---|---|\n")
		for i := range r.Patches {
			p := &r.Patches[i]
			fmt.Fprintf(&b, "| `%s` |", mdCell(p.File))
			for _, g := range groups {
				fmt.Fprintf(&b, " %s |", mdStatus[statusCell(p.Results[g.first])])
			}
			first, ev := "", ""
			if res := p.Obsoleting(); res != nil {
				first = fmt.Sprintf("`%s` (`%s`)", p.ObsoletedBy, obsolete.Short(p.Commit))
				if p.ObsoletedByPrerelease != "" {
					first += fmt.Sprintf(", first in prerelease `%s`", p.ObsoletedByPrerelease)
				}
				if p.NeededAgainAt != "" {
					first += fmt.Sprintf(", needed again at `%s`", p.NeededAgainAt)
				}
				ev = res.Evidence
			} else {
				if p.ObsoletedByPrerelease != "" {
					first = fmt.Sprintf("no final release yet; prerelease `%s`", p.ObsoletedByPrerelease)
				}
				for _, res := range p.Results {
					if res.Finding() {
						ev = fmt.Sprintf("at `%s`: %s", res.Ref, res.Evidence)
						break
					}
				}
			}
			fmt.Fprintf(&b, " %s | %s |\n", mdText(first), mdText(ev))
		}
		if hasNonSemver(r) {
			b.WriteString("\n\\* not a semantic version: ordered by commit date, after the versions.\n")
		}
		if len(r.Skipped) > 0 {
			b.WriteString("\n")
			mdSkipped(&b, r)
		}
		for _, wr := range o.Written {
			fmt.Fprintf(&b, "\nWrote `Applied-Upstream: %s` to `%s`.\n", wr.AppliedUpstream, mdCell(wr.File))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// mdSkipped writes the skipped release tags, one line per reason.
func mdSkipped(b *strings.Builder, r *obsolete.Report) {
	for _, line := range skippedLines(r) {
		b.WriteString(mdText(line) + "  \n")
	}
}

// GitHub implements GitHubber.
func (run ObsoleteRun) GitHub() string {
	var b strings.Builder
	onPatch := func(level, file string, line int, title, msg string) {
		annotate(&b, level, file, max(line, 1), title, ghEscape(msg))
	}
	for _, o := range run.Results {
		if o.Report == nil {
			annotate(&b, "error", "", 0, "patchkit obsolete-check", ghEscape(o.Image+": not checked: "+o.Error))
			continue
		}
		r := o.Report
		counts := map[string]int{}
		for i := range r.Patches {
			p := &r.Patches[i]
			headerLine := 1
			if p.Patch != nil {
				for _, f := range p.Patch.Header.Fields {
					if strings.EqualFold(f.Key, obsolete.AppliedUpstreamKey) {
						headerLine = f.Line
					}
				}
			}
			done := map[string]bool{}
			if res := p.Obsoleting(); res != nil {
				msg := fmt.Sprintf("%s is %s in upstream %s (%s): %s. Remove the patch when moving to %s, and record it with Applied-Upstream: %s.",
					p.File, res.Status, p.ObsoletedBy, obsolete.Short(p.Commit), res.Evidence, p.ObsoletedBy, p.ObsoletedBy)
				if p.NeededAgainAt != "" {
					msg += fmt.Sprintf(" Upstream needs it again at %s.", p.NeededAgainAt)
				}
				onPatch("warning", p.File, headerLine, "patchkit obsolete-check: obsolete", msg)
				done[res.Status] = true
				counts["obsolete"]++
			}
			for _, res := range p.Results {
				if !res.Finding() || done[statusCell(res)] {
					continue
				}
				done[statusCell(res)] = true
				switch {
				case res.TargetRemoved():
					counts["removed"]++
					onPatch("error", p.File, headerLine, "patchkit obsolete-check: removed",
						fmt.Sprintf("%s: upstream removed what it patches at %s: %s", p.File, res.Ref, res.Evidence))
				case res.Status == obsolete.StatusConflict:
					counts["conflict"]++
					file, line, msg := p.File, 1, fmt.Sprintf("%s no longer applies to upstream %s: %s", p.File, res.Ref, res.Evidence)
					if c := res.Conflict; c != nil {
						if c.File != "" {
							file = c.File
						}
						line = c.Line
						if c.Hunk != "" {
							msg += "\n" + c.Hunk
						}
					}
					onPatch("error", file, line, "patchkit obsolete-check: conflict", msg)
				case res.Status == obsolete.StatusPartial:
					counts["partial"]++
					line := 1
					for _, h := range res.Hunks {
						if h.Status == obsolete.StatusPresent {
							line = h.Line
							break
						}
					}
					onPatch("warning", p.File, line, "patchkit obsolete-check: partial",
						fmt.Sprintf("%s is partly upstream at %s: %s", p.File, res.Ref, res.Evidence))
				default:
					onPatch("warning", p.File, headerLine, "patchkit obsolete-check: "+res.Status,
						fmt.Sprintf("%s is %s at upstream %s: %s", p.File, res.Status, res.Ref, res.Evidence))
				}
			}
		}
		summary := fmt.Sprintf("%s: %s, %s scanned: %d obsoleted by a release, %d partly upstream, %d in conflict",
			o.Image, plural(len(r.Patches), "patch", "patches"), plural(len(r.Refs), "ref", "refs"), counts["obsolete"], counts["partial"], counts["conflict"])
		if n := counts["removed"]; n > 0 {
			summary += fmt.Sprintf(", %d with their target removed", n)
		}
		annotate(&b, "notice", "", 0, "patchkit obsolete-check", ghEscape(summary))
		for _, wr := range o.Written {
			annotate(&b, "notice", wr.File, 1, "patchkit obsolete-check", ghEscape("wrote Applied-Upstream: "+wr.AppliedUpstream))
		}
	}
	return b.String()
}
