package apply

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/tree"
)

var gnuFuzzRe = regexp.MustCompile(`Hunk #(\d+) succeeded at \d+ with fuzz (\d+)`)

// TestFuzzOnlyReport: a hunk that only GNU patch's fuzz applies is reported
// as kind fuzz, naming the hunk, the file and the fuzz GNU patch needs
// (`patch --dry-run -p1 -F2` is the oracle); git apply rejects it.
func TestFuzzOnlyReport(t *testing.T) {
	if _, err := exec.LookPath("patch"); err != nil {
		t.Fatalf("GNU patch is needed (Debian package patch): %v", err)
	}
	old := num(1, 40)
	cases := []struct {
		name  string
		drift func(string) string // how the tree moved on since the patch was made
		fuzz  int                 // 0: not even fuzz applies it
	}{
		{name: "first leading context line changed", drift: func(s string) string { return setLine(s, 17, "line 17 drifted") }, fuzz: 1},
		{name: "last trailing context line changed", drift: func(s string) string { return setLine(s, 23, "line 23 drifted") }, fuzz: 1},
		{name: "two leading context lines changed", drift: func(s string) string {
			return setLine(setLine(s, 17, "line 17 drifted"), 18, "line 18 drifted")
		}, fuzz: 2},
		{name: "context next to the change changed", drift: func(s string) string { return setLine(s, 19, "line 19 drifted") }, fuzz: 0},
		{name: "removed line changed", drift: func(s string) string { return setLine(s, 20, "line 20 drifted") }, fuzz: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := gittest.New(t)
			r.Write("f.txt", old)
			r.Commit("base")
			r.Write("f.txt", setLine(old, 20, "line 20 patched"))
			patchText := commitPatch(t, r)
			base := tree.Map{"f.txt": {Mode: tree.Regular, Data: []byte(c.drift(old))}}
			f := writePatch(t, patchText)
			if _, _, err := gittest.Run(workTree(t, base), nil, "apply", f); err == nil {
				t.Fatal("git apply accepted the drifted patch")
			}
			out, gnuErr := gnuDryRun(t, base, f)
			wantFuzz := 0
			if m := gnuFuzzRe.FindStringSubmatch(string(out)); m != nil && gnuErr == nil {
				wantFuzz, _ = strconv.Atoi(m[2])
			}
			if wantFuzz != c.fuzz {
				t.Fatalf("GNU patch fuzz = %d, the case expects %d:\n%s", wantFuzz, c.fuzz, out)
			}

			e := onlyProblem(t, base, f, patchText)
			if wantFuzz == 0 {
				if e.Kind != KindConflict {
					t.Fatalf("problem = %+v, want a conflict (GNU patch fails too)", e)
				}
				return
			}
			want := "hunk #1 of f.txt applies only with fuzz " + strconv.Itoa(wantFuzz) + " (GNU patch"
			if e.Kind != KindFuzz || !strings.Contains(e.Message, want) || !strings.Contains(e.Message, "git apply rejects it") || e.Line == 0 {
				t.Fatalf("problem = %+v, want kind fuzz with %q", e, want)
			}
		})
	}
}

var gnuFuzzAtRe = regexp.MustCompile(`Hunk #1 succeeded at (\d+) with fuzz (\d+)`)

