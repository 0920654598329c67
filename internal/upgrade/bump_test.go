package upgrade

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/gomod"
	"github.com/patchkit/patchkit/internal/gomod/gomodtest"
	"github.com/patchkit/patchkit/internal/refresh"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/upstream"
)

// bumpProxy serves modules a, b, c, d at several versions; b v1.1.0
// requires e, so that raising it changes the module graph.
func bumpProxy(t *testing.T) string {
	var mods []gomodtest.Module
	for _, p := range []string{"a", "b", "c", "d"} {
		for _, v := range []string{"v1.0.0", "v1.1.0", "v1.2.0"} {
			m := gomodtest.Module{Path: "example.com/" + p, Version: v}
			if p == "b" && v != "v1.0.0" {
				m.Require = []string{"example.com/e@v1.0.0"}
			}
			mods = append(mods, m)
		}
	}
	mods = append(mods, gomodtest.Module{Path: "example.com/e", Version: "v1.0.0"})
	return gomodtest.Proxy(t, mods...)
}

const bumpMain = `package main

import (
	"example.com/a"
	"example.com/b"
	"example.com/c"
	"example.com/d"
)

func main() { println(a.V, b.V, c.V, d.V) }
`

// bumpFixture is the generated upstream of the bump tests: v1.0.0 (the pin)
// requires a, b, c, d at v1.0.0; v1.1.0 raises a beyond the series and c to
// its version, in the lines the series touches. The series is made at the
// pin with the go command: 0001 raises a and b, 0002 (stacked) c and d.
type bumpFixture struct {
	up      *gittest.Repo
	cache   *upstream.Cache
	pin, to string
	patches []*series.Patch
	spec    *spec.Spec
}

func newBumpFixture(t *testing.T) *bumpFixture {
	gomodtest.Env(t, bumpProxy(t))
	up := gittest.New(t)
	up.Write("go.mod", gomodtest.MainGoMod("example.com/up", "1.21",
		"example.com/a v1.0.0", "example.com/b v1.0.0", "example.com/c v1.0.0", "example.com/d v1.0.0"))
	up.Write("main.go", bumpMain)
	gomodtest.Go(t, up.Dir, nil, "mod", "tidy")
	pin := up.Release("v1.0.0", "v1.0.0")

	// The series, made at the pin the way a distribution makes it.
	up.Git("checkout", "-q", "--detach", pin)
	var texts []string
	for _, step := range []struct{ subject, mods string }{
		{"bump a and b for CVE-2025-0001", "example.com/a@v1.1.0 example.com/b@v1.1.0"},
		{"bump c and d", "example.com/c@v1.2.0 example.com/d@v1.1.0"},
	} {
		var args []string
		for _, m := range strings.Fields(step.mods) {
			args = append(args, "-require="+m)
		}
		gomodtest.Go(t, up.Dir, nil, append([]string{"mod", "edit"}, args...)...)
		gomodtest.Go(t, up.Dir, nil, "mod", "tidy")
		c := up.Commit(step.subject)
		texts = append(texts, "Subject: "+step.subject+"\n\n"+up.Show(c))
	}
	up.Git("checkout", "-q", "-f", "main")

	// The release: a raised beyond the patch, c to the patch's version, in
	// the lines the patches touch; b and d stay.
	gomodtest.Go(t, up.Dir, nil, "mod", "edit", "-require=example.com/a@v1.2.0", "-require=example.com/c@v1.2.0")
	gomodtest.Go(t, up.Dir, nil, "mod", "tidy")
	up.Release("raise a and c", "v1.1.0")

	return seriesFixture(t, up, texts, "0001-ab.diff", "0002-cd.diff")
}

