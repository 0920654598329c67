package status

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/spec"
)

func TestUnitHistory(t *testing.T) {
	r := gittest.New(t)
	sp := &spec.Spec{File: "images/u/patchkit.yaml", Patches: "patches/u"}
	pin := func(ref string) { r.Write(sp.File, "upstream:\n  url: x\n  ref: "+ref+"\n") }
	var c []string
	pin("v1")
	r.Write("patches/u/0001-a.diff", "a")
	r.Write("patches/u/0002-b.patch", "b")
	r.Write("patches/u/README.md", "not a patch")
	c = append(c, r.Commit("c0: two patches at v1"))
	pin("v2")
	r.Write("patches/u/0003-c.diff", "c") // added with the re-pin: survived none
	c = append(c, r.Commit("c1: re-pin to v2, add 0003"))
	r.Remove("patches/u/0002-b.patch")
	r.Write("patches/u/tests/0009-x.diff", "in a subdirectory: no series file")
	r.Write("other/0005-z.diff", "another directory")
	c = append(c, r.Commit("c2: drop 0002"))
	pin("v3")
	c = append(c, r.Commit("c3: re-pin to v3"))
	r.Write("patches/u/0002-b.patch", "b again")
	c = append(c, r.Commit("c4: 0002 back"))
	r.Write(sp.File, "upstream:\n  url: y\n  ref: v3\n")
	c = append(c, r.Commit("c5: the url moves, the pin stays"))

	h, err := unitHistory(context.Background(), r.Dir, sp)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range h.points {
		got = append(got, fmt.Sprintf("%s=%d", p.Commit[:7], p.Count))
	}
	want := []string{c[0][:7] + "=2", c[1][:7] + "=3", c[2][:7] + "=2", c[3][:7] + "=2", c[4][:7] + "=3", c[5][:7] + "=3"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("history = %v, want %v", got, want)
	}
	for name, w := range map[string]struct {
		commit string
		pins   int
	}{
		"0001-a.diff":  {c[0], 2},
		"0002-b.patch": {c[4], 0}, // its last addition
		"0003-c.diff":  {c[1], 1},
	} {
		a, ok := h.added[name]
		if !ok || a.commit != w.commit || a.pins != w.pins {
			t.Errorf("added[%s] = %+v (%v), want commit %s, %d pins", name, a, ok, w.commit[:7], w.pins)
		}
	}
	if len(h.added) != 3 {
		t.Errorf("added has %d files, want 3: %v", len(h.added), h.added)
	}
	if want := time.Unix(1700000000+5*60, 0).UTC(); !h.added["0002-b.patch"].time.Equal(want) {
		t.Errorf("0002 added at %v, want %v (c4's commit time)", h.added["0002-b.patch"].time, want)
	}
}

// A root that is no git repository, or one with no commit yet, has no
// history and no ages, and is no error.
func TestUnitHistoryNoGit(t *testing.T) {
	sp := &spec.Spec{File: "images/u/patchkit.yaml", Patches: "patches/u"}
	plain := t.TempDir()
	if err := os.MkdirAll(filepath.Join(plain, "patches/u"), 0o755); err != nil {
		t.Fatal(err)
	}
	empty := gittest.New(t)
	for _, root := range []string{plain, empty.Dir} {
		h, err := unitHistory(context.Background(), root, sp)
		if err != nil || len(h.points) != 0 || len(h.added) != 0 {
			t.Errorf("unitHistory(%s) = %v, %v, want nothing and no error", root, h, err)
		}
	}
}

func TestTotal(t *testing.T) {
	at := func(m int) time.Time { return time.Unix(int64(m)*60, 0) }
	units := []Unit{
		{History: []Point{{Time: at(1), Commit: "a", Count: 2}, {Time: at(3), Commit: "c", Count: 1}}},
		{History: []Point{{Time: at(2), Commit: "b", Count: 4}, {Time: at(3), Commit: "c", Count: 5}}},
	}
	var got []string
	for _, p := range Total(units) {
		got = append(got, fmt.Sprintf("%s=%d", p.Commit, p.Count))
	}
	if want := "[a=2 b=6 c=6]"; fmt.Sprint(got) != want {
		t.Errorf("Total() = %v, want %s", got, want)
	}
}