// TestFuzzLineIsGNUPatchs: where the lines that fuzz keeps occur twice, the
// fuzz message names the line GNU patch applies the hunk at (the nearest to
// its own place, not the first in the file), and NearLine is that line too.
func TestFuzzLineIsGNUPatchs(t *testing.T) {
	block := func(last string) string { return "ctx a\nctx b\nctx c\nthe line\nctx d\nctx e\n" + last + "\n" }
	old := block("ctx g") + num(1, 40) + block("ctx f") + num(41, 50)
	r := gittest.New(t)
	r.Write("f.txt", old)
	r.Commit("base")
	patched := strings.Replace(old, block("ctx f"), strings.Replace(block("ctx f"), "the line", "the line patched", 1), 1)
	r.Write("f.txt", patched)
	patchText := commitPatch(t, r)
	drifted := strings.Replace(old, block("ctx f"), strings.Replace(block("ctx f"), "ctx a", "ctx a drifted", 1), 1)
	base := tree.Map{"f.txt": {Mode: tree.Regular, Data: []byte(drifted)}}
	f := writePatch(t, patchText)
	out, err := gnuDryRun(t, base, f)
	m := gnuFuzzAtRe.FindStringSubmatch(string(out))
	if err != nil || m == nil {
		t.Fatalf("GNU patch: %v\n%s", err, out)
	}
	e := onlyProblem(t, base, f, patchText)
	want := "with fuzz " + m[2] + " (GNU patch, at line " + m[1] + ")"
	if e.Kind != KindFuzz || !strings.Contains(e.Message, want) || strconv.Itoa(e.NearLine) != m[1] {
		t.Errorf("problem = %q near line %d, want kind fuzz with %q and near line %s (GNU patch: %s)", e.Message, e.NearLine, want, m[1], strings.TrimSpace(string(out)))
	}
}

