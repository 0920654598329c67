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
			f := filepath.Join(t.TempDir(), "0001-drift.patch")
			if err := os.WriteFile(f, []byte(patchText), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, _, err := gittest.Run(workTree(t, base), nil, "apply", f); err == nil {
				t.Fatal("git apply accepted the drifted patch")
			}
			gnu := exec.Command("patch", "--dry-run", "-p1", "-F"+strconv.Itoa(MaxFuzz), "-i", f)
			gnu.Dir = workTree(t, base)
			out, gnuErr := gnu.CombinedOutput()
			wantFuzz := 0
			if m := gnuFuzzRe.FindStringSubmatch(string(out)); m != nil && gnuErr == nil {
				wantFuzz, _ = strconv.Atoi(m[2])
			}
			if wantFuzz != c.fuzz {
				t.Fatalf("GNU patch fuzz = %d, the case expects %d:\n%s", wantFuzz, c.fuzz, out)
			}

			p, err := series.Parse(f, []byte(patchText))
			if err != nil {
				t.Fatal(err)
			}
			res := Series(base, []*series.Patch{p})
			if res.OK || len(res.Patches[0].Errors) != 1 {
				t.Fatalf("Series() = %+v, want one problem", res.Patches)
			}
			e := res.Patches[0].Errors[0]
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
