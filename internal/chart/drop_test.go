package chart

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/chart/charttest"
)

// TestUpgradeDropsLanded: the release 2.2.0 carries the reloader's
// startupProbe patch (the real GNU patch finds it reversed there and
// reverse-applies it). upgrade drops it: the patch file is deleted, its
// entry leaves the spec's series and its line the Makefile (whose pin
// moves in the same file), and verify passes at 2.2.0. The package's image
// unit, built from the chart's appVersion, is named with the upgrade that
// carries it.
func TestUpgradeDropsLanded(t *testing.T) {
	m := adoptedMonorepo(t)
	carried := charttest.AddReloaderCarrying(t, m)
	patch := "packages/system/reloader/patches/deployment-startup-probe.diff"

	// The oracle: GNU patch, as the Makefile runs it, refuses the patch at
	// 2.2.0, and reverse-applies it there.
	dir := filepath.Join(t.TempDir(), "charts", "reloader")
	charttest.WriteFiles(t, dir, carried)
	for _, tc := range []struct {
		args []string
		ok   bool
	}{{[]string{"--forward", "--dry-run", "-p1"}, false}, {[]string{"-R", "--dry-run", "-p1"}, true}} {
		cmd := exec.Command("patch", tc.args...)
		cmd.Dir, cmd.SysProcAttr = filepath.Dir(filepath.Dir(dir)), noTTY()
		cmd.Stdin, _ = os.Open(filepath.Join(m.Root, patch))
		out, err := cmd.CombinedOutput()
		if (err == nil) != tc.ok {
			t.Fatalf("GNU patch %v at 2.2.0: %v, want ok=%v\n%s", tc.args, err, tc.ok, out)
		}
	}

	ctx := context.Background()
	f := newFetcher(t, m)
	u := mustFind(t, m.Root, "packages/system/reloader/charts/reloader")
	up, want, err := f.PlanUpgrade(ctx, u, "")
	if err != nil {
		t.Fatal(err)
	}
	if up.To != "2.2.0" || len(up.Problems) > 0 || len(up.Dropped) != 1 || up.Dropped[0].File != patch {
		t.Fatalf("plan = %+v; want 2.2.0, the patch dropped", up)
	}
	wantAlso := "image unit packages/system/reloader/images/reloader is built from v1.3.0, the chart's appVersion v1.3.0: move it and carry its series with `patchkit upgrade packages/system/reloader/images/reloader --to v1.3.2`"
	if len(up.Also) != 1 || up.Also[0] != wantAlso {
		t.Errorf("also = %q, want [%q]", up.Also, wantAlso)
	}
	if err := f.WriteUpgrade(u, up, want); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(m.Root, patch)); !os.IsNotExist(err) {
		t.Errorf("the dropped patch is still there: %v", err)
	}
	mk, _ := os.ReadFile(m.Pkg("reloader", "Makefile"))
	if strings.Contains(string(mk), "deployment-startup-probe.diff") || !strings.Contains(string(mk), "export CHART_VERSION=2.2.0\n") || !strings.Contains(string(mk), "update: clean reloader-update\n") {
		t.Errorf("Makefile after the upgrade:\n%s", mk)
	}
	sp, _ := os.ReadFile(m.Pkg("reloader", FileName))
	if !strings.Contains(string(sp), "      patches: []\n") {
		t.Errorf("spec after the upgrade:\n%s", sp)
	}
	r, err := NewFetcher(m.Root, f.CacheDir, false).Verify(ctx, mustFind(t, m.Root, u.Dir))
	if err != nil || !r.OK || r.Pin != "2.2.0" {
		t.Fatalf("verify after the upgrade: %v %+v", err, r)
	}
	have, _ := ReadDir(m.Root, u.Dir)
	for p, c := range carried {
		if string(have[p]) != c {
			t.Errorf("%s is not 2.2.0's", p)
		}
	}
}

func mustFind(t *testing.T, root, dir string) *Unit {
	t.Helper()
	u, err := Find(root, dir)
	if err != nil || u == nil {
		t.Fatalf("Find(%s): %v", dir, err)
	}
	return u
}

