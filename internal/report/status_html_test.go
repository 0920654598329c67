package report

import (
	"html/template"
	"strings"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/status"
)

// oldStatusPage is the html/template the hand-written page replaced
// (status_html.go says why): the oracle of its escaping and layout. Only
// the test binary links html/template.
var oldStatusPage = template.Must(template.New("status").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
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
<h1>{{.Title}}</h1>
<p>{{.Summary}}</p>
<table id="units">
<thead><tr><th>unit</th><th>pin</th><th>newest</th><th>behind</th><th>patches</th></tr></thead>
<tbody>
{{- range .Units}}
{{- if .Error}}
<tr><td><code>{{.Dir}}</code></td><td colspan="4" class="finding">error: {{.Error}}</td></tr>
{{- else}}
<tr><td><code>{{.Dir}}</code></td><td><code>{{.Pin}}</code></td><td><code>{{.Newest}}</code></td><td>{{.Behind}}</td><td>{{len .Patches}}</td></tr>
{{- end}}
{{- end}}
</tbody>
</table>
{{- range .Units}}{{if not .Error}}
<h2><code>{{.Dir}}</code>: <code>{{.Pin}}</code> → <code>{{.Newest}}</code></h2>
<table class="patches">
<thead><tr><th>patch</th><th>added</th><th>pins survived</th><th>at {{.Newest}}</th><th>obsoleted by</th><th>upstream</th><th>state</th><th>findings</th></tr></thead>
<tbody>
{{- range .Patches}}
<tr><td><code>{{.File}}</code></td><td>{{.Added}}</td><td>{{.Pins}}</td><td>{{.Verdict}}</td><td>{{.ObsoletedBy}}</td><td>{{.Kind}}{{if .URL}} <a href="{{.URL}}">{{.Short}}</a>{{end}}</td><td>{{.State}}{{if .Note}}<br><small>{{.Note}}</small>{{end}}</td><td>{{range .Findings}}<div class="{{.Class}}" title="{{.Title}}">{{.Text}}</div>{{end}}</td></tr>
{{- end}}
</tbody>
</table>
{{- end}}{{end}}
<p><small>Findings: <span class="droppable">droppable</span>: the newest release carries the change; <span class="finding">no upstream PR or issue</span>: an original change carried until someone forwards it (<code>patchkit forward</code>); <span class="finding">no PR</span>: only an issue; <span class="finding">PR closed unmerged</span>; <span class="finding">conflict</span>: it no longer applies at the newest release; <span class="finding">target removed</span>: upstream deleted every file it modifies.</small></p>
{{- if .Chart}}
<h2>Carried patches over time</h2>
{{.Chart}}
{{- end}}
</body>
</html>
`))

// hostileHTML is text a server or a patch could carry: every character
// html/template escapes, NUL, invalid UTF-8, non-ASCII and the characters
// a URL percent-encodes.
const hostileHTML = "a<b>&c\"d'e+f\x00g\xffh é %zz %41 ` {}|\\^"

// TestStatusHTMLMatchesTemplate renders pages through writeStatusPage and
// through the template it replaced, on tables with every branch (error
// units, URLs or none, notes, findings, a chart or none) and hostileHTML text
// in each field, and fails unless the bytes are equal.
func TestStatusHTMLMatchesTemplate(t *testing.T) {
	patch := func(s string) htmlPatch {
		return htmlPatch{File: s + ".patch", Added: s, Verdict: s, ObsoletedBy: s, Kind: s, URL: "https://example.com/" + s, Short: s, State: s, Note: s, Pins: 3,
			Findings: []htmlFinding{{Class: s, Text: s, Title: s}, {Class: "droppable", Text: "ok", Title: "t"}}}
	}
	var cases []*statusPageData
	for _, s := range []string{"plain", hostileHTML, "", "x+y=z&q=1#frag", "日本語"} {
		p := patch(s)
		bare := p
		bare.URL, bare.Note, bare.Findings = "", "", nil
		for _, url := range []string{"http://h/p?q=" + s, "javascript:alert(1)", "mailto:a@b", "rel/" + s, "HTTPS://x/%2f%g", "data:" + s, "a/b:c"} {
			q := p
			q.URL = url
			bare.Pins++
			cases = append(cases, &statusPageData{Title: s, Summary: s, Chart: "",
				Units: []htmlUnit{{Dir: s, Error: s}, {Dir: s, Pin: s, Newest: s, Behind: 7, Patches: []htmlPatch{q, bare}}}})
		}
		cases = append(cases, &statusPageData{Title: StatusTitle, Summary: s, Chart: "<svg>" + s + "</svg>",
			Units: []htmlUnit{{Dir: s, Pin: s, Newest: s}, {Dir: "e", Error: "boom " + s}}})
	}
	cases = append(cases, &statusPageData{}, &statusPageData{Title: "t", Chart: Chart(chartReport())})
	for i, d := range cases {
		var want strings.Builder
		if err := oldStatusPage.Execute(&want, struct {
			Title, Summary string
			Units          []htmlUnit
			Chart          template.HTML
		}{d.Title, d.Summary, d.Units, template.HTML(d.Chart)}); err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		if err := writeStatusPage(&got, d); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("case %d: the page differs from html/template's\ngot:  %q\nwant: %q", i, got.String(), want.String())
		}
	}
}

// TestChartLabelEscaped: a unit's directory in the chart is escaped as
// text/template's HTMLEscapeString escapes it (the chart's former escaper).
func TestChartLabelEscaped(t *testing.T) {
	r := chartReport()
	svg := Chart(r)
	if want := template.HTMLEscapeString(r.Units[0].Dir); !strings.Contains(svg, `data-unit="`+want+`"`) || !strings.Contains(svg, ">"+want+"</text>") {
		t.Errorf("chart does not carry the label as %q:\n%s", want, svg)
	}
	if strings.Contains(svg, r.Units[0].Dir) {
		t.Errorf("chart carries the label unescaped:\n%s", svg)
	}
}

func chartReport() *status.Report {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pts := []status.Point{{Time: t0, Count: 1}, {Time: t0.Add(48 * time.Hour), Count: 2}}
	return &status.Report{History: pts, Units: []status.Unit{{Dir: hostileHTML + "+x", History: pts}}}
}
