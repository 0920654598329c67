package chart

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/chart/charttest"
)

// TestUpgrade moves chart units to a newer release: the directory is
// re-vendored with the series carried forward, the pin moves where it
// lives (a Makefile variable, the spec's literal), and verify passes
// after; a release the series does not apply to writes nothing.
func TestUpgrade(t *testing.T) {
	m := adoptedMonorepo(t)
	f := newFetcher(t, m)
	ctx := context.Background()
	load := func(dir string) *Unit { return mustFind(t, m.Root, dir) }
	for _, tc := range []struct {
		dir, to, pinFile, pinLine string
	}{
		{"packages/system/reloader/charts/reloader", charttest.ReloaderNext, "packages/system/reloader/Makefile", "export CHART_VERSION=" + charttest.ReloaderNext},
		{"packages/system/robotlb/charts/robotlb", charttest.RobotlbNext, "packages/system/robotlb/" + FileName, "    version: " + charttest.RobotlbNext},
	} {
		u := load(tc.dir)
		up, want, err := f.PlanUpgrade(ctx, u, "")
		if err != nil {
			t.Fatal(err)
		}
		if up.To != tc.to || len(up.Problems) > 0 || len(up.Files) == 0 {
			t.Fatalf("%s: plan %+v", tc.dir, up)
		}
		if err := f.WriteUpgrade(u, up, want); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(m.Root, tc.pinFile))
		if !strings.Contains(string(b), tc.pinLine+"\n") {
			t.Errorf("%s after upgrade:\n%s\nwant the line %q", tc.pinFile, b, tc.pinLine)
		}
		if strings.Contains(tc.dir, "robotlb") {
			// The Makefile's helm pull writes the version the spec copies: it moves too.
			b, _ := os.ReadFile(m.Pkg("robotlb", "Makefile"))
			if !strings.Contains(string(b), "--version "+tc.to+"\n") || strings.Contains(string(b), charttest.RobotlbVersion) {
				t.Errorf("robotlb Makefile after upgrade:\n%s", b)
			}
			if !strings.Contains(strings.Join(up.Pins, ","), "packages/system/robotlb/Makefile:5 (the recipe's literal)") || len(up.Also) != 0 {
				t.Errorf("pins %q, also %q; want the recipe's literal moved, nothing else named", up.Pins, up.Also)
			}
		}
		r, err := NewFetcher(m.Root, f.CacheDir, false).Verify(ctx, load(tc.dir))
		if err != nil || !r.OK || r.Pin != tc.to {
			t.Fatalf("verify after upgrade: %v %+v", err, r)
		}
	}

	// A release whose file the patch no longer fits: a plan with problems, nothing written.
	rewritten := charttest.ChartFiles("reloader", "2.3.0", "v1.3.3")
	rewritten["templates/deployment.yaml"] = strings.Replace(rewritten["templates/deployment.yaml"], "          livenessProbe:\n            httpGet:\n              path: /healthz", "          probes:\n            path: /live", 1)
	m.Helm.Add(t, "reloader", "2.3.0", charttest.Tgz(t, "reloader", rewritten))
	u := load("packages/system/reloader/charts/reloader")
	before, _ := ReadDir(m.Root, u.Dir)
	mk, _ := os.ReadFile(m.Pkg("reloader", "Makefile"))
	up, want, err := f.PlanUpgrade(ctx, u, "2.3.0")
	if err != nil {
		t.Fatal(err)
	}
	if len(up.Problems) == 0 {
		t.Fatalf("plan to 2.3.0 has no problems: %+v", up)
	}
	if err := f.WriteUpgrade(u, up, want); err == nil {
		t.Fatal("WriteUpgrade wrote a plan with problems")
	}
	after, _ := ReadDir(m.Root, u.Dir)
	mk2, _ := os.ReadFile(m.Pkg("reloader", "Makefile"))
	if len(Diff(before, after)) != 0 || string(mk) != string(mk2) {
		t.Fatal("a refused upgrade changed the tree")
	}
}
