package report

import (
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/patchkit/patchkit/internal/obsolete"
	"github.com/patchkit/patchkit/internal/status"
	"github.com/patchkit/patchkit/internal/untrusted"
	"github.com/patchkit/patchkit/internal/upstream"
)

// HTML is the format only `patchkit status` renders: one self-contained
// page (ParseStatusFormat).
const HTML Format = "html"

// ParseStatusFormat validates status's -o: ParseFormat's formats and html.
func ParseStatusFormat(s string) (Format, error) {
	if Format(s) == HTML {
		return HTML, nil
	}
	f, err := ParseFormat(s)
	if err != nil {
		return "", fmt.Errorf("-o %q: want text, json, markdown, github or html", s)
	}
	return f, nil
}

// StatusTitle is the title of the dashboard issue and of the html page.
const StatusTitle = "patchkit: carried patches"

// Status is `patchkit status`'s result: its only format besides the four
// is html; github is markdown, the format of an issue body or a job
// summary.
type Status struct{ *status.Report }

// Command implements Result.
func (Status) Command() string { return "status" }

// JSON implements JSONer: server text passed through untrusted.
func (r Status) JSON() any { return statusJSON(r.Report) }

// Text implements Texter.
func (r Status) Text() string { return statusText(r.Report) }

// Markdown implements Markdowner (StatusMarkdown).
func (r Status) Markdown() string { return StatusMarkdown(r.Report) }

// GitHub implements GitHubber: markdown.
func (r Status) GitHub() string { return StatusMarkdown(r.Report) }

// HTML implements HTMLer.
func (r Status) HTML(w io.Writer) error { return statusHTML(w, r.Report) }

// statusJSON passes the server text of r through untrusted.
func statusJSON(r *status.Report) *status.Report {
	cp := *r
	if cp.Shared == nil {
		cp.Shared = []status.Shared{}
	}
	cp.Units = make([]status.Unit, len(r.Units))
	for i, u := range r.Units {
		u.Patches = append([]status.Patch(nil), u.Patches...)
		for k := range u.Patches {
			up := &u.Patches[k].Upstream
			up.Title, up.User, up.Note, up.URL = Redact(up.Title), Redact(up.User), Redact(up.Note), Redact(up.URL)
			u.Patches[k].Evidence = Redact(u.Patches[k].Evidence)
		}
		u.URL, u.Error = Redact(u.URL), Redact(u.Error)
		cp.Units[i] = u
	}
	return &cp
}

// upstreamState is the state cell: "merged in v1.2.0", "released in v1.15.14".
func upstreamState(u status.Upstream) string {
	s := u.State
	if u.Release != "" {
		s += " in " + u.Release
	}
	return s
}

func addedCell(p status.Patch) string {
	if p.Added == nil {
		return "uncommitted"
	}
	return p.Added.UTC().Format("2006-01-02")
}

// findingText says what a finding asks for.
var findingText = map[string]string{
	status.FindingDroppable:      "droppable: the newest release carries it",
	status.FindingNoUpstream:     "original change with no upstream PR or issue: carried forever until forwarded (patchkit forward)",
	status.FindingNoPR:           "original change with no upstream PR (only an issue): forward it (patchkit forward)",
	status.FindingClosedUnmerged: "its upstream PR was closed unmerged",
	status.FindingConflict:       "no longer applies at the newest release: refresh it",
	status.FindingRemoved:        "upstream removed what it patches by the newest release: drop it or rewrite it for what replaced it",
}

// findingSay is findingText, with the release for droppable: "droppable
// since v1.15.14: the newest release carries it".
func findingSay(p status.Patch, f string) string {
	if f == status.FindingDroppable && p.ObsoletedBy != "" {
		return "droppable since " + p.ObsoletedBy + ": the newest release carries it"
	}
	return findingText[f]
}

// verdictCell is a patch's verdict in the tables: removed for a conflict
// whose target upstream removed.
func verdictCell(p status.Patch) string {
	if p.Verdict == obsolete.StatusConflict && p.Removed != nil {
		return cellRemoved
	}
	return p.Verdict
}

// lineCell says whether the pin is behind the newest patch release of its
// minor line: "; v1.14.3 behind v1.14.7, the newest v1.14 release".
func lineCell(u status.Unit) string {
	if u.LineBehind == 0 {
		return ""
	}
	line, _ := upstream.MinorLine(u.Pin)
	return fmt.Sprintf("; %s behind %s, the newest %s release", u.Pin, u.LineNewest, line)
}

