package gate

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/series"
)

// Cell values of the ownership matrix.
const (
	Green = "green"
	Red   = "red"
)

// Row statuses.
const (
	// RowRan: the test ran on this row's tree.
	RowRan = "ran"
	// RowNoApply: without this patch, the rest of the series does not apply.
	RowNoApply = "no-apply"
)

// Ownership is the patch × subtest matrix: which subtests go red on the
// unpatched pin and with each patch dropped in turn.
type Ownership struct {
	// Subtests are the matrix's columns: the leaf tests of the run on the
	// whole series (each subtest, or a test without subtests), in run order.
	Subtests []string `json:"subtests"`
	// Pin is the run on the unpatched pin.
	Pin Row `json:"pin"`
	// Patches has one row per patch, in series order: the run without it.
	Patches []Row `json:"patches"`
	// Findings are the ownership problems; none means every patch owns
	// exactly what its Test: header says and the test guards the series.
	Findings []Finding `json:"findings"`
}

// OK reports whether ownership has no findings.
func (o *Ownership) OK() bool { return len(o.Findings) == 0 }

// Row is one line of the matrix.
type Row struct {
	// Patch is the dropped patch's file name; "" for the pin.
	Patch string `json:"patch,omitempty"`
	// File is the patch file as messages name it (patches/x/0001-y.diff).
	File string `json:"file,omitempty"`
	// Status is ran or no-apply.
	Status string `json:"status"`
	// Cells are green or red for each of Ownership.Subtests; empty when the
	// test did not run.
	Cells []string `json:"cells"`
	// Red are the subtests that go red.
	Red []string `json:"red"`
	// Declared are the tests the patch's Test: header names.
	Declared []string `json:"declared"`
	// Match says Declared, expanded to subtests, equals Red.
	Match bool `json:"match"`
	// Message says what the row shows, in words.
	Message string `json:"message"`
	// Result is the run, nil when the test did not run.
	Result *Result `json:"-"`
}

// Finding is one ownership problem. Patch and File are "" for the pin.
type Finding struct {
	Patch   string `json:"patch,omitempty"`
	File    string `json:"file,omitempty"`
	Message string `json:"message"`
}

// Ownership runs the test on the unpatched pin and with each patch of the
// series dropped in turn, and checks each patch's Test: header against the
// subtests that go red without it. full is the gate's run on the whole
// series, which must have passed: it fixes the matrix's columns.
func (g *Gate) Ownership(ctx context.Context, src Source, patches []*series.Patch, full *Result) (*Ownership, error) {
	if full == nil || !full.OK {
		return nil, fmt.Errorf("ownership needs a passing run on the whole series")
	}
	cols := columns(full)
	o := &Ownership{Subtests: cols, Findings: []Finding{}, Patches: []Row{}}

	fmt.Fprintf(g.progress, "gate: %s on the unpatched pin\n", g.pkg)
	pin, err := g.Run(ctx, src, nil)
	if err != nil {
		return nil, err
	}
	o.Pin = cellRow(cols, pin)
	if pin.OK {
		o.Pin.Message = "passes without the series: the test does not guard it"
		o.Findings = append(o.Findings, Finding{Message: "the test passes on the unpatched pin: it does not guard the series"})
	} else {
		o.Pin.Match = true
		o.Pin.Message = "fails without the series, as it should: " + pin.Message
	}

	for i, p := range patches {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rest := make([]*series.Patch, 0, len(patches)-1)
		rest = append(rest, patches[:i]...)
		rest = append(rest, patches[i+1:]...)
		declared := append([]string{}, p.Header.Tests...)
		res := apply.Series(src, rest, g.applyOpts...)
		if res.Err != nil {
			return nil, res.Err
		}
		if !res.OK {
			var failed []string
			for _, pr := range res.Patches {
				if pr.Status != apply.StatusApplied {
					failed = append(failed, pr.Name)
				}
			}
			o.Patches = append(o.Patches, Row{
				Patch: p.Name, File: p.Path, Status: RowNoApply, Cells: []string{}, Red: []string{}, Declared: declared,
				Match:   true, // nothing to compare: not a finding
				Message: fmt.Sprintf("without it the rest does not apply (%s fails), so its tests cannot be checked", strings.Join(failed, ", ")),
			})
			continue
		}
		fmt.Fprintf(g.progress, "gate: %s without %s\n", g.pkg, p.Name)
		r, err := g.Run(ctx, src, res.Changes)
		if err != nil {
			return nil, err
		}
		row := cellRow(cols, r)
		row.Patch = p.Name
		row.File = p.Path
		row.Declared = declared
		want, unknown := expand(cols, declared)
		row.Match = len(unknown) == 0 && equal(want, row.Red)
		row.Message = rowMessage(p.Name, declared, unknown, want, row.Red, r)
		if !row.Match {
			o.Findings = append(o.Findings, Finding{Patch: p.Name, File: p.Path, Message: row.Message})
		}
		o.Patches = append(o.Patches, row)
	}
	return o, nil
}

