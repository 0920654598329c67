package report

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/patchkit/patchkit/internal/gate"
	"github.com/patchkit/patchkit/internal/stamp"
)

// TestCounts are the gate's tests in a build result, as DESIGN.md fixes them.
type TestCounts struct {
	Run    int `json:"run"`
	Passed int `json:"passed"`
	Failed int `json:"failed"`
}

// Build is the result of `patchkit build` for one image.
type Build struct {
	Image string `json:"image"`
	// Digest is the image manifest's digest; "" when the build stopped.
	Digest string `json:"digest"`
	// Reference is registry/repository:tag@digest (repository:tag@digest
	// without a registry); "" when the build stopped.
	Reference string     `json:"reference"`
	Tests     TestCounts `json:"tests"`
	// OK is false when the gate failed; Message says why.
	OK      bool   `json:"ok"`
	Message string `json:"message,omitempty"`
	// Builder is the builder used; Pushed says the registry has the image.
	Builder string `json:"builder,omitempty"`
	Pushed  bool   `json:"pushed"`
	// OCILayout is the layout directory written, if any.
	OCILayout string `json:"ociLayout,omitempty"`
	// Stamped are the values written with --stamp.
	Stamped []stamp.Change `json:"stamped,omitempty"`
	// Gate is the gate's run, for the text renderer; not in the JSON,
	// whose tests field sums it up.
	Gate *gate.Result `json:"-"`
}

// BuildRun is one `patchkit build` run.
type BuildRun struct{ Run[Build] }

// Command implements Result.
func (BuildRun) Command() string { return "build" }

func (r BuildRun) clean() Result {
	for i := range r.Results {
		r.Results[i].Reference = Redact(r.Results[i].Reference)
	}
	return r
}

// Text implements Texter.
func (run BuildRun) Text() string {
	var b strings.Builder
	for _, r := range run.Results {
		switch {
		case r.Gate != nil:
			fmt.Fprintf(&b, "%s: gate %s: %s (%s)\n", r.Image, passFail(r.Gate.OK), r.Gate.Message, gateCounts(r.Gate))
			if !r.Gate.OK {
				writeGateFailures(&b, "  ", r.Gate)
			}
		case r.OK:
			fmt.Fprintf(&b, "%s: no test section: gate skipped\n", r.Image)
		}
		if r.Digest == "" {
			if r.Message != "" && (r.Gate == nil || r.Gate.OK) {
				fmt.Fprintf(&b, "%s: %s\n", r.Image, r.Message)
			}
			continue
		}
		fmt.Fprintf(&b, "%s: built with %s: %s\n", r.Image, r.Builder, r.Digest)
		if r.Pushed {
			fmt.Fprintf(&b, "%s: pushed %s\n", r.Image, r.Reference)
		} else {
			fmt.Fprintf(&b, "%s: reference %s (not pushed)\n", r.Image, r.Reference)
		}
		if r.OCILayout != "" {
			fmt.Fprintf(&b, "%s: wrote OCI layout %s\n", r.Image, r.OCILayout)
		}
		writeStamped(&b, r.Image, r.Stamped)
	}
	return b.String()
}

func passFail(ok bool) string {
	if ok {
		return "passed"
	}
	return "FAILED"
}

func gateCounts(r *gate.Result) string {
	s := fmt.Sprintf("%d tests ran: %d passed, %d failed", r.Ran, r.Passed, r.Failed)
	if r.Skipped > 0 {
		s += fmt.Sprintf(", %d skipped", r.Skipped)
	}
	return s
}

// writeFailures prints what the failing tests (or go) said.
func writeGateFailures(b *strings.Builder, indent string, r *gate.Result) {
	for _, t := range r.Tests {
		if t.Status != gate.StatusFail || t.Output == "" {
			continue
		}
		fmt.Fprintf(b, "%s--- FAIL: %s\n", indent, t.Name)
		for _, l := range strings.Split(t.Output, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "=== RUN") || strings.HasPrefix(strings.TrimSpace(l), "--- FAIL") {
				continue
			}
			fmt.Fprintf(b, "%s  %s\n", indent, strings.TrimRight(l, " "))
		}
	}
	if r.Output != "" {
		for _, l := range strings.Split(r.Output, "\n") {
			fmt.Fprintf(b, "%s%s\n", indent, l)
		}
	}
}

