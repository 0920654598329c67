package upgrade

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/gomod/gomodtest"
)

// TestUpgradeBumpHolds: a series that holds modules down (issue U) carried
// to a release that raised them: 0001 lowers b's require line, 0002 adds a
// replace that keeps a below what the pin requires. upgrade re-expresses
// each as a hold (never raising a held module, never dropping the hold as
// "covered"), and the written series applied with git apply at the release
// builds offline with the held versions.
func TestUpgradeBumpHolds(t *testing.T) {
	gomodtest.Env(t, bumpProxy(t))
	ctx := context.Background()
	up := gittest.New(t)
	up.Write("go.mod", gomodtest.MainGoMod("example.com/up", "1.21",
		"example.com/a v1.1.0", "example.com/b v1.1.0", "example.com/c v1.0.0", "example.com/d v1.0.0"))
	up.Write("main.go", bumpMain)
	gomodtest.Go(t, up.Dir, nil, "mod", "tidy")
	pin := up.Release("v1.0.0", "v1.0.0")

	up.Git("checkout", "-q", "--detach", pin)
	var texts []string
	for _, step := range []struct{ subject, edit string }{
		{"keep b at v1.0.0: v1.1.0 breaks us", "-require=example.com/b@v1.0.0"},
		{"hold a at v1.0.0", "-replace=example.com/a=example.com/a@v1.0.0"},
	} {
		gomodtest.Go(t, up.Dir, nil, "mod", "edit", step.edit)
		gomodtest.Go(t, up.Dir, nil, "mod", "tidy")
		c := up.Commit(step.subject)
		texts = append(texts, "Subject: "+step.subject+"\n\n"+up.Show(c))
	}
	up.Git("checkout", "-q", "-f", "main")
	gomodtest.Go(t, up.Dir, nil, "mod", "edit", "-require=example.com/a@v1.2.0", "-require=example.com/b@v1.2.0")
	gomodtest.Go(t, up.Dir, nil, "mod", "tidy")
	up.Release("raise a and b", "v1.1.0")

	fx := seriesFixture(t, up, texts, "0001-hold-b.diff", "0002-hold-a.diff")
	res, err := Plan(ctx, Input{Cache: fx.cache, Spec: fx.spec, PinCommit: fx.pin, Patches: fx.patches, To: "v1.1.0"}, fx.to)
	if err != nil {
		t.Fatalf("Plan() = %v", err)
	}
	for i, want := range []string{
		"holds example.com/b at v1.0.0 (new ref requires v1.2.0)",
		"holds example.com/a at v1.0.0 (new ref requires v1.2.0)",
	} {
		f := res.Patches[i]
		if f.Fate != FateRaised || !strings.Contains(f.Evidence, want) || len(f.Raised) != 1 || !f.Raised[0].Hold {
			t.Errorf("patch %d: fate %s, raised %+v, evidence %q; want raised, holding: %q", i+1, f.Fate, f.Raised, f.Evidence, want)
		}
	}
	if len(res.Writes) != 2 {
		t.Fatalf("Writes = %d, want 2", len(res.Writes))
	}
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
	for _, want := range []string{"\texample.com/b v1.0.0\n", "replace example.com/a => example.com/a v1.0.0\n"} {
		if !strings.Contains(string(gomodText), want) {
			t.Errorf("go.mod after the series lacks %q:\n%s", want, gomodText)
		}
	}
	// The build uses the held versions.
	gomodtest.Go(t, work, []string{"GOPROXY=off", "GOFLAGS=-mod=readonly"}, "build", "-o", os.DevNull, ".")
	out := gomodtest.Go(t, work, []string{"GOFLAGS=-mod=readonly"}, "list", "-m", "-f", "{{.Path}} {{with .Replace}}{{.Version}}{{else}}{{.Version}}{{end}}", "all")
	for _, want := range []string{"example.com/a v1.0.0\n", "example.com/b v1.0.0\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("go list -m all after the series = %q, want %q in it", out, want)
		}
	}
}
