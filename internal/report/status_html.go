package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/patchkit/patchkit/internal/obsolete"
	"github.com/patchkit/patchkit/internal/status"
	"github.com/patchkit/patchkit/internal/untrusted"
)

// The html page: one file, its style inline, no script and nothing fetched
// (no external link, image or font), so it works as a CI artifact or on
// Pages. Every value is escaped as html/template escapes it in its context
// (untrusted.HTMLPage, HTMLHref); server text passed through untrusted
// before. The page is written by hand, not by html/template: a template's reflection on
// method names keeps every exported method of every linked type in the
// binary (the linker cannot drop them), which made patchkit 9 MB larger and
// every command's memory floor 3 MiB higher (docs/benchmarks.md, "the
// process floor"). TestStatusHTMLMatchesTemplate checks the page against
// the template it replaced.
const statusHead = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>`

const statusStyle = `</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}
th,td{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top;max-width:30em}
td code{overflow-wrap:anywhere}
th{background:#f3f3f3}
code{font-family:ui-monospace,monospace}
.finding{color:#a40000}
.droppable{color:#006b00}
svg text{font-size:11px;font-family:system-ui,sans-serif}
</style>
</head>
<body>
<h1>`

const statusUnitsHead = `</p>
<table id="units">
<thead><tr><th>unit</th><th>pin</th><th>newest</th><th>behind</th><th>patches</th></tr></thead>
<tbody>`

const statusLegend = `
<p><small>Findings: <span class="droppable">droppable</span>: the newest release carries the change; <span class="finding">no upstream PR or issue</span>: an original change carried until someone forwards it (<code>patchkit forward</code>); <span class="finding">no PR</span>: only an issue; <span class="finding">PR closed unmerged</span>; <span class="finding">conflict</span>: it no longer applies at the newest release; <span class="finding">target removed</span>: upstream deleted every file it modifies.</small></p>`

// writeStatusPage writes the page of data.
func writeStatusPage(w io.Writer, d *statusPageData) error {
	var b strings.Builder
	t := func(s string) { b.WriteString(untrusted.HTMLPage(s)) }
	n := func(i int) { b.WriteString(strconv.Itoa(i)) }
	b.WriteString(statusHead)
	t(d.Title)
	b.WriteString(statusStyle)
	t(d.Title)
	b.WriteString("</h1>\n<p>")
	t(d.Summary)
	b.WriteString(statusUnitsHead)
	for _, u := range d.Units {
		b.WriteString("\n<tr><td><code>")
		t(u.Dir)
		if u.Error != "" {
			b.WriteString(`</code></td><td colspan="4" class="finding">error: `)
			t(u.Error)
			b.WriteString("</td></tr>")
			continue
		}
		b.WriteString("</code></td><td><code>")
		t(u.Pin)
		b.WriteString("</code></td><td><code>")
		t(u.Newest)
		b.WriteString("</code></td><td>")
		n(u.Behind)
		b.WriteString("</td><td>")
		n(len(u.Patches))
		b.WriteString("</td></tr>")
	}
	b.WriteString("\n</tbody>\n</table>")
	for _, u := range d.Units {
		if u.Error != "" {
			continue
		}
		b.WriteString("\n<h2><code>")
		t(u.Dir)
		b.WriteString("</code>: <code>")
		t(u.Pin)
		b.WriteString("</code> → <code>")
		t(u.Newest)
		b.WriteString("</code></h2>\n<table class=\"patches\">\n<thead><tr><th>patch</th><th>added</th><th>pins survived</th><th>at ")
		t(u.Newest)
		b.WriteString("</th><th>obsoleted by</th><th>upstream</th><th>state</th><th>findings</th></tr></thead>\n<tbody>")
		for _, p := range u.Patches {
			b.WriteString("\n<tr><td><code>")
			t(p.File)
			b.WriteString("</code></td><td>")
			t(p.Added)
			b.WriteString("</td><td>")
			n(p.Pins)
			b.WriteString("</td><td>")
			t(p.Verdict)
			b.WriteString("</td><td>")
			t(p.ObsoletedBy)
			b.WriteString("</td><td>")
			t(p.Kind)
			if p.URL != "" {
				b.WriteString(` <a href="`)
				b.WriteString(untrusted.HTMLHref(p.URL))
				b.WriteString(`">`)
				t(p.Short)
				b.WriteString("</a>")
			}
			b.WriteString("</td><td>")
			t(p.State)
			if p.Note != "" {
				b.WriteString("<br><small>")
				t(p.Note)
				b.WriteString("</small>")
			}
			b.WriteString("</td><td>")
			for _, f := range p.Findings {
				b.WriteString(`<div class="`)
				t(f.Class)
				b.WriteString(`" title="`)
				t(f.Title)
				b.WriteString(`">`)
				t(f.Text)
				b.WriteString("</div>")
			}
			b.WriteString("</td></tr>")
		}
		b.WriteString("\n</tbody>\n</table>")
	}
	b.WriteString(statusLegend)
	if d.Chart != "" {
		b.WriteString("\n<h2>Carried patches over time</h2>\n")
		b.WriteString(d.Chart)
	}
	b.WriteString("\n</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

type htmlFinding struct{ Class, Text, Title string }

type htmlPatch struct {
	File, Added, Verdict, ObsoletedBy, Kind, URL, Short, State, Note string
	Pins                                                             int
	Findings                                                         []htmlFinding
}

type htmlUnit struct {
	Dir, Pin, Newest, Error string
	Behind                  int
	Patches                 []htmlPatch
}

// statusPageData is what the page shows; Chart is markup (Chart's SVG).
type statusPageData struct {
	Title, Summary string
	Units          []htmlUnit
	Chart          string
}

func statusHTML(w io.Writer, r *status.Report) error {
	md := StatusMarkdown(r)
	summary, _, _ := strings.Cut(strings.TrimPrefix(md, "## "+StatusTitle+"\n\n"), "\n")
	data := &statusPageData{Title: StatusTitle, Summary: summary, Chart: Chart(r)}
	for _, u := range r.Units {
		hu := htmlUnit{Dir: u.Dir, Pin: u.Pin, Newest: u.Newest, Behind: u.Behind, Error: Redact(u.Error)}
		for _, p := range u.Patches {
			hp := htmlPatch{File: p.File, Added: addedCell(p), Pins: p.Pins, Verdict: verdictCell(p), Kind: p.Upstream.Kind,
				URL: webURL(p.Upstream.URL), Short: Redact(shortURL(p.Upstream.URL)), Note: Redact(p.Upstream.Note)}
			if p.ObsoletedBy != "" {
				hp.ObsoletedBy = p.ObsoletedBy + " (" + obsolete.Short(p.Commit) + ")"
			}
			hp.State = Redact(upstreamState(p.Upstream))
			if p.Upstream.Title != "" {
				hp.State += ": " + Redact(p.Upstream.Title)
			}
			if p.Upstream.User != "" {
				hp.State += " (by " + Redact(p.Upstream.User) + ")"
			}
			for _, f := range p.Findings {
				class, text := "finding", findingShort[f]
				if f == status.FindingDroppable {
					class = "droppable"
					if p.ObsoletedBy != "" {
						text += " since " + p.ObsoletedBy
					}
				}
				hp.Findings = append(hp.Findings, htmlFinding{Class: class, Text: text, Title: findingSay(p, f)})
			}
			hu.Patches = append(hu.Patches, hp)
		}
		data.Units = append(data.Units, hu)
	}
	return writeStatusPage(w, data)
}

// findingShort names a finding in a table cell; findingText is its title.
var findingShort = map[string]string{
	status.FindingDroppable:      "droppable",
	status.FindingNoUpstream:     "no upstream PR or issue",
	status.FindingNoPR:           "no PR (issue only)",
	status.FindingClosedUnmerged: "PR closed unmerged",
	status.FindingConflict:       "conflict",
	status.FindingRemoved:        "target removed",
}

// webURL keeps only http(s) links: a link is never a script.
func webURL(s string) string {
	s = Redact(s)
	if strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") {
		return s
	}
	return ""
}