func writeStamped(b *strings.Builder, image string, changes []stamp.Change) {
	for _, c := range changes {
		old := c.Old
		if old == "" {
			old = `""`
		}
		fmt.Fprintf(b, "%s: stamped %s %s: %s -> %s\n", image, c.File, c.Key, old, c.New)
	}
}

// Markdown implements Markdowner.
func (run BuildRun) Markdown() string {
	var b strings.Builder
	b.WriteString("| image | gate | digest | reference |\n|---|---|---|---|\n")
	for _, r := range run.Results {
		gateCell := fmt.Sprintf("%d run, %d passed, %d failed", r.Tests.Run, r.Tests.Passed, r.Tests.Failed)
		if r.Gate == nil {
			gateCell = "skipped"
		}
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | `%s` |\n", mdCell(r.Image), gateCell, r.Digest, mdCell(r.Reference))
	}
	return b.String()
}

// GitHub implements GitHubber.
func (run BuildRun) GitHub() string {
	var b strings.Builder
	for _, r := range run.Results {
		if !r.OK {
			annotate(&b, "error", "", 0, "patchkit build", ghEscape(r.Image)+": "+ghEscape(r.Message))
			continue
		}
		annotate(&b, "notice", "", 0, "patchkit build", ghEscape(r.Image)+": "+ghEscape(r.Reference))
	}
	return b.String()
}

// Gate is the result of `patchkit gate` for one image.
type Gate struct {
	Image    string      `json:"image"`
	Upstream UpstreamRef `json:"upstream"`
	// OK: the test passed on the series and ownership has no findings.
	OK      bool   `json:"ok"`
	Package string `json:"package"`
	Run     string `json:"run"`
	// Tests counts the run on the whole series.
	Tests struct {
		TestCounts
		Skipped int `json:"skipped"`
	} `json:"tests"`
	Message string `json:"message"`
	// Result is the run on the whole series.
	Result *gate.Result `json:"result"`
	// Ownership is nil when the gate failed on the series.
	Ownership *gate.Ownership `json:"ownership"`
}

// NewGate fills a Gate from a run and its ownership (nil when not checked).
func NewGate(image string, up UpstreamRef, g *gate.Gate, res *gate.Result, own *gate.Ownership) Gate {
	out := Gate{Image: image, Upstream: up, Package: g.Package(), Run: g.Pattern(), Result: res, Ownership: own}
	out.Tests.Run, out.Tests.Passed, out.Tests.Failed, out.Tests.Skipped = res.Ran, res.Passed, res.Failed, res.Skipped
	out.OK = res.OK && (own == nil || own.OK())
	out.Message = res.Message
	if res.OK && own == nil {
		out.Message += "; ownership not checked"
	} else if own != nil && !own.OK() {
		out.Message = fmt.Sprintf("%s; %d ownership findings", res.Message, len(own.Findings))
	}
	return out
}

// GateRun is one `patchkit gate` run.
type GateRun struct{ Run[Gate] }

// Command implements Result.
func (GateRun) Command() string { return "gate" }

func (r GateRun) clean() Result {
	for i := range r.Results {
		r.Results[i].Upstream.URL = Redact(r.Results[i].Upstream.URL)
	}
	return r
}

// Text implements Texter.
func (run GateRun) Text() string {
	var b strings.Builder
	for _, r := range run.Results {
		fmt.Fprintf(&b, "%s: gate %s: %s\n", r.Image, passFail(r.OK), r.Message)
		run := ""
		if r.Run != "" {
			run = " -run '" + r.Run + "'"
		}
		fmt.Fprintf(&b, "  go test%s %s on %s (%s): %s\n", run, r.Package, r.Upstream.Ref, short(r.Upstream.Commit), gateCounts(r.Result))
		if !r.Result.OK {
			writeGateFailures(&b, "  ", r.Result)
		}
		if o := r.Ownership; o != nil {
			b.WriteString("\n  ownership: each patch dropped in turn (red: the subtest fails without it)\n")
			writeMatrix(&b, o)
			for _, f := range o.Findings {
				who := "pin"
				if f.Patch != "" {
					who = f.Patch
				}
				fmt.Fprintf(&b, "  FINDING %s: %s\n", who, f.Message)
			}
		}
	}
	return b.String()
}

// columnNames drops the test name that every column shares.
func matrixColumns(cols []string) []string {
	prefix := ""
	if len(cols) > 0 {
		if i := strings.Index(cols[0], "/"); i > 0 {
			prefix = cols[0][:i+1]
		}
	}
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c
		if prefix != "" && !strings.HasPrefix(c, prefix) {
			prefix = ""
		}
	}
	if prefix != "" {
		for i, c := range cols {
			out[i] = strings.TrimPrefix(c, prefix)
		}
	}
	return out
}