// seriesFixture opens a cache of up at v1.0.0 (the pin) and v1.1.0 (the
// release) and parses the series texts as patches/up/NAME.
func seriesFixture(t *testing.T, up *gittest.Repo, texts []string, names ...string) *bumpFixture {
	t.Helper()
	ctx := context.Background()
	c, err := upstream.Open(ctx, t.TempDir(), up.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Ensure(ctx, "v1.1.0"); err != nil {
		t.Fatal(err)
	}
	pinCommit, _ := c.Resolve("v1.0.0")
	to, _ := c.Resolve("v1.1.0")
	var patches []*series.Patch
	for i, txt := range texts {
		p, err := series.Parse(filepath.Join("patches", "up", names[i]), []byte(txt))
		if err != nil {
			t.Fatal(err)
		}
		patches = append(patches, p)
	}
	sp := &spec.Spec{Name: "up", File: "images/up/patchkit.yaml", Upstream: spec.Upstream{Ref: "v1.0.0", Releases: "v1.*"}}
	return &bumpFixture{up: up, cache: c, pin: pinCommit, to: to, patches: patches, spec: sp}
}

// TestUpgradeBumpSeries: a stacked series of two bump patches (a and b, then
// c and d) carried to a release that covers half the modules (a ahead of
// the patch, c at its version): each patch is re-expressed with only the
// modules still needed, no version goes down, and the series applied with
// git apply at the new release builds offline against the test's proxy with
// -mod=readonly.
func TestUpgradeBumpSeries(t *testing.T) {
	fx := newBumpFixture(t)
	ctx := context.Background()
	up := fx.up
	res, err := Plan(ctx, Input{Cache: fx.cache, Spec: fx.spec, PinCommit: fx.pin, Patches: fx.patches, To: "v1.1.0"}, fx.to)
	if err != nil {
		t.Fatalf("Plan() = %v", err)
	}
	for i, want := range []struct{ raised, dropped string }{
		{"example.com/b v1.1.0 (was v1.0.0)", "example.com/a v1.1.0 (new ref requires v1.2.0)"},
		{"example.com/d v1.1.0 (was v1.0.0)", "example.com/c v1.2.0 (new ref requires v1.2.0)"},
	} {
		f := res.Patches[i]
		if len(f.Raised) == 0 || f.Raised[0].Upstream != "v1.0.0" || len(f.Covered) != 1 || !f.Covered[0].Covered {
			t.Errorf("patch %d: raised %+v, covered %+v", i+1, f.Raised, f.Covered)
		}
		if f.Fate != FateRaised || !strings.Contains(f.Evidence, want.raised) || !strings.Contains(f.Evidence, "covered upstream: "+want.dropped) {
			t.Errorf("patch %d: fate %s, evidence %q", i+1, f.Fate, f.Evidence)
		}
	}
	if len(res.Writes) != 2 {
		t.Fatalf("Writes = %d, want 2", len(res.Writes))
	}

	// git apply the written series at the release, and build offline.
	work := t.TempDir()
	gittest.Run(work, nil, "clone", "-q", "--branch", "v1.1.0", up.Dir, ".")
	for _, w := range res.Writes {
		file := filepath.Join(t.TempDir(), "p.diff")
		if err := os.WriteFile(file, w.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, stderr, err := gittest.Run(work, nil, "apply", file); err != nil {
			t.Fatalf("git apply %s: %v\n%s\n%s", w.Path, err, stderr, w.Data)
		}
	}
	gomodText, _ := os.ReadFile(filepath.Join(work, "go.mod"))
	for _, want := range []string{"example.com/a v1.2.0", "example.com/b v1.1.0", "example.com/c v1.2.0", "example.com/d v1.1.0", "example.com/e v1.0.0 // indirect"} {
		if !strings.Contains(string(gomodText), want+"\n") {
			t.Errorf("go.mod after the series lacks %q:\n%s", want, gomodText)
		}
	}
	gomodtest.Go(t, work, []string{"GOPROXY=off", "GOFLAGS=-mod=readonly"}, "build", "-o", os.DevNull, ".")
	// And go mod tidy would leave them as they are.
	before, _ := os.ReadFile(filepath.Join(work, "go.sum"))
	gomodtest.Go(t, work, []string{"GOPROXY=off"}, "mod", "tidy")
	after, _ := os.ReadFile(filepath.Join(work, "go.sum"))
	mod2, _ := os.ReadFile(filepath.Join(work, "go.mod"))
	if string(before) != string(after) || string(mod2) != string(gomodText) {
		t.Errorf("go mod tidy changed the series' result")
	}
}

// TestCanonicalBumps: refresh at a pin moved by hand to v1.1.0, where the
// series no longer applies: the bump patches are re-expressed there, and
// Canonical (without the go command) refuses the series.
func TestCanonicalBumps(t *testing.T) {
	fx := newBumpFixture(t)
	src, err := fx.cache.Source(fx.to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := refresh.Canonical(src, fx.patches); err == nil {
		t.Fatal("Canonical() = nil error, want the series not to apply")
	}
	rendered, err := refresh.CanonicalBumps(context.Background(), gomod.Go{}, src, fx.patches)
	if err != nil {
		t.Fatalf("CanonicalBumps() = %v", err)
	}
	for i, want := range []string{"+\texample.com/b v1.1.0\n", "+\texample.com/d v1.1.0\n"} {
		text := string(rendered[i].Text)
		if !rendered[i].Changed || !strings.Contains(text, want) || strings.Contains(text, "-\texample.com/a v1.2.0") || strings.Contains(text, "-\texample.com/c v1.2.0") {
			t.Errorf("patch %d:\n%s", i+1, text)
		}
	}
}
