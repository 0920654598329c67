package obsolete

import (
	"context"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// TestTurnedOn checks history.turnedOn against `git log --no-merges -S`:
// the newest non-merge commit of pin..tip that changed how often x.txt
// says "on" names the commit after which it does (a merge's own
// resolution, which git log --no-merges never names, names none).
func TestTurnedOn(t *testing.T) {
	tests := []struct {
		name string
		// build makes the history after the pin (x.txt "off") on main,
		// and returns the name of the commit turnedOn must find ("" for
		// none).
		build func(r *gittest.Repo, set func(v, msg string) string) string
	}{
		{name: "linear", build: func(r *gittest.Repo, set func(v, msg string) string) string {
			set("off\nmore\n", "a")
			on := set("on\n", "b")
			r.Write("y.txt", "y\n")
			r.Commit("c")
			return on
		}},
		{name: "on, off, on again", build: func(r *gittest.Repo, set func(v, msg string) string) string {
			set("on\n", "a")
			set("off\n", "b")
			return set("on\n", "c")
		}},
		{name: "from a merged branch", build: func(r *gittest.Repo, set func(v, msg string) string) string {
			r.Git("checkout", "-q", "-b", "side")
			on := set("on\n", "side: on")
			r.Git("checkout", "-q", "main")
			r.Write("y.txt", "y\n")
			r.Commit("main: other")
			r.Git("merge", "-q", "--no-ff", "-m", "merge side", "side")
			return on
		}},
		{name: "from a branch merged into the merged branch", build: func(r *gittest.Repo, set func(v, msg string) string) string {
			r.Git("checkout", "-q", "-b", "feature")
			on := set("on\n", "feature: on")
			r.Git("checkout", "-q", "main")
			r.Git("checkout", "-q", "-b", "side")
			set("off\nside\n", "side: off")
			r.GitIn(nil, "merge", "-q", "--no-ff", "--no-commit", "feature") // conflicts: resolved below
			set("on\nside\n", "merge feature into side")
			r.Git("checkout", "-q", "main")
			set("off\nmain\n", "main: off")
			r.GitIn(nil, "merge", "-q", "--no-ff", "--no-commit", "side") // conflicts: resolved below
			set("on\nside\n", "merge side")
			return on
		}},
		{name: "a merge's own resolution", build: func(r *gittest.Repo, set func(v, msg string) string) string {
			r.Git("checkout", "-q", "-b", "side")
			set("off\nside\n", "side: off")
			r.Git("checkout", "-q", "main")
			set("off\nmain\n", "main: off")
			r.GitIn(nil, "merge", "-q", "--no-ff", "--no-commit", "side") // conflicts: resolved below
			set("on\n", "merge side, on")
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := gittest.New(t)
			r.Write("x.txt", "off\n")
			r.Release("initial", "v1.0.0")
			set := func(v, msg string) string {
				r.Write("x.txt", v)
				return r.Commit(msg)
			}
			want := tt.build(r, set)
			tip := r.Head()
			oracle := ""
			if out := r.Git("log", "--no-merges", "--format=%H", "-Son", "v1.0.0.."+tip, "--", "x.txt"); out != "" {
				oracle = strings.Fields(out)[0]
				if want != "" && r.Git("show", "-s", "--format=%s", oracle) != r.Git("show", "-s", "--format=%s", want) {
					t.Fatalf("git log --no-merges -S = %s, the fixture's commit is %s", oracle, want)
				}
			}
			if want == "" {
				oracle = ""
			}
			c := openCache(t, r.URL())
			ctx := context.Background()
			pin, err := c.Resolve("v1.0.0")
			if err != nil {
				t.Fatal(err)
			}
			g := gitRunner{bin: "git", gitDir: c.Path(), cache: c}
			h, err := loadRange(ctx, g, pin, []string{tip})
			if err != nil {
				t.Fatalf("loadRange() = %v", err)
			}
			holds := func(i int) (bool, error) {
				src, err := c.Source(h.commits[i].id)
				if err != nil {
					return false, err
				}
				f, ok, err := src.Read("x.txt")
				return ok && strings.HasPrefix(string(f.Data), "on\n"), err
			}
			got := ""
			i, err := h.turnedOn(tip, false, holds, nil)
			if err != nil {
				t.Fatalf("turnedOn() = %v", err)
			}
			if i >= 0 {
				got = h.commits[i].id
			}
			if got != oracle {
				t.Errorf("turnedOn() = %q, want %q (git log --no-merges -S)", got, oracle)
			}
		})
	}
}

// TestCheckIntroducerAcrossMerge: upstream lands the patch's change on a
// branch (with another edit, so under another patch-id), merges main into
// that branch (main edited the file elsewhere) and releases from the
// branch. The patch reverse-applies at the release; the commit that brought
// it is the branch's, as git log --no-merges -S names it. The walk over
// every commit in topological order saw main's commit (without the change)
// after the branch's and named none, and the report then named the
// release's own commit, the merge.
func TestCheckIntroducerAcrossMerge(t *testing.T) {
	r, base := pinned(t, "f.txt", "l", 30)
	fixed := replaceLine(t, base, "l10", "l10 fixed")
	patch := makePatch(r, "v1.0.0", "main", "fix l10", map[string]string{"f.txt": fixed})
	r.Git("checkout", "-q", "-b", "side", "main")
	r.Write("f.txt", replaceLine(t, fixed, "l25", "l25 too"))
	landed := r.Commit("side: fix l10, and l25")
	r.Git("checkout", "-q", "main")
	r.Write("f.txt", replaceLine(t, base, "l20", "l20 main"))
	r.Commit("main: l20")
	r.Git("checkout", "-q", "side")
	r.Git("merge", "-q", "--no-ff", "-m", "merge main into side", "main")
	merge := r.Head()
	r.Tag("v1.1.0")
	if got := r.Git("log", "--no-merges", "--format=%H", "-Sl10 fixed", "v1.0.0..v1.1.0", "--", "f.txt"); got != landed {
		t.Fatalf("git log --no-merges -S = %q, want %s", got, landed)
	}
	rep := scan{pin: "v1.0.0", releases: "v*", patches: []string{patch}}.run(t, r.URL())
	res := result(t, rep, 0, "v1.1.0")
	if res.Status != StatusPresent || res.Via != ViaReverseApply || res.Commit != landed {
		t.Errorf("v1.1.0: %s via %s commit %s (%s), want present via reverse-apply by %s", res.Status, res.Via, Short(res.Commit), res.Evidence, Short(landed))
	}
	if p := rep.Patches[0]; p.Commit != landed {
		t.Errorf("obsoleted by %s (%s), want %s, not the merge %s", p.ObsoletedBy, Short(p.Commit), Short(landed), Short(merge))
	}
	oracle(t, r, rep, []string{patch})
}
