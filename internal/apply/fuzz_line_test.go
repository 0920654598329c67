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
	f := filepath.Join(t.TempDir(), "0001-drift.patch")
	if err := os.WriteFile(f, []byte(patchText), 0o644); err != nil {
		t.Fatal(err)
	}
	gnu := exec.Command("patch", "--dry-run", "-p1", "-F"+strconv.Itoa(MaxFuzz), "-i", f)
	gnu.Dir = workTree(t, base)
	out, err := gnu.CombinedOutput()
	m := gnuFuzzAtRe.FindStringSubmatch(string(out))
	if err != nil || m == nil {
		t.Fatalf("GNU patch: %v\n%s", err, out)
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
	want := "with fuzz " + m[2] + " (GNU patch, at line " + m[1] + ")"
	if e.Kind != KindFuzz || !strings.Contains(e.Message, want) || strconv.Itoa(e.NearLine) != m[1] {
		t.Errorf("problem = %q near line %d, want kind fuzz with %q and near line %s (GNU patch: %s)", e.Message, e.NearLine, want, m[1], strings.TrimSpace(string(out)))
	}
}
