package upstream

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// TestCommitGraph: a fetch leaves a split commit-graph that git verifies,
// and a fetch of one commit adds a layer of one commit on top; the next Open
// removes the graph when a layer has a flipped byte, is missing, or the
// chain lists its layers out of order (git would not notice a flipped byte
// and could take wrong parents for the history); git lists the same history
// with the graph and after the damaged one is gone, and the next fetch
// writes it whole again. A single-file graph (a cache from before split
// graphs) is checked the same way, and a fetch turns it into a chain.
func TestCommitGraph(t *testing.T) {
	f := newFixture(t)
	moveUpstream(t, f, 3)
	dir := t.TempDir()
	c := open(t, dir, f.repo.URL())
	path := c.Path()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"--git-dir", path}, args...)...)
		cmd.Env = GitEnv()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	list := func() string { return git("rev-list", "--topo-order", "--parents", "--all") }
	n := 0
	// release commits one file on main and tags it.
	release := func() {
		t.Helper()
		n++
		f.repo.Write(fmt.Sprintf("graph/%d.txt", n), fmt.Sprintf("release %d\n", n))
		f.repo.Release(fmt.Sprintf("graph %d", n), fmt.Sprintf("v3.%d.0", n))
	}
	verified := func(when string) {
		t.Helper()
		if !hasCommitGraph(path) {
			t.Fatalf("no commit-graph %s", when)
		}
		git("commit-graph", "verify")
	}
	// reopen closes c and opens the cache again (Open runs the check).
	reopen := func(opts ...Option) {
		t.Helper()
		c.Close()
		c = open(t, dir, f.repo.URL(), opts...)
	}
	fetch := func() {
		t.Helper()
		if err := c.Fetch(context.Background()); err != nil {
			t.Fatalf("Fetch() = %v", err)
		}
	}
	verified("after the first fetch")
	first := chainLayers(t, path)
	if len(first) != 1 {
		t.Fatalf("layers after the first fetch = %v, want one", first)
	}
	// One commit more: a layer of that one commit on the first.
	release()
	fetch()
	verified("after a fetch of one commit")
	layers := chainLayers(t, path)
	if len(layers) != 2 || layers[0] != first[0] {
		t.Fatalf("layers after a fetch of one commit = %v, want %s and a new one", layers, first[0])
	}
	if n := graphCommits(t, filepath.Join(graphDir(path), "graph-"+layers[1]+".graph")); n != 1 {
		t.Errorf("the new layer holds %d commits, want 1", n)
	}
	withGraph := list()
	reopen(WithOffline(true))
	if got := chainLayers(t, path); strings.Join(got, " ") != strings.Join(layers, " ") {
		t.Fatalf("Open changed an intact graph: %v, was %v", got, layers)
	}

	damages := []struct {
		name   string
		damage func(layers []string)
	}{
		{"a byte flipped in the top layer", func(layers []string) {
			flipMiddle(t, filepath.Join(graphDir(path), "graph-"+layers[len(layers)-1]+".graph"))
		}},
		{"a byte flipped in the base layer", func(layers []string) {
			flipMiddle(t, filepath.Join(graphDir(path), "graph-"+layers[0]+".graph"))
		}},
		{"a layer missing", func(layers []string) {
			os.Remove(filepath.Join(graphDir(path), "graph-"+layers[0]+".graph"))
		}},
		{"the layers out of order", func(layers []string) {
			writeFile(t, filepath.Join(graphDir(path), "commit-graph-chain"), layers[1]+"\n"+layers[0]+"\n")
		}},
	}
	for i, d := range damages {
		layers := chainLayers(t, path)
		if len(layers) < 2 {
			t.Fatalf("%s: layers %v, want two", d.name, layers)
		}
		d.damage(layers)
		reopen(WithOffline(true))
		if hasCommitGraph(path) {
			t.Errorf("%s: Open kept the commit-graph", d.name)
		}
		if got := list(); got != withGraph {
			t.Errorf("%s: git rev-list without the graph = %q, with it %q", d.name, got, withGraph)
		}
		// The next fetch writes it whole, and the one after adds a layer.
		reopen()
		release()
		fetch()
		verified("after a fetch into a cache without one (" + d.name + ")")
		if i < len(damages)-1 {
			release()
			fetch()
			verified("after a second fetch")
		}
		withGraph = list()
	}

	// A single-file graph from an older patchkit: checked, and a fetch
	// turns it into a chain.
	removeSplitGraph(path)
	git("commit-graph", "write", "--reachable")
	flipMiddle(t, graphFile(path))
	reopen(WithOffline(true))
	if hasCommitGraph(path) {
		t.Errorf("Open kept a single-file commit-graph whose checksum fails")
	}
	git("commit-graph", "write", "--reachable")
	reopen()
	if _, err := os.Stat(graphFile(path)); err != nil {
		t.Fatalf("Open removed an intact single-file graph: %v", err)
	}
	release()
	fetch()
	verified("after a fetch onto a single-file graph")
	if got := chainLayers(t, path); len(got) == 0 {
		t.Errorf("no chain after a fetch onto a single-file graph")
	}
	history := []string{"rev-list", "--topo-order", "--parents", "--tags", "refs/heads/main"}
	if got, want := git(history...), gitOut(t, f.repo.Dir, history...); got != want {
		t.Errorf("git rev-list on the cache = %q, on the upstream %q", got, want)
	}
	fsck(t, c)
}

// chainLayers lists the layers of the split commit-graph of repo, base first.
func chainLayers(t *testing.T, repo string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(graphDir(repo), "commit-graph-chain"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(data))
}

// graphCommits is the number of commits a commit-graph file holds: the last
// entry of its OIDF chunk (256 cumulative counts).
func graphCommits(t *testing.T, p string) int {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < int(data[6]); i++ {
		at := 8 + 12*i
		if string(data[at:at+4]) == "OIDF" {
			o := 0
			for _, b := range data[at+4 : at+12] {
				o = o<<8 | int(b)
			}
			last := data[o+255*4 : o+256*4]
			return int(last[0])<<24 | int(last[1])<<16 | int(last[2])<<8 | int(last[3])
		}
	}
	t.Fatalf("%s has no OIDF chunk", p)
	return 0
}

// flipMiddle flips a bit of the byte in the middle of the file at p
// (gittest.FlipBit).
func flipMiddle(t *testing.T, p string) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	gittest.FlipBit(t, p, fi.Size()/2)
}

// gitOut runs git in dir and returns its output.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = GitEnv()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}
