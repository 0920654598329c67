package obsolete

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/upstream"
)

// TestHistoryGrowsWithUpstream counts the work of a run after upstream
// moved on: git lists (rev-list) and diffs (log -p) only the new commits,
// and only the refs whose commit changed are evaluated; when no new commit
// (merges aside) touches the series' paths, git log is not run at all. The
// report is the one a cold run on a fresh cache gives, and agrees with the
// git CLI. A rewritten history (a tag moved to another line) is walked
// whole again.
func TestHistoryGrowsWithUpstream(t *testing.T) {
	fx := newStatusFixture(t)
	sp := &spec.Spec{Name: "test", File: "images/test/patchkit.yaml",
		Upstream: spec.Upstream{Ref: "v1.0.0", Releases: "v*", Branches: []string{"main"}}}
	type run struct {
		rep       *Report
		evaluated []string
		work      historyWork
	}
	check := func(c *upstream.Cache) run {
		t.Helper()
		ctx := context.Background()
		if err := c.Fetch(ctx); err != nil {
			t.Fatal(err)
		}
		pin, err := c.Resolve("v1.0.0")
		if err != nil {
			t.Fatal(err)
		}
		var r run
		in := Input{Cache: c, Spec: sp, PinCommit: pin, Patches: parsePatches(t, fx.patches)}
		r.rep, err = Check(ctx, in, withHistoryWork(&r.work), withEvaluated(func(ref Ref) { r.evaluated = append(r.evaluated, ref.Name) }))
		if err != nil {
			t.Fatalf("Check() = %v", err)
		}
		for i := range r.rep.Patches {
			r.rep.Patches[i].Patch = nil // parsed anew by each run
		}
		return r
	}
	// changedRefs names the refs of now that were not in before with the
	// same commit.
	changedRefs := func(before, now *Report) []string {
		old := map[Ref]bool{}
		for _, r := range before.Refs {
			old[r] = true
		}
		var out []string
		for _, r := range now.Refs {
			if !old[r] {
				out = append(out, r.Name)
			}
		}
		return out
	}
	c := openCache(t, fx.up.URL(), "main")
	prev := check(c)
	if prev.work.FullWalks != 2 || prev.work.Steps != 0 {
		t.Fatalf("cold run: %+v, want both questions asked over the whole range", prev.work)
	}
	if prev.work.Listed != 6 {
		t.Fatalf("cold run listed %d commits, want the 6 after the pin", prev.work.Listed)
	}

	steps := []struct {
		name   string
		move   func()
		logged int // commits of the move that touch the series' paths
	}{
		{name: "one unrelated commit", move: func() {
			fx.up.Write("unrelated.txt", "y\n")
			fx.up.Commit("unrelated again")
			fx.up.Tag("v1.2.0")
		}},
		{name: "a merge of unrelated work", move: func() {
			fx.up.Git("checkout", "-q", "-b", "side")
			fx.up.Write("side.txt", "side\n")
			fx.up.Commit("side work")
			fx.up.Git("checkout", "-q", "main")
			fx.up.Write("unrelated.txt", "w\n")
			fx.up.Commit("unrelated on main")
			fx.up.Git("merge", "-q", "--no-ff", "-m", "merge side", "side")
			fx.up.Tag("v1.2.1")
		}},
		{name: "a mode change of a patched file", logged: 1, move: func() {
			if err := os.Chmod(filepath.Join(fx.up.Dir, "c.txt"), 0o755); err != nil {
				t.Fatal(err)
			}
			fx.up.Commit("c: executable")
		}},
		{name: "one commit on a patched file", logged: 1, move: func() {
			fx.up.Write("c.txt", "moved\n"+fx.up.Read("c.txt"))
			fx.up.Commit("c: a line on top")
			fx.up.Tag("v1.3.0")
		}},
		{name: "two commits, no release", logged: 1, move: func() {
			fx.up.Write("a.txt", strings.Replace(fx.up.Read("a.txt"), "a10\n", "A10\n", 1))
			fx.up.Commit("a: land A10")
			fx.up.Write("unrelated.txt", "z\n")
			fx.up.Commit("unrelated a third time")
		}},
	}
	for _, st := range steps {
		before := fx.up.Head()
		st.move()
		fresh := strings.Count(fx.up.Git("rev-list", before+".."+fx.up.Head()), "\n") + 1
		now := check(c)
		if now.work.FullWalks != 0 {
			t.Errorf("%s: %d questions over the whole range, want none", st.name, now.work.FullWalks)
		}
		if now.work.Listed != fresh || now.work.Logged != st.logged {
			t.Errorf("%s: git listed %d and diffed %d commits, want %d and %d: only the new ones", st.name, now.work.Listed, now.work.Logged, fresh, st.logged)
		}
		if quiet := st.logged == 0; (now.work.Quiet == 1) != quiet || now.work.Quiet > 1 {
			t.Errorf("%s: %d steps of the diffs answered without git log, want %d", st.name, now.work.Quiet, map[bool]int{true: 1}[quiet])
		}
		if got, want := now.evaluated, changedRefs(prev.rep, now.rep); !reflect.DeepEqual(got, want) || len(want) == 0 {
			t.Errorf("%s: evaluated %q, want the refs that changed, %q", st.name, got, want)
		}
		cold := check(openCache(t, fx.up.URL(), "main"))
		if !reflect.DeepEqual(now.rep, cold.rep) {
			t.Errorf("%s: the report differs from a cold run's:\nnow  %+v\ncold %+v", st.name, now.rep, cold.rep)
		}
		agreesWithGit(t, fx.up, now.rep, fx.patches)
		prev = now
	}

	// A warm run after the steps asks git nothing.
	if warm := check(c); warm.work != (historyWork{}) || len(warm.evaluated) != 0 {
		t.Errorf("warm run: %+v, evaluated %q; want no work", warm.work, warm.evaluated)
	}

	// Rewritten history: main goes back to v1.2.0 and on another way, and
	// v1.3.0 moves there. The old range is no longer all reached: the range
	// is listed whole again. (The diffs still step: an old entry of a commit
	// out of the range is dropped, and every commit no old tip reaches is
	// diffed, whatever the old range was.)
	fx.up.Git("checkout", "-q", "-B", "main", "v1.2.0")
	fx.up.Write("f.txt", "rewritten\n")
	fx.up.Commit("f: rewritten")
	fx.up.Git("tag", "-f", "v1.3.0")
	now := check(c)
	if now.work.FullWalks != 1 || now.work.Logged != 1 {
		t.Errorf("rewritten history: %+v, want the range listed whole and one new commit diffed", now.work)
	}
	cold := check(openCache(t, fx.up.URL(), "main"))
	if !reflect.DeepEqual(now.rep, cold.rep) {
		t.Errorf("rewritten history: the report differs from a cold run's:\nnow  %+v\ncold %+v", now.rep, cold.rep)
	}
	agreesWithGit(t, fx.up, now.rep, fx.patches)

	// A withdrawn release: upstream deletes a tag. The warm run scans what
	// a cold one does, without it.
	fx.up.Git("tag", "-d", "v1.2.1")
	now = check(c)
	for _, r := range now.rep.Refs {
		if r.Name == "v1.2.1" {
			t.Errorf("withdrawn release: v1.2.1 is still scanned")
		}
	}
	cold = check(openCache(t, fx.up.URL(), "main"))
	if !reflect.DeepEqual(now.rep, cold.rep) {
		t.Errorf("withdrawn release: the report differs from a cold run's:\nnow  %+v\ncold %+v", now.rep, cold.rep)
	}
}