// TestPatchLine: the Makefile line that applies a patch alone is found
// (and only it); a line that does more is refused; a glob needs none.
func TestPatchLine(t *testing.T) {
	for _, tc := range []struct {
		name, mk, line string
		err            bool
	}{
		{"alone", "update:\n\tpatch --forward -p1 < patches/a.diff\n\tpatch -p1 < patches/b.diff\n", "\tpatch --forward -p1 < patches/a.diff", false},
		{"cd and relative", "update:\n\tcd charts/x && patch -p 1 < ../../patches/a.diff\n", "\tcd charts/x && patch -p 1 < ../../patches/a.diff", false},
		{"git apply", "update:\n\tgit apply --whitespace=nowarn ./patches/a.diff\n", "\tgit apply --whitespace=nowarn ./patches/a.diff", false},
		{"glob", "update:\n\tfor p in patches/*.diff; do patch -p1 < $$p; done\n", "", false},
		{"with another", "update:\n\tcat patches/a.diff patches/b.diff | patch -p1\n", "", true},
		{"chained", "update:\n\tpatch -p1 < patches/a.diff && rm -f x\n", "", true},
		{"continued", "update:\n\tpatch -p1 < patches/a.diff \\\n\t  || true\n", "", true},
		{"twice", "a:\n\tpatch -p1 < patches/a.diff\nb:\n\tpatch -p1 < patches/a.diff\n", "", true},
		{"another name", "update:\n\tpatch -p1 < patches/a.diff.orig\n\tpatch -p1 < patches/xa.diff\n", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line, _, err := patchLine([]byte(tc.mk), "pkg", "pkg/patches/a.diff")
			if line != tc.line || (err != nil) != tc.err {
				t.Errorf("patchLine() = %q, %v; want %q, error %v", line, err, tc.line, tc.err)
			}
		})
	}
}

// TestDropSeriesEntries: an entry leaves a block list (its line deleted,
// comments and the rest kept), a flow list (rewritten on its line), and a
// list it empties becomes [].
func TestDropSeriesEntries(t *testing.T) {
	head := "# kept\ncharts:\n  - dir: ./charts/x\n    upstream: {helm: http://h, chart: x}\n    version: 1.0.0\n    series:\n      tool: patch\n"
	for _, tc := range []struct {
		name, in, out string
		drop          []string
	}{
		{"block", head + "      patches:\n        - ./patches/a.diff  # first\n        - {file: ./patches/b.diff, args: -p2}\n        - ./patches/c.diff\n",
			head + "      patches:\n        - ./patches/a.diff  # first\n        - ./patches/c.diff\n", []string{"pkg/patches/b.diff"}},
		{"block emptied", head + "      patches:\n        - ./patches/a.diff\n", head + "      patches: []\n", []string{"pkg/patches/a.diff"}},
		{"flow", head + "      patches: [./patches/a.diff, ./patches/b.diff]\n", head + "      patches: [./patches/b.diff]\n", []string{"pkg/patches/a.diff"}},
		{"flow emptied", head + "      patches: [./patches/a.diff]\n", head + "      patches: []\n", []string{"pkg/patches/a.diff"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := dropSeriesEntries([]byte(tc.in), "pkg/charts/x", "pkg", tc.drop)
			if err != nil || string(got) != tc.out {
				t.Errorf("dropSeriesEntries() = %v\n%s\nwant\n%s", err, got, tc.out)
			}
			if _, err := Parse(t.TempDir(), "pkg/"+FileName, got); err != nil && !strings.Contains(err.Error(), "does not exist") {
				t.Errorf("the result does not parse: %v", err)
			}
		})
	}
	if _, err := dropSeriesEntries([]byte(head+"      patches: [./patches/a.diff]\n"), "pkg/charts/x", "pkg", []string{"pkg/patches/z.diff"}); err == nil {
		t.Error("dropping an entry the series lacks: no error")
	}
}