func writeMatrix(b *strings.Builder, o *gate.Ownership) {
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  \t%s\tverdict\n", strings.Join(matrixColumns(o.Subtests), "\t"))
	row := func(label string, r gate.Row) {
		cells := r.Cells
		if r.Status == gate.RowNoApply {
			cells = make([]string, len(o.Subtests))
			for i := range cells {
				cells[i] = "-"
			}
		}
		mark := "ok"
		if !r.Match {
			mark = "MISMATCH"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s: %s\n", label, strings.Join(cells, "\t"), mark, r.Message)
	}
	row("pin (no patches)", o.Pin)
	for _, r := range o.Patches {
		row("without "+r.Patch, r)
	}
	tw.Flush()
}

// Markdown implements Markdowner.
func (run GateRun) Markdown() string {
	var b strings.Builder
	for _, r := range run.Results {
		icon := "✅"
		if !r.OK {
			icon = "❌"
		}
		fmt.Fprintf(&b, "### %s gate `%s`: %s\n\n", icon, r.Image, mdCell(r.Message))
		if o := r.Ownership; o != nil {
			b.WriteString("| run | " + strings.Join(mdCodeCells(matrixColumns(o.Subtests)), " | ") + " | verdict |\n")
			b.WriteString("|---|" + strings.Repeat("---|", len(o.Subtests)) + "---|\n")
			rows := append([]gate.Row{o.Pin}, o.Patches...)
			for i, row := range rows {
				label := "pin (no patches)"
				if i > 0 {
					label = "without `" + row.Patch + "`"
				}
				cells := make([]string, len(o.Subtests))
				for j := range cells {
					cells[j] = "–"
					if j < len(row.Cells) {
						cells[j] = map[string]string{gate.Red: "🔴", gate.Green: "🟢"}[row.Cells[j]]
					}
				}
				fmt.Fprintf(&b, "| %s | %s | %s |\n", label, strings.Join(cells, " | "), mdCell(row.Message))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func mdCodeCells(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = "`" + mdCell(s) + "`"
	}
	return out
}

// GitHub implements GitHubber.
func (run GateRun) GitHub() string {
	var b strings.Builder
	for _, r := range run.Results {
		if !r.Result.OK {
			annotate(&b, "error", "", 0, "patchkit gate", ghEscape(r.Image)+": "+ghEscape(r.Message))
		}
		if r.Ownership != nil {
			for _, f := range r.Ownership.Findings {
				if f.File != "" {
					annotate(&b, "error", f.File, 1, "patchkit gate ownership", ghEscape(f.Message))
				} else {
					annotate(&b, "error", "", 0, "patchkit gate ownership", ghEscape(r.Image)+": "+ghEscape(f.Message))
				}
			}
		}
		if r.OK {
			annotate(&b, "notice", "", 0, "patchkit gate", ghEscape(r.Image)+": "+ghEscape(r.Message))
		}
	}
	return b.String()
}

// Stamp is the result of `patchkit stamp` for one image.
type Stamp struct {
	Image     string         `json:"image"`
	Digest    string         `json:"digest"`
	Reference string         `json:"reference"`
	Stamped   []stamp.Change `json:"stamped"`
}

// StampRun is one `patchkit stamp` run.
type StampRun struct{ Run[Stamp] }

// Command implements Result.
func (StampRun) Command() string { return "stamp" }

// Text implements Texter.
func (run StampRun) Text() string {
	var b strings.Builder
	for _, r := range run.Results {
		writeStamped(&b, r.Image, r.Stamped)
	}
	return b.String()
}

// Markdown implements Markdowner.
func (run StampRun) Markdown() string {
	var b strings.Builder
	b.WriteString("| image | file | key | value |\n|---|---|---|---|\n")
	for _, r := range run.Results {
		for _, c := range r.Stamped {
			fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | `%s` |\n", mdCell(r.Image), mdCell(c.File), mdCell(c.Key), mdCell(c.New))
		}
	}
	return b.String()
}

// GitHub implements GitHubber.
func (run StampRun) GitHub() string {
	var b strings.Builder
	for _, r := range run.Results {
		annotate(&b, "notice", "", 0, "patchkit stamp", fmt.Sprintf("%s: %d values stamped with %s", ghEscape(r.Image), len(r.Stamped), r.Digest))
	}
	return b.String()
}