// TestStepRefusesRewrites: step appends only when every old commit is still
// reached, and no fresh commit is an old one.
func TestStepRefusesRewrites(t *testing.T) {
	old := [][]string{{"a", "pin"}, {"b", "a"}, {"c", "pin"}}
	tests := []struct {
		name  string
		fresh [][]string
		tips  []string
		ok    bool
	}{
		{name: "on top of both", fresh: [][]string{{"d", "b", "c"}}, tips: []string{"d"}, ok: true},
		{name: "old tips kept", fresh: [][]string{{"d", "b"}}, tips: []string{"d", "c"}, ok: true},
		{name: "nothing new", tips: []string{"b", "c"}, ok: true},
		{name: "a tip dropped", fresh: [][]string{{"d", "b"}}, tips: []string{"d"}},
		{name: "a tip moved back", tips: []string{"a", "c"}},
		{name: "old commit listed again", fresh: [][]string{{"b", "a"}, {"d", "b", "c"}}, tips: []string{"d"}},
	}
	for _, tt := range tests {
		got := step(old, tt.fresh, tt.tips)
		if (got != nil) != tt.ok {
			t.Errorf("%s: step() = %v, want ok=%v", tt.name, got, tt.ok)
			continue
		}
		if tt.ok && len(got) != len(old)+len(tt.fresh) {
			t.Errorf("%s: step() = %v, want the old lines then the fresh ones", tt.name, got)
		}
	}
}

// agreesWithGit checks rep against `git apply -R --check` and `git apply
// --check` of each patch alone at each ref (the fixture's patches touch
// separate files): where one succeeds, patchkit says present or applies.
func agreesWithGit(t *testing.T, r *gittest.Repo, rep *Report, patches []string) {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for i, p := range patches {
		f := filepath.Join(dir, fmt.Sprintf("%04d.diff", i+1))
		if err := os.WriteFile(f, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	for k, ref := range rep.Refs {
		wt := filepath.Join(t.TempDir(), "wt")
		r.Git("worktree", "add", "-q", "--detach", wt, ref.Commit)
		for i, f := range files {
			_, _, revErr := gittest.Run(wt, nil, "apply", "-R", "--check", f)
			_, _, fwdErr := gittest.Run(wt, nil, "apply", "--check", f)
			got := rep.Patches[i].Results[k].Status
			switch {
			case revErr == nil && got != StatusPresent:
				t.Errorf("%s patch %d: git apply -R --check succeeds, patchkit says %s", ref.Name, i+1, got)
			case revErr != nil && fwdErr == nil && got != StatusApplies:
				t.Errorf("%s patch %d: git apply --check succeeds, patchkit says %s", ref.Name, i+1, got)
			case revErr != nil && fwdErr != nil && got == StatusApplies:
				t.Errorf("%s patch %d: git applies it in neither direction, patchkit says applies", ref.Name, i+1)
			}
		}
		r.Git("worktree", "remove", "--force", wt)
	}
}
