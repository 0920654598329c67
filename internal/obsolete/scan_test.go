package obsolete

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/tree"
)

// TestCheckCommitPin: with a commit id as pin (on release-1.15, after
// v1.15.2), the scan covers the tags that contain the pin (v1.15.3) and the
// higher versions on other branches (v1.16.0 on main); the older tags of
// release-1.14, and those the pin contains, are skipped, each with why.
func TestCheckCommitPin(t *testing.T) {
	r := gittest.New(t)
	base := numbered("p", 10)
	r.Write("p.txt", base)
	r.Release("initial", "v1.14.0")
	r.Git("checkout", "-q", "-b", "release-1.14")
	for _, v := range []string{"v1.14.1", "v1.14.2", "v1.14.3"} {
		r.Write("rel.txt", v+"\n")
		r.Release(v, v)
	}
	r.Git("checkout", "-q", "main")
	r.Write("n.txt", "1.15\n")
	r.Release("start 1.15", "v1.15.0")
	r.Git("checkout", "-q", "-b", "release-1.15")
	for _, v := range []string{"v1.15.1", "v1.15.2"} {
		r.Write("rel.txt", v+"\n")
		r.Release(v, v)
	}
	r.Write("q.txt", "q\n")
	pin := r.Commit("the pinned commit")
	fixed := replaceLine(t, base, "p2", "p2 fixed")
	patch := makePatch(r, pin, "release-1.15", "fix p2", map[string]string{"p.txt": fixed})
	r.Write("p.txt", fixed)
	land := r.Release("fix p2", "v1.15.3")
	r.Git("checkout", "-q", "main")
	r.Write("n.txt", "1.16\n")
	r.Release("start 1.16", "v1.16.0")
	r.Tag("nightly") // not a version, committed after the pin, on another branch
	r.Git("checkout", "-q", "release-1.14")
	r.Tag("zz-before") // not a version, committed before the pin, on another branch
	r.Git("checkout", "-q", "main")
	// Tags that name no commit (as linux's v2.6.11 names a tree): not
	// scanned, and said so.
	r.Git("tag", "v1.17.0-tree", strings.TrimSpace(r.Git("rev-parse", "HEAD^{tree}")))
	r.Git("tag", "-a", "-m", "a blob", "v1.17.1", strings.TrimSpace(r.Git("rev-parse", "HEAD:n.txt")))
	r.Git("tag", "v1.14.9-tree", strings.TrimSpace(r.Git("rev-parse", "HEAD^{tree}")))

	rep := scan{pin: pin, releases: "*", patches: []string{patch}}.run(t, r.URL())
	if got, want := refNames(rep), "v1.15.3 v1.16.0 nightly*"; got != want {
		t.Errorf("refs = %q, want %q", got, want)
	}
	var skipped []string
	for _, s := range rep.Skipped {
		skipped = append(skipped, s.Ref+": "+s.Reason)
	}
	older := "older than v1.15.2, the latest release the pin contains, and does not contain the pin"
	want := []string{
		"v1.14.0: the pin contains it",
		"v1.14.1: " + older, "v1.14.2: " + older, "v1.14.3: " + older, "v1.14.9-tree: names a tree or a blob, not a commit",
		"v1.15.0: the pin contains it", "v1.15.1: the pin contains it", "v1.15.2: the pin contains it",
		"v1.17.0-tree: names a tree or a blob, not a commit", "v1.17.1: names a tree or a blob, not a commit",
		"zz-before: committed before the pin, and does not contain it",
	}
	if strings.Join(skipped, "\n") != strings.Join(want, "\n") {
		t.Errorf("skipped =\n%s\nwant\n%s", strings.Join(skipped, "\n"), strings.Join(want, "\n"))
	}
	if got, want := statuses(rep, 0), "v1.15.3=present v1.16.0=applies nightly=applies"; got != want {
		t.Errorf("statuses = %q, want %q", got, want)
	}
	if p := rep.Patches[0]; p.ObsoletedBy != "v1.15.3" || p.Commit != land {
		t.Errorf("obsoletedBy %q %q, want v1.15.3 %s", p.ObsoletedBy, p.Commit, land)
	}
	// Every scanned tag contains the pin or is a higher version than its base.
	for _, ref := range rep.Refs {
		_, _, err := r.GitIn(nil, "merge-base", "--is-ancestor", pin, ref.Commit)
		if err != nil && ref.Name != "v1.16.0" && ref.Name != "nightly" {
			t.Errorf("%s is scanned but does not contain the pin", ref.Name)
		}
	}
	for _, s := range rep.Skipped {
		if _, _, err := r.GitIn(nil, "merge-base", "--is-ancestor", pin, s.Ref); err == nil {
			t.Errorf("%s is skipped but contains the pin", s.Ref)
		}
	}
}