// sharedNames names a group's units: the first by its directory, the
// others by what differs from it ("projects/o/r/1-33, 1-34, 1-35").
func sharedNames(dirs []string) string {
	out := []string{dirs[0]}
	parent := path.Dir(dirs[0]) + "/"
	for _, d := range dirs[1:] {
		out = append(out, strings.TrimPrefix(d, parent))
	}
	return strings.Join(out, ", ")
}

func behindCell(u status.Unit) string {
	if u.Behind == 0 {
		return "up to date"
	}
	return fmt.Sprintf("%s behind", plural(u.Behind, "release", "releases"))
}

func statusText(r *status.Report) string {
	var b strings.Builder
	for _, u := range r.Units {
		if u.Error != "" {
			fmt.Fprintf(&b, "%s: error: %s\n\n", u.Name, u.Error)
			continue
		}
		g, shared := r.SharedOf(u.Dir)
		switch {
		case shared && g.Units[0] != u.Dir:
			continue // shown with the group's first unit
		case shared:
			fmt.Fprintf(&b, "%s: the same %s at %s\n", sharedNames(g.Units), plural(g.Patches, "patch", "patches"), g.Pin)
			fmt.Fprintf(&b, "  pin %s, newest %s, %s%s\n", u.Pin, u.Newest, behindCell(u), lineCell(u))
		default:
			fmt.Fprintf(&b, "%s (%s): pin %s, newest %s, %s, %s%s\n", u.Name, u.Dir, u.Pin, u.Newest, behindCell(u), plural(len(u.Patches), "patch", "patches"), lineCell(u))
		}
		rows := [][]string{{"PATCH", "ADDED", "PINS", "AT " + u.Newest, "OBSOLETED BY", "UPSTREAM", "STATE"}}
		for _, p := range u.Patches {
			ob := "-"
			if p.ObsoletedBy != "" {
				ob = p.ObsoletedBy + " (" + obsolete.Short(p.Commit) + ")"
			}
			link := p.Upstream.Kind
			if p.Upstream.URL != "" {
				link += " " + p.Upstream.URL
			}
			rows = append(rows, []string{p.File, addedCell(p), fmt.Sprint(p.Pins), verdictCell(p), ob, link, upstreamState(p.Upstream)})
		}
		writeTable(&b, "  ", rows)
		for _, p := range u.Patches {
			for _, f := range p.Findings {
				fmt.Fprintf(&b, "  %s: %s\n", p.File, findingSay(p, f))
			}
			if p.Upstream.Note != "" {
				fmt.Fprintf(&b, "  %s: upstream: %s\n", p.File, p.Upstream.Note)
			}
		}
		b.WriteString("\n")
	}
	if n := len(r.History); n > 0 {
		last := r.History[n-1]
		fmt.Fprintf(&b, "history: %s over %s, now %d (peak %d)\n", plural(n, "commit", "commits"),
			r.History[0].Time.UTC().Format("2006-01-02")+" .. "+last.Time.UTC().Format("2006-01-02"), last.Count, peak(r.History))
	}
	return Redact(b.String())
}

func peak(ps []status.Point) int {
	m := 0
	for _, p := range ps {
		m = max(m, p.Count)
	}
	return m
}

// mdInline is server text in markdown: untrusted.InlineMarkdown.
func mdInline(s string) string { return untrusted.InlineMarkdown(s) }