// columns are the leaf tests of a run, in the order they started.
func columns(r *Result) []string {
	names := make([]string, 0, len(r.Tests))
	for _, t := range r.Tests {
		names = append(names, t.Name)
	}
	return leaves(names)
}

// cellRow colours each column by the run: green only if that test passed.
// A test that did not run (the package did not build) is red.
func cellRow(cols []string, r *Result) Row {
	row := Row{Status: RowRan, Cells: make([]string, len(cols)), Red: []string{}, Declared: []string{}, Result: r}
	for i, c := range cols {
		if r.Status(c) == StatusPass {
			row.Cells[i] = Green
		} else {
			row.Cells[i] = Red
			row.Red = append(row.Red, c)
		}
	}
	return row
}

// expand turns Test: names into the columns they stand for: a subtest names
// itself, a test names all its subtests. unknown are names that match no column.
func expand(cols []string, declared []string) (want []string, unknown []string) {
	set := map[string]bool{}
	for _, d := range declared {
		hit := false
		for _, c := range cols {
			if c == d || strings.HasPrefix(c, d+"/") {
				set[c] = true
				hit = true
			}
		}
		if !hit {
			unknown = append(unknown, d)
		}
	}
	for _, c := range cols {
		if set[c] {
			want = append(want, c)
		}
	}
	return want, unknown
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x := append([]string{}, a...)
	y := append([]string{}, b...)
	sort.Strings(x)
	sort.Strings(y)
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

func minus(a, b []string) []string {
	in := map[string]bool{}
	for _, s := range b {
		in[s] = true
	}
	var out []string
	for _, s := range a {
		if !in[s] {
			out = append(out, s)
		}
	}
	return out
}

func rowMessage(name string, declared, unknown, want, red []string, r *Result) string {
	var parts []string
	if len(unknown) > 0 {
		parts = append(parts, fmt.Sprintf("Test: names %s, which the gate's run does not have", strings.Join(unknown, ", ")))
	}
	if extra := minus(red, want); len(extra) > 0 {
		why := ""
		if r.BuildFailed {
			why = " (the test package does not build without it)"
		}
		if len(declared) == 0 {
			parts = append(parts, fmt.Sprintf("has no Test: header, but without it %s go red%s", strings.Join(extra, ", "), why))
		} else {
			parts = append(parts, fmt.Sprintf("without it %s also go red but Test: does not name them%s", strings.Join(extra, ", "), why))
		}
	}
	if green := minus(want, red); len(green) > 0 {
		parts = append(parts, fmt.Sprintf("Test: names %s, but it stays green without the patch", strings.Join(green, ", ")))
	}
	if len(parts) == 0 {
		if len(red) == 0 {
			return "no test goes red without it, and it names none"
		}
		return fmt.Sprintf("owns %s, as its Test: header says", strings.Join(red, ", "))
	}
	return strings.Join(parts, "; ")
}