// TestCheckPrerelease: the change lands in v1.1.0-rc.1; obsoletedBy names
// the first final release, v1.1.0, and the prerelease beside it. A change
// only prereleases carry has no obsoletedBy yet.
func TestCheckPrerelease(t *testing.T) {
	r := gittest.New(t)
	base := numbered("r", 10)
	r.Write("a.txt", base)
	r.Write("b.txt", base)
	r.Release("initial", "v1.0.0")
	fixed := replaceLine(t, base, "r3", "r3 fixed")
	pa := makePatch(r, "v1.0.0", "main", "fix a", map[string]string{"a.txt": fixed})
	pb := makePatch(r, "v1.0.0", "main", "fix b", map[string]string{"b.txt": fixed})
	r.Write("a.txt", fixed)
	landA := r.Release("fix a", "v1.1.0-rc.1")
	r.Write("x.txt", "x\n")
	r.Release("more", "v1.1.0-rc.2")
	r.Tag("v1.1.0")
	r.Write("b.txt", fixed)
	r.Release("fix b", "v1.2.0-rc.1")

	rep := scan{pin: "v1.0.0", releases: "v*", patches: []string{pa, pb}}.run(t, r.URL())
	if got, want := refNames(rep), "v1.1.0-rc.1 v1.1.0-rc.2 v1.1.0 v1.2.0-rc.1"; got != want {
		t.Fatalf("refs = %q, want %q", got, want)
	}
	a, b := rep.Patches[0], rep.Patches[1]
	if a.ObsoletedBy != "v1.1.0" || a.ObsoletedByPrerelease != "v1.1.0-rc.1" || a.Commit != landA {
		t.Errorf("patch a: obsoletedBy %q prerelease %q commit %q; want v1.1.0, v1.1.0-rc.1, %s", a.ObsoletedBy, a.ObsoletedByPrerelease, a.Commit, landA)
	}
	if b.ObsoletedBy != "" || b.ObsoletedByPrerelease != "v1.2.0-rc.1" {
		t.Errorf("patch b: obsoletedBy %q prerelease %q; want none and v1.2.0-rc.1", b.ObsoletedBy, b.ObsoletedByPrerelease)
	}
}

// TestCheckSupersededThreshold: upstream has some of the patch's changed
// lines, interleaved with its own so that no hunk is there whole. At least
// two thirds (SupersededShare) is superseded: 20 of 30 and 21 of 30 are,
// 19 of 30 is not; a removed line that is gone counts (2 of 3), one that is
// still there does not (1 of 3).
func TestCheckSupersededThreshold(t *testing.T) {
	r := gittest.New(t)
	base := numbered("base", 10)
	shares := []int{19, 20, 21}
	for _, n := range shares {
		r.Write(fmt.Sprintf("t%d.txt", n), base)
	}
	mixBase := numbered("x", 10)
	r.Write("mixgone.txt", mixBase)
	r.Write("mixkept.txt", mixBase)
	r.Release("initial", "v1.0.0")

	var ours strings.Builder
	for k := 1; k <= 30; k++ {
		fmt.Fprintf(&ours, "new%d\n", k)
	}
	var patches []string
	for _, n := range shares {
		f := fmt.Sprintf("t%d.txt", n)
		patches = append(patches, makePatch(r, "v1.0.0", "main", "add 30 lines to "+f,
			map[string]string{f: strings.Replace(base, "base5\n", "base5\n"+ours.String(), 1)}))
	}
	mixOurs := replaceLine(t, mixBase, "x5", "new-a\nnew-b")
	for _, f := range []string{"mixgone.txt", "mixkept.txt"} {
		patches = append(patches, makePatch(r, "v1.0.0", "main", "rework x5 in "+f, map[string]string{f: mixOurs}))
	}

	for _, n := range shares {
		var up strings.Builder
		for k := 1; k <= n; k++ {
			fmt.Fprintf(&up, "upstream%d\nnew%d\n", k, k)
		}
		content := strings.Replace(base, "base5\n", "base5 upstream\n"+up.String(), 1)
		r.Write(fmt.Sprintf("t%d.txt", n), replaceLine(t, content, "base6", "base6 upstream"))
	}
	r.Write("mixgone.txt", replaceLine(t, mixBase, "x5", "new-a\nupstream"))
	r.Write("mixkept.txt", replaceLine(t, mixBase, "x5", "new-a\nupstream")+"x5\n")
	land := r.Release("upstream's own versions", "v1.1.0")

	rep := scan{pin: "v1.0.0", releases: "v*", patches: patches}.run(t, r.URL())
	tests := []struct {
		name           string
		patch          int
		status         string
		present, total int
	}{
		{"19 of 30, just below", 0, StatusConflict, 19, 30},
		{"20 of 30, exactly two thirds", 1, StatusSuperseded, 20, 30},
		{"21 of 30, just above", 2, StatusSuperseded, 21, 30},
		{"removed line gone: 2 of 3", 3, StatusSuperseded, 2, 3},
		{"removed line kept: 1 of 3", 4, StatusConflict, 1, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := result(t, rep, tt.patch, "v1.1.0")
			if res.Status != tt.status {
				t.Errorf("status = %s via %s, want %s (%s)", res.Status, res.Via, tt.status, res.Evidence)
			}
			if lm := res.AddedLines; lm == nil || lm.Present != tt.present || lm.Total != tt.total {
				t.Errorf("lines = %+v, want %d of %d", lm, tt.present, tt.total)
			}
			if tt.status == StatusSuperseded && (res.Via != ViaAddedLines || res.Commit != land) {
				t.Errorf("superseded via %s commit %s, want via %s commit %s", res.Via, res.Commit, ViaAddedLines, land)
			}
		})
	}
}