// The chart's geometry, in SVG user units.
const (
	chartW, chartH         = 720, 260
	chartLeft, chartRight  = 40, 150
	chartTop, chartBottom  = 16, 30
	chartPlotW, chartPlotH = chartW - chartLeft - chartRight, chartH - chartTop - chartBottom
)

var chartColors = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"}

// Chart draws the number of carried patches over the repository's history
// as an inline SVG step chart: one line per unit and the total, thicker
// and black. Time runs left to right; "" when there is no history.
func Chart(r *status.Report) string {
	if len(r.History) == 0 {
		return ""
	}
	t0, t1 := r.History[0].Time, r.History[len(r.History)-1].Time
	if !t1.After(t0) {
		t1 = t0.Add(24 * time.Hour)
	}
	top := max(peak(r.History), 1)
	x := func(t time.Time) float64 {
		return chartLeft + float64(t.Sub(t0))/float64(t1.Sub(t0))*chartPlotW
	}
	y := func(n int) float64 { return chartTop + chartPlotH - float64(n)/float64(top)*chartPlotH }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" id="history" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="carried patches over time">`+"\n", chartW, chartH, chartW, chartH)
	fmt.Fprintf(&b, `<title>carried patches over time: %d now, %d at most</title>`+"\n", r.History[len(r.History)-1].Count, top)
	// Axes, and a grid line per count step.
	step := max(1, (top+4)/5)
	for n := 0; n <= top; n += step {
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e5e5e5"/>`+"\n", chartLeft, y(n), chartLeft+chartPlotW, y(n))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%d</text>`+"\n", chartLeft-6, y(n)+4, n)
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`+"\n", chartLeft, chartTop+chartPlotH, chartLeft+chartPlotW, chartTop+chartPlotH)
	fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", chartLeft, chartH-8, t0.UTC().Format("2006-01-02"))
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", chartLeft+chartPlotW, chartH-8, t1.UTC().Format("2006-01-02"))
	line := func(ps []status.Point, color string, width float64, label string, row int) {
		if len(ps) == 0 {
			return
		}
		var d strings.Builder
		fmt.Fprintf(&d, "M%.1f %.1f", x(ps[0].Time), y(ps[0].Count))
		for i := 1; i < len(ps); i++ {
			fmt.Fprintf(&d, " H%.1f V%.1f", x(ps[i].Time), y(ps[i].Count))
		}
		fmt.Fprintf(&d, " H%.1f", x(t1))
		fmt.Fprintf(&b, `<path class="series" data-unit="%s" d="%s" fill="none" stroke="%s" stroke-width="%.1f"/>`+"\n", untrusted.HTMLEscape(label), d.String(), color, width)
		ly := chartTop + 14*row
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="%.1f"/>`+"\n", chartW-chartRight+10, ly, chartW-chartRight+24, ly, color, width)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", chartW-chartRight+28, ly+4, untrusted.HTMLEscape(label))
	}
	line(r.History, "#000", 2.5, "total", 0)
	for i, u := range r.Units {
		line(u.History, chartColors[i%len(chartColors)], 1.5, u.Dir, i+1)
	}
	b.WriteString("</svg>")
	return b.String()
}