// StatusMarkdown is the markdown of a status report: the dashboard issue's
// body.
func StatusMarkdown(r *status.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", StatusTitle)
	total, drop, none := 0, 0, 0
	for _, u := range r.Units {
		total += len(u.Patches)
		for _, p := range u.Patches {
			for _, f := range p.Findings {
				switch f {
				case status.FindingDroppable:
					drop++
				case status.FindingNoUpstream, status.FindingNoPR:
					none++
				}
			}
		}
	}
	fmt.Fprintf(&b, "%s carried in %s; %d droppable now; %d with no upstream PR.\n\n",
		plural(total, "patch", "patches"), plural(len(r.Units), "unit", "units"), drop, none)
	b.WriteString("| unit | pin | newest | behind | newest of its line | patches |\n|---|---|---|---|---|---|\n")
	for _, u := range r.Units {
		if u.Error != "" {
			fmt.Fprintf(&b, "| `%s` | ❌ error | | | | |\n", mdCell(u.Dir))
			continue
		}
		line := "up to date"
		if u.LineBehind > 0 {
			line = fmt.Sprintf("`%s` (%d behind)", mdCell(u.LineNewest), u.LineBehind)
		}
		patches := fmt.Sprint(len(u.Patches))
		if g, ok := r.SharedOf(u.Dir); ok && g.Units[0] != u.Dir {
			patches += fmt.Sprintf(" (the same as `%s`)", mdCell(g.Units[0]))
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | %d | %s | %s |\n", mdCell(u.Dir), mdCell(u.Pin), mdCell(u.Newest), u.Behind, line, patches)
	}
	for _, u := range r.Units {
		if u.Error != "" {
			fmt.Fprintf(&b, "\n### `%s`: ❌ not reported\n\n%s\n", mdCell(u.Dir), mdInline(u.Error))
			continue
		}
		if g, ok := r.SharedOf(u.Dir); ok {
			if g.Units[0] != u.Dir {
				continue // shown with the group's first unit
			}
			names := make([]string, len(g.Units))
			for i, d := range g.Units {
				names[i] = "`" + mdCell(d) + "`"
			}
			fmt.Fprintf(&b, "\n### %s: the same %s at `%s` → `%s`\n\n", strings.Join(names, ", "), plural(g.Patches, "patch", "patches"), mdCell(u.Pin), mdCell(u.Newest))
		} else {
			fmt.Fprintf(&b, "\n### `%s`: `%s` → `%s`\n\n", mdCell(u.Dir), mdCell(u.Pin), mdCell(u.Newest))
		}
		if len(u.Patches) == 0 {
			b.WriteString("No patches.\n")
			continue
		}
		fmt.Fprintf(&b, "| patch | added | pins survived | at `%s` | obsoleted by | upstream | state | findings |\n|---|---|---|---|---|---|---|---|\n", mdCell(u.Newest))
		for _, p := range u.Patches {
			ob := ""
			if p.ObsoletedBy != "" {
				ob = fmt.Sprintf("`%s` (`%s`)", mdCell(p.ObsoletedBy), obsolete.Short(p.Commit))
			}
			var fs []string
			for _, f := range p.Findings {
				fs = append(fs, mdCell(findingSay(p, f)))
			}
			fmt.Fprintf(&b, "| `%s` | %s | %d | %s | %s | %s | %s | %s |\n", mdCell(p.File), addedCell(p), p.Pins,
				mdStatus[verdictCell(p)], ob, mdLink(p.Upstream), mdState(p.Upstream), strings.Join(fs, "<br>"))
		}
	}
	if len(r.History) > 0 {
		b.WriteString("\n### Carried patches over time\n\n")
		ch := changes(r.History)
		if len(ch) > maxHistoryRows {
			// An issue body holds 65536 characters: the latest changes.
			fmt.Fprintf(&b, "The last %d of %d changes.\n\n", maxHistoryRows, len(ch))
			ch = ch[len(ch)-maxHistoryRows:]
		}
		b.WriteString("| date | commit | patches |\n|---|---|---|\n")
		for _, p := range ch {
			fmt.Fprintf(&b, "| %s | `%s` | %d |\n", p.Time.UTC().Format("2006-01-02"), obsolete.Short(p.Commit), p.Count)
		}
	}
	return b.String()
}

// maxHistoryRows bounds the markdown history table.
const maxHistoryRows = 40

// changes keeps the points where the count changed (and the first).
func changes(ps []status.Point) []status.Point {
	var out []status.Point
	for i, p := range ps {
		if i == 0 || p.Count != ps[i-1].Count {
			out = append(out, p)
		}
	}
	return out
}

func mdLink(u status.Upstream) string {
	if u.URL == "" {
		return u.Kind
	}
	return fmt.Sprintf("%s [%s](%s)", u.Kind, mdCell(shortURL(u.URL)), mdLinkTarget(u.URL))
}

// mdLinkTarget is untrusted.LinkTarget: a URL that cannot close the link
// early.
func mdLinkTarget(s string) string { return untrusted.LinkTarget(s) }

func mdState(u status.Upstream) string {
	s := mdInline(upstreamState(u))
	if u.Title != "" {
		s += ": " + mdInline(u.Title)
	}
	if u.User != "" {
		s += " (by " + mdInline(u.User) + ")"
	}
	if u.Note != "" {
		s += "<br>" + mdInline(u.Note)
	}
	return s
}

// shortURL is a GitHub URL as people write it: owner/repo#N, owner/repo@id.
func shortURL(u string) string {
	s := strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "github.com/")
	parts := strings.Split(s, "/")
	if len(parts) == 4 {
		switch parts[2] {
		case "pull", "issues":
			return parts[0] + "/" + parts[1] + "#" + parts[3]
		case "commit":
			return parts[0] + "/" + parts[1] + "@" + obsolete.Short(parts[3])
		}
	}
	return s
}
