package obsolete

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/upstream"
)

// TestUnscanned: the upstream's tag names alone decide a scan with nothing
// to scan, and the report is Check's on the whole history; anything that
// needs the history to decide (a newer or non-version matching tag, a
// branch, --refs, a pin that is no version) is left to Check.
func TestUnscanned(t *testing.T) {
	r := gittest.New(t)
	r.Write("a.txt", numbered("a", 10))
	r.Commit("one")
	r.Tag("v1.0.0")
	r.Write("a.txt", numbered("b", 10))
	r.Commit("two")
	r.Tag("v1.1.0")
	r.Tag("nightly-1")
	// A release tag naming a tree, not newer than the pin: skipped alike.
	r.Git("tag", "v1.0.1-tree", strings.TrimSpace(r.Git("rev-parse", "HEAD^{tree}")))
	patches := parsePatches(t, []string{makePatch(r, "v1.1.0", "main", "fix", map[string]string{"a.txt": replaceLine(t, numbered("b", 10), "b3", "B3")})})
	ctx := context.Background()
	shallow, err := upstream.Open(ctx, t.TempDir(), r.URL(), upstream.WithShallow(true))
	if err != nil {
		t.Fatal(err)
	}
	defer shallow.Close()
	in := func(s spec.Upstream, refs ...string) Input {
		return Input{Cache: shallow, Spec: &spec.Spec{Name: "test", File: "images/test/patchkit.yaml", Upstream: s},
			Patches: patches, Refs: refs}
	}
	latest := spec.Upstream{Ref: "v1.1.0", Releases: "v*"}
	got, ok, err := Unscanned(ctx, in(latest))
	if err != nil || !ok {
		t.Fatalf("Unscanned(pin v1.1.0) = %v, %v; want a report", ok, err)
	}
	full := openCache(t, r.URL())
	want := in(latest)
	want.Cache = full
	if want.PinCommit, err = full.Resolve("v1.1.0"); err != nil {
		t.Fatal(err)
	}
	rep, err := Check(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rep) {
		t.Errorf("Unscanned() report differs from Check's:\n got %+v\nwant %+v", got, rep)
	}
	if len(rep.Refs) != 0 || len(rep.Skipped) != 2 {
		t.Fatalf("Check() scanned %v and skipped %v: the fixture changed", rep.Refs, rep.Skipped)
	}

	r.Tag("v1.2.0-nightly") // a prerelease of v1.2.0: newer
	for _, tt := range []struct {
		name string
		in   Input
	}{
		{"a newer tag", in(spec.Upstream{Ref: "v1.0.0", Releases: "v*"})},
		{"a newer prerelease", in(spec.Upstream{Ref: "v1.1.0", Releases: "v*"})},
		{"a tag that is no version", in(spec.Upstream{Ref: "v1.0.0", Releases: "*"})},
		{"a branch", in(spec.Upstream{Ref: "v1.1.0", Releases: "v1.1*", Branches: []string{"main"}})},
		{"--refs", in(spec.Upstream{Ref: "v1.1.0", Releases: "v1.1*"}, "v1.0.0")},
		{"a pin that is no version", in(spec.Upstream{Ref: "nightly-1", Releases: "v1.1*"})},
		{"a pin upstream lacks", in(spec.Upstream{Ref: "v0.9.0", Releases: "v0*"})},
	} {
		// A fresh Cache lists the upstream anew.
		c, err := upstream.Open(ctx, t.TempDir(), r.URL(), upstream.WithShallow(true))
		if err != nil {
			t.Fatal(err)
		}
		tt.in.Cache = c
		if _, ok, err := Unscanned(ctx, tt.in); ok || err != nil {
			t.Errorf("%s: Unscanned() = %v, %v; want it left to Check", tt.name, ok, err)
		}
		c.Close()
	}
	if _, ok, err := Unscanned(ctx, in(spec.Upstream{Ref: "v1.1.0", Releases: "v1.1*"})); !ok || err != nil {
		t.Errorf("Unscanned(releases v1.1*) = %v, %v; want a report (nothing newer matches)", ok, err)
	}
}