// TestCheckMemoKeyHasPatchIDs: two releases whose files are byte-identical,
// one reaching a commit with the patch's patch-id and one not (upstream
// landed it together with docs). The verdict memo must not hand one's
// verdict to the other.
func TestCheckMemoKeyHasPatchIDs(t *testing.T) {
	r, base := pinned(t, "x.txt", "line", 12)
	fixed := replaceLine(t, base, "line6", "line6 fixed")
	patch := makePatch(r, "v1.0.0", "main", "fix line6", map[string]string{"x.txt": fixed})
	reworded := replaceLine(t, replaceLine(t, fixed, "line5", "line5 reworded"), "line7", "line7 reworded")

	r.Git("checkout", "-q", "-b", "a", "v1.0.0")
	r.Write("x.txt", fixed)
	r.Write("docs.txt", "fixed\n")
	landA := r.Commit("fix line6, with docs")
	r.Write("x.txt", reworded)
	r.Release("reword the neighbours", "v1.1.0")

	r.Git("checkout", "-q", "-b", "b", "v1.0.0")
	r.Write("x.txt", fixed)
	landB := r.Commit("fix line6")
	r.Write("x.txt", reworded)
	r.Release("reword the neighbours", "v1.2.0")
	r.Git("checkout", "-q", "main")

	for _, order := range [][]string{{"v1.1.0", "v1.2.0"}, {"v1.2.0", "v1.1.0"}} {
		rep := scan{pin: "v1.0.0", refs: order, patches: []string{patch}}.run(t, r.URL())
		a, b := result(t, rep, 0, "v1.1.0"), result(t, rep, 0, "v1.2.0")
		if a.Status != StatusPresent || a.Via != ViaCarried || a.Commit != landA {
			t.Errorf("order %v: v1.1.0 %s via %s commit %s, want present via %s commit %s", order, a.Status, a.Via, a.Commit, ViaCarried, landA)
		}
		if b.Status != StatusPresent || b.Via != ViaPatchID || b.Commit != landB {
			t.Errorf("order %v: v1.2.0 %s via %s commit %s, want present via %s commit %s", order, b.Status, b.Via, b.Commit, ViaPatchID, landB)
		}
	}
}

var errRead = errors.New("disk on fire")

// failingSource fails the n-th Read (1-based) and counts them.
type failingSource struct {
	tree.Map
	n, reads int
}

func (s *failingSource) Read(p string) (*tree.File, bool, error) {
	s.reads++
	if s.reads == s.n {
		return nil, false, errRead
	}
	return s.Map.Read(p)
}

// TestByHunksReadError: a read error at any point of testing a partial
// patch hunk by hunk, materializing its applying hunks included, is
// reported as the read error.
func TestByHunksReadError(t *testing.T) {
	base := numbered("w", 30)
	p := parsePatches(t, []string{`--- a/w.txt
+++ b/w.txt
@@ -2,3 +2,3 @@
 w2
-w3
+w3 fixed
 w4
@@ -26,3 +26,3 @@
 w26
-w27
+w27 fixed
 w28
`})[0]
	files := func() tree.Map {
		return tree.Map{"w.txt": {Mode: tree.Regular, Data: []byte(replaceLine(t, base, "w3", "w3 fixed"))}}
	}
	c := &checker{patches: []*series.Patch{p}, units: map[int][]unit{}, pin: tree.Map{"w.txt": {Mode: tree.Regular, Data: []byte(base)}}, pinText: map[string]*lines{}}
	count := &failingSource{Map: files()}
	_, kind, _, _, err := c.byHunks(apply.New(count, noWS), 0, nil)
	if err != nil || kind != StatusPartial {
		t.Fatalf("byHunks() = %q, %v; want partial", kind, err)
	}
	for n := 1; n <= count.reads; n++ {
		_, _, _, _, err := c.byHunks(apply.New(&failingSource{Map: files(), n: n}, noWS), 0, nil)
		if !errors.Is(err, errRead) || strings.Contains(err.Error(), "applied on its own") {
			t.Errorf("read %d of %d fails: byHunks() = %v, want the read error", n, count.reads, err)
		}
	}
}
