package backport

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/gomod"
	"github.com/patchkit/patchkit/internal/gomod/gomodtest"
)

// TestRaiseBump: upstream raised b, then a (the commit backported): the
// commit's diff does not apply at the pin (its context has b's new version),
// so the backport is re-expressed there: it raises a alone, leaves b at the
// pin's version, and the pin with the new patch builds offline.
func TestRaiseBump(t *testing.T) {
	var mods []gomodtest.Module
	for _, p := range []string{"a", "b"} {
		for _, v := range []string{"v1.0.0", "v1.1.0", "v1.2.0"} {
			mods = append(mods, gomodtest.Module{Path: "example.com/" + p, Version: v})
		}
	}
	gomodtest.Env(t, gomodtest.Proxy(t, mods...))
	r := gittest.New(t)
	r.Write("go.mod", gomodtest.MainGoMod("example.com/up", "1.21", "example.com/a v1.0.0", "example.com/b v1.0.0"))
	r.Write("main.go", "package main\n\nimport (\n\t\"example.com/a\"\n\t\"example.com/b\"\n)\n\nfunc main() { println(a.V, b.V) }\n")
	gomodtest.Go(t, r.Dir, nil, "mod", "tidy")
	pin := r.Release("initial", "v1.0.0")
	gomodtest.Go(t, r.Dir, nil, "mod", "edit", "-require=example.com/b@v1.2.0")
	gomodtest.Go(t, r.Dir, nil, "mod", "tidy")
	r.Commit("raise b")
	gomodtest.Go(t, r.Dir, nil, "mod", "edit", "-require=example.com/a@v1.1.0")
	gomodtest.Go(t, r.Dir, nil, "mod", "tidy")
	fix := r.Commit("raise a for CVE-2025-1111")

	ctx := context.Background()
	c := openCache(t, r.URL(), false)
	plan, err := NewPlan(ctx, Request{Cache: c, RepoURL: "https://example.com/up", Display: "patches/up", Rev: fix, PinCommit: pin})
	if err != nil {
		t.Fatal(err)
	}
	src, err := c.Source(pin)
	if err != nil {
		t.Fatal(err)
	}
	raised, err := plan.RaiseBump(ctx, gomod.Go{}, src, nil)
	if err != nil {
		t.Fatalf("RaiseBump() = %v", err)
	}
	if raised != "raised example.com/a to v1.1.0 (pin: v1.0.0)" {
		t.Errorf("RaiseBump() = %q", raised)
	}
	text := string(plan.Content)
	if !strings.HasPrefix(text, "Subject: raise a for CVE-2025-1111\n") || strings.Contains(text, "example.com/b v1.2.0") {
		t.Errorf("the re-expressed backport:\n%s", text)
	}
	work := t.TempDir()
	gittest.Run(work, nil, "clone", "-q", "--branch", "v1.0.0", r.Dir, ".")
	file := filepath.Join(t.TempDir(), "p.diff")
	if err := os.WriteFile(file, plan.Content, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := gittest.Run(work, nil, "apply", file); err != nil {
		t.Fatalf("git apply: %v\n%s", err, stderr)
	}
	gomodtest.Go(t, work, []string{"GOPROXY=off", "GOFLAGS=-mod=readonly"}, "build", "-o", os.DevNull, ".")
}
