package obsolete

import (
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// gitDeletedBy is the oracle for the commit that removed path at ref: the
// newest commit `git log --diff-filter=D` lists in pin..ref ("" for none).
func gitDeletedBy(t *testing.T, r *gittest.Repo, pin, ref, path string) string {
	t.Helper()
	out := r.Git("log", "--diff-filter=D", "--format=%H", pin+".."+ref, "--", path)
	if out == "" {
		return ""
	}
	return strings.Fields(out)[0]
}

// TestCheckTargetRemoved: upstream deletes the files some patches modify.
//
//   - #1 modifies only bar.go, which upstream deletes in v1.1.0, brings back
//     in v1.2.0 and deletes again in v1.3.0: conflict with its target
//     removed at v1.1.0 and v1.3.0 (naming each time the deletion after which
//     it stayed gone, as git log --diff-filter=D does), applies at v1.2.0;
//   - #2 modifies old.go, which upstream renames (git mv, and an edit): a
//     rename is no removal, a plain conflict;
//   - #3 modifies gone3.go (deleted with bar.go) and keep.go, whose hunk
//     still applies: a conflict whose gone3.go hunk says removed, not a
//     removed target;
//   - #4 modifies gone4.go (deleted too) and land.go, whose hunk upstream
//     landed: partial, the gone4.go hunk removed (the others decide, and a
//     removed file's change may be needed in what replaced it: never
//     present).
//
// The patches touch separate files, so that git's checks of each alone
// (the oracle) see what the series sees.
func TestCheckTargetRemoved(t *testing.T) {
	r := gittest.New(t)
	files := map[string]string{}
	for _, n := range []string{"bar", "old", "gone3", "keep", "gone4", "land"} {
		files[n] = numbered(n, 30)
		r.Write("pkg/"+n+".go", files[n])
	}
	r.Release("initial", "v1.0.0")
	fix := func(n string) string { return replaceLine(t, files[n], n+"10", n+"10 fixed") }
	patch := func(subject string, names ...string) string {
		m := map[string]string{}
		for _, n := range names {
			m["pkg/"+n+".go"] = fix(n)
		}
		return makePatch(r, "v1.0.0", "main", subject, m)
	}
	patches := []string{
		patch("fix bar", "bar"),
		patch("fix old", "old"),
		patch("fix gone3 and keep", "gone3", "keep"),
		patch("fix gone4 and land", "gone4", "land"),
	}
	r.Write("pkg/land.go", fix("land"))
	landed := r.Commit("land: the fix")
	r.Remove("pkg/bar.go")
	r.Remove("pkg/gone3.go")
	r.Remove("pkg/gone4.go")
	r.Git("mv", "pkg/old.go", "pkg/renamed.go")
	r.Write("pkg/renamed.go", "// renamed\n"+files["old"])
	first := r.Release("drop bar, rename old", "v1.1.0")
	r.Write("pkg/bar.go", files["bar"])
	r.Release("bar is back", "v1.2.0")
	r.Write("README", "readme\n")
	r.Commit("unrelated")
	r.Remove("pkg/bar.go")
	second := r.Commit("drop bar again")
	r.Write("README", "readme 2\n")
	r.Release("release", "v1.3.0")

	for ref, want := range map[string]string{"v1.1.0": first, "v1.3.0": second} {
		if got := gitDeletedBy(t, r, "v1.0.0", ref, "pkg/bar.go"); got != want {
			t.Fatalf("git log --diff-filter=D v1.0.0..%s = %s, the fixture's deletion is %s", ref, got, want)
		}
	}
	if got := gitDeletedBy(t, r, "v1.0.0", "v1.1.0", "pkg/old.go"); got != first {
		t.Fatalf("git log --diff-filter=D (no renames) of old.go = %s, want %s", got, first)
	}
	if out := r.Git("show", "-M", "--name-status", "--format=", first); !strings.Contains(out, "pkg/old.go\tpkg/renamed.go") {
		t.Fatalf("git show -M %s does not see the rename:\n%s", first, out)
	}

	rep := scan{pin: "v1.0.0", releases: "v*", patches: patches}.run(t, r.URL())
	if got, want := statuses(rep, 0), "v1.1.0=conflict v1.2.0=applies v1.3.0=conflict"; got != want {
		t.Fatalf("#1 statuses = %q, want %q", got, want)
	}
	for ref, want := range map[string]string{"v1.1.0": first, "v1.3.0": second} {
		res := result(t, rep, 0, ref)
		if !res.TargetRemoved() || res.Removed.Commit != want || strings.Join(res.Removed.Paths, " ") != "pkg/bar.go" {
			t.Errorf("#1 at %s: removed = %+v (%s), want pkg/bar.go removed by %s", ref, res.Removed, res.Evidence, Short(want))
		}
		if w := "target removed: pkg/bar.go deleted by upstream commit " + Short(want); !strings.HasPrefix(res.Evidence, w) {
			t.Errorf("#1 at %s: evidence = %q, want it to start %q", ref, res.Evidence, w)
		}
		if res.Via != ViaRemoved || res.Commit != "" || res.Conflict != nil {
			t.Errorf("#1 at %s: via %s commit %q conflict %v, want via removed and no commit or conflict", ref, res.Via, res.Commit, res.Conflict)
		}
	}
	if res := result(t, rep, 0, "v1.2.0"); res.Removed != nil {
		t.Errorf("#1 at v1.2.0: removed = %+v, want none: bar.go is back", res.Removed)
	}

	for _, ref := range []string{"v1.1.0", "v1.3.0"} {
		if res := result(t, rep, 1, ref); res.Status != StatusConflict || res.Removed != nil {
			t.Errorf("#2 (renamed) at %s: %s removed %+v (%s), want a plain conflict", ref, res.Status, res.Removed, res.Evidence)
		}
		res := result(t, rep, 2, ref)
		if res.Status != StatusConflict || res.TargetRemoved() || res.Removed == nil || res.Removed.Commit == "" {
			t.Errorf("#3 at %s: %s removed %+v (%s), want a conflict with gone3.go's hunk removed", ref, res.Status, res.Removed, res.Evidence)
		}
		if got := hunkVias2(res.Hunks); got != "pkg/gone3.go=conflict/removed pkg/keep.go=applies/" {
			t.Errorf("#3 at %s: hunks %s", ref, got)
		}
		if !strings.Contains(res.Evidence, "hunks whose file upstream removed (pkg/gone3.go deleted by upstream commit "+Short(first)) {
			t.Errorf("#3 at %s: evidence %q does not name the removed file", ref, res.Evidence)
		}
		res = result(t, rep, 3, ref)
		if res.Status != StatusPartial || res.Commit != landed || res.Removed == nil || res.TargetRemoved() {
			t.Errorf("#4 at %s: %s commit %s removed %+v (%s), want partial by %s with gone4.go's hunk removed", ref, res.Status, Short(res.Commit), res.Removed, res.Evidence, Short(landed))
		}
		if got := hunkVias2(res.Hunks); got != "pkg/gone4.go=conflict/removed pkg/land.go=present/reverse-apply" {
			t.Errorf("#4 at %s: hunks %s", ref, got)
		}
		if strings.Contains(res.Evidence, "need a refresh") {
			t.Errorf("#4 at %s: evidence %q asks to refresh a removed file's hunk", ref, res.Evidence)
		}
	}
	oracle(t, r, rep, patches)
}

// hunkVias2 lists "path=status/via" per hunk.
func hunkVias2(hs []Hunk) string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Path+"="+h.Status+"/"+h.Via)
	}
	return strings.Join(out, " ")
}