// writePatch writes patchText to a patch file of its own and returns its path.
func writePatch(t *testing.T, patchText string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "0001-drift.patch")
	if err := os.WriteFile(f, []byte(patchText), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// gnuDryRun is the oracle: GNU patch's dry run of patch file f on base, with
// the fuzz patchkit allows.
func gnuDryRun(t *testing.T, base tree.Map, f string) ([]byte, error) {
	t.Helper()
	gnu := exec.Command("patch", "--dry-run", "-p1", "-F"+strconv.Itoa(MaxFuzz), "-i", f)
	gnu.Dir = workTree(t, base)
	return gnu.CombinedOutput()
}

// onlyProblem applies patch file f (patchText) on base and returns the one
// problem it must report.
func onlyProblem(t *testing.T, base tree.Map, f, patchText string) Problem {
	t.Helper()
	p, err := series.Parse(f, []byte(patchText))
	if err != nil {
		t.Fatal(err)
	}
	res := Series(base, []*series.Patch{p})
	if res.OK || len(res.Patches[0].Errors) != 1 {
		t.Fatalf("Series() = %+v, want one problem", res.Patches)
	}
	return res.Patches[0].Errors[0]
}

// TestFuzzAppliesAsGNUPatch: with WithFuzz, a hunk that only fuzz applies
// applies where GNU patch applies it, and the file is byte for byte what
// `patch -p1 -F2` writes: the tree keeps its own lines where the ignored
// context was.
func TestFuzzAppliesAsGNUPatch(t *testing.T) {
	if _, err := exec.LookPath("patch"); err != nil {
		t.Fatalf("GNU patch is needed (Debian package patch): %v", err)
	}
	block := func(last string) string { return "ctx a\nctx b\nctx c\nthe line\nctx d\nctx e\n" + last + "\n" }
	twice := block("ctx g") + num(1, 40) + block("ctx f") + num(41, 50)
	old := num(1, 40)
	cases := []struct {
		name          string
		base          string
		change, drift func(string) string
		fuzz, maxFuzz int
		loose         bool // patch -l
		fails         bool // GNU patch rejects the hunk
	}{
		{name: "first leading context line changed", base: old, fuzz: 1, maxFuzz: 2,
			change: func(s string) string { return setLine(s, 20, "line 20 patched") },
			drift:  func(s string) string { return setLine(s, 17, "line 17 drifted") }},
		{name: "last trailing context line changed", base: old, fuzz: 1, maxFuzz: 2,
			change: func(s string) string { return setLine(s, 20, "line 20 patched") },
			drift:  func(s string) string { return setLine(s, 23, "line 23 drifted") }},
		{name: "two leading context lines changed and moved", base: old, fuzz: 2, maxFuzz: 2,
			change: func(s string) string { return setLine(s, 20, "line 20 patched") },
			drift: func(s string) string {
				return "new 1\nnew 2\nnew 3\n" + setLine(setLine(s, 17, "line 17 drifted"), 18, "line 18 drifted")
			}},
		{name: "needs fuzz 2 but -F1", base: old, fails: true, maxFuzz: 1,
			change: func(s string) string { return setLine(s, 20, "line 20 patched") },
			drift: func(s string) string {
				return setLine(setLine(s, 17, "line 17 drifted"), 18, "line 18 drifted")
			}},
		{name: "-l: blanks turned into a tab, the tree's context kept", base: old, loose: true,
			change: func(s string) string { return setLine(s, 20, "line 20 patched") },
			drift:  func(s string) string { return setLine(setLine(s, 20, "line\t20"), 19, "line   19") }},
		{name: "-l: trailing blanks in the tree", base: old, loose: true, maxFuzz: 2,
			change: func(s string) string { return setLine(s, 20, "line 20 patched") },
			drift:  func(s string) string { return setLine(s, 20, "line 20  ") }},
		{name: "-l: a blank the tree lacks", base: old, loose: true, maxFuzz: 2, fails: true,
			change: func(s string) string { return setLine(s, 20, "line 20 patched") },
			drift:  func(s string) string { return setLine(s, 20, "line20") }},
		{name: "blanks turned into a tab, without -l", base: old, maxFuzz: 2, fails: true,
			change: func(s string) string { return setLine(s, 20, "line 20 patched") },
			drift:  func(s string) string { return setLine(s, 20, "line\t20") }},
		{name: "lines fuzz keeps occur twice", base: twice, fuzz: 1, maxFuzz: 2,
			change: func(s string) string {
				return strings.Replace(s, block("ctx f"), strings.Replace(block("ctx f"), "the line", "the line patched", 1), 1)
			},
			drift: func(s string) string {
				return strings.Replace(s, block("ctx f"), strings.Replace(block("ctx f"), "ctx a", "ctx a drifted", 1), 1)
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := gittest.New(t)
			r.Write("f.txt", c.base)
			r.Commit("base")
			r.Write("f.txt", c.change(c.base))
			patchText := commitPatch(t, r)
			base := tree.Map{"f.txt": {Mode: tree.Regular, Data: []byte(c.drift(c.base))}}
			f := writePatch(t, patchText)
			wt := workTree(t, base)
			args := []string{"-p1", "--no-backup-if-mismatch", "-F" + strconv.Itoa(c.maxFuzz), "-i", f}
			opts := []Option{WithFuzz(c.maxFuzz)}
			if c.loose {
				args = append(args, "-l")
				opts = append(opts, WithLooseWhitespace())
			}
			gnu := exec.Command("patch", args...)
			gnu.Dir = wt
			out, gnuErr := gnu.CombinedOutput()
			wantFuzz := 0
			if m := gnuFuzzRe.FindStringSubmatch(string(out)); m != nil && gnuErr == nil {
				wantFuzz, _ = strconv.Atoi(m[2])
			}
			if wantFuzz != c.fuzz || (gnuErr != nil) != c.fails {
				t.Fatalf("GNU patch fuzz = %d, error %v; the case expects fuzz %d, failing %v:\n%s", wantFuzz, gnuErr, c.fuzz, c.fails, out)
			}
			p, err := series.Parse(f, []byte(patchText))
			if err != nil {
				t.Fatal(err)
			}
			res := Series(base, []*series.Patch{p}, opts...)
			if c.fails {
				if res.OK {
					t.Fatalf("Series() applied, GNU patch -F%d fails:\n%s", c.maxFuzz, out)
				}
				return
			}
			if !res.OK {
				t.Fatalf("Series() = %+v, want applied (GNU patch: %s)", res.Patches[0].Errors, out)
			}
			if h := res.Patches[0].Hunks[0]; h.Fuzz != c.fuzz {
				t.Errorf("hunk fuzz = %d, want %d", h.Fuzz, c.fuzz)
			}
			want, _ := os.ReadFile(filepath.Join(wt, "f.txt"))
			if got := string(res.Changes["f.txt"].Data); got != string(want) {
				t.Errorf("f.txt =\n%s\nGNU patch wrote\n%s", got, want)
			}
		})
	}
}
