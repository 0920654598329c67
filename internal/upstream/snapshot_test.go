package upstream

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/tree"
)

func TestSnapshotRead(t *testing.T) {
	f := newFixture(t)
	c := open(t, t.TempDir(), f.repo.URL())
	src, err := c.Source(f.c3)
	if err != nil {
		t.Fatalf("Source() = %v", err)
	}
	if src.Commit() != f.c3 {
		t.Errorf("Commit() = %s, want %s", src.Commit(), f.c3)
	}
	tests := []struct {
		name   string
		path   string
		wantOK bool
		mode   tree.Mode
		data   string
	}{
		{name: "top-level file", path: "README.md", wantOK: true, mode: tree.Regular, data: "hello again\n"},
		{name: "nested file", path: "dir/nested/file.txt", wantOK: true, mode: tree.Regular, data: "nested\n"},
		{name: "deeply nested", path: "dir/nested/deeper/leaf.txt", wantOK: true, mode: tree.Regular, data: "leaf\n"},
		{name: "executable", path: "bin/run.sh", wantOK: true, mode: tree.Executable, data: "#!/bin/sh\necho run\n"},
		{name: "nested executable", path: "dir/nested/tool", wantOK: true, mode: tree.Executable, data: "#!/bin/sh\n"},
		{name: "symlink to file", path: "link", wantOK: true, mode: tree.Symlink, data: "README.md"},
		{name: "symlink to dir", path: "dir/to-nested", wantOK: true, mode: tree.Symlink, data: "nested"},
		{name: "dangling symlink", path: "dangling-link", wantOK: true, mode: tree.Symlink, data: "does/not/exist"},
		{name: "submodule", path: "vendor/sub", wantOK: true, mode: tree.Gitlink, data: f.subCommit},
		{name: "missing file", path: "nope.txt"},
		{name: "missing nested", path: "dir/nested/nope"},
		{name: "missing dir", path: "nodir/file"},
		{name: "deleted in this commit", path: "docs/guide.md"},
		{name: "directory", path: "dir/nested"},
		{name: "through a file", path: "README.md/x"},
		{name: "through a symlink", path: "dir/to-nested/file.txt"},
		{name: "through a submodule", path: "vendor/sub/x"},
		{name: "unclean path", path: "dir/../README.md"},
		{name: "absolute path", path: "/README.md"},
		{name: "empty path", path: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := src.Read(tt.path)
			if err != nil {
				t.Fatalf("Read(%q) = %v", tt.path, err)
			}
			if ok != tt.wantOK {
				t.Fatalf("Read(%q) ok = %v, want %v", tt.path, ok, tt.wantOK)
			}
			if !ok {
				return
			}
			if got.Mode != tt.mode || string(got.Data) != tt.data {
				t.Errorf("Read(%q) = %s %q, want %s %q", tt.path, got.Mode, got.Data, tt.mode, tt.data)
			}
		})
	}
}

// TestSnapshotEntry checks Entry against git ls-tree, at two commits of
// one cache: the second reads the trees and blobs the first left in the
// cache's memo where they are the same objects.
func TestSnapshotEntry(t *testing.T) {
	f := newFixture(t)
	c := open(t, t.TempDir(), f.repo.URL())
	paths := []string{"README.md", "dir", "dir/nested", "dir/nested/file.txt", "dir/nested/deeper/leaf.txt",
		"bin/run.sh", "link", "vendor/sub", "docs/guide.md", "nope.txt", "nodir/file", "README.md/x",
		"dir/to-nested/file.txt", "vendor/sub/x", "dir/../README.md", ""}
	for _, commit := range []string{f.c3, f.c1, f.c3} {
		src, err := c.Source(commit)
		if err != nil {
			t.Fatalf("Source(%s) = %v", commit, err)
		}
		for _, p := range paths {
			var want string
			if p != "" && tree.Clean(p) == nil {
				want = strings.TrimSpace(f.repo.Git("ls-tree", "--full-tree", commit, "--", p))
			}
			e, ok, err := src.Entry(p)
			if err != nil {
				t.Fatalf("Entry(%q) at %s = %v", p, commit, err)
			}
			var got string
			if ok {
				got, err = lsTreeLine(e, p)
				if err != nil {
					t.Fatal(err)
				}
			}
			if got != want {
				t.Errorf("Entry(%q) at %s = %q (ok %v), git ls-tree says %q", p, commit, got, ok, want)
			}
			if r, rok, err := src.Read(p); err == nil && rok && ok && r.Mode != tree.Gitlink {
				// Repo.Git trims the output's last line break
				if blob := f.repo.Git("cat-file", "blob", e.Hash.String()); strings.TrimSuffix(string(r.Data), "\n") != blob {
					t.Errorf("Read(%q) at %s = %q, git cat-file says %q", p, commit, r.Data, blob)
				}
			}
		}
	}
}

// lsTreeLine renders an entry as git ls-tree prints it.
func lsTreeLine(e object.TreeEntry, p string) (string, error) {
	kind := map[string]string{"0040000": "tree", "0160000": "commit"}[e.Mode.String()]
	if kind == "" {
		kind = "blob"
	}
	mode := strings.TrimPrefix(e.Mode.String(), "0")
	if len(mode) < 6 {
		mode = "0" + mode
	}
	return fmt.Sprintf("%s %s %s\t%s", mode, kind, e.Hash, p), nil
}

func TestSnapshotIsDir(t *testing.T) {
	f := newFixture(t)
	c := open(t, t.TempDir(), f.repo.URL())
	src, err := c.Source("v1.2.0")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want bool
	}{
		{"", true},
		{".", true},
		{"dir", true},
		{"dir/nested", true},
		{"dir/nested/deeper", true},
		{"README.md", false},
		{"dir/to-nested", false}, // a symlink, not a directory
		{"vendor/sub", false},    // a submodule
		{"nope", false},
		{"dir/nope", false},
		{"README.md/x", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.path), func(t *testing.T) {
			got, err := src.IsDir(tt.path)
			if err != nil || got != tt.want {
				t.Errorf("IsDir(%q) = %v, %v; want %v", tt.path, got, err, tt.want)
			}
		})
	}
}

func TestSnapshotWalk(t *testing.T) {
	f := newFixture(t)
	c := open(t, t.TempDir(), f.repo.URL())
	for _, commit := range []string{f.c1, f.c2, f.c3} {
		t.Run(commit[:8], func(t *testing.T) {
			src, err := c.Source(commit)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			err = src.Walk(func(p string, file *tree.File) error {
				// Read agrees with Walk, and may be called from fn.
				again, ok, err := src.Read(p)
				if err != nil || !ok || again.Mode != file.Mode || string(again.Data) != string(file.Data) {
					t.Errorf("Read(%q) = %v, %v, %v; want what Walk gave", p, again, ok, err)
				}
				got = append(got, file.Mode.String()+" "+p)
				return nil
			})
			if err != nil {
				t.Fatalf("Walk() = %v", err)
			}
			sort.Strings(got)
			var want []string
			for _, line := range strings.Split(f.repo.Git("ls-tree", "-r", commit), "\n") {
				meta, p, _ := strings.Cut(line, "\t")
				want = append(want, strings.Fields(meta)[0]+" "+p)
			}
			sort.Strings(want)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("Walk() =\n%s\nwant (git ls-tree -r)\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
	t.Run("error stops the walk", func(t *testing.T) {
		src, _ := c.Source(f.c3)
		boom := errors.New("boom")
		n := 0
		err := src.Walk(func(string, *tree.File) error { n++; return boom })
		if !errors.Is(err, boom) || n != 1 {
			t.Errorf("Walk() = %v after %d calls, want boom after 1", err, n)
		}
	})
}

func TestSnapshotConcurrentReads(t *testing.T) {
	f := newFixture(t)
	c := open(t, t.TempDir(), f.repo.URL())
	src, err := c.Source(f.c3)
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"README.md", "dir/nested/file.txt", "dir/nested/deeper/leaf.txt", "bin/run.sh", "link", "docs/other.md"}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 20 {
				p := paths[(i+j)%len(paths)]
				if _, ok, err := src.Read(p); err != nil || !ok {
					t.Errorf("Read(%q) = %v, %v", p, ok, err)
				}
				if _, err := c.Resolve("v1.0.0"); err != nil {
					t.Errorf("Resolve() = %v", err)
				}
			}
		}()
	}
	wg.Wait()
}

// describeDir lists a directory tree as git would check it out: every file
// with its exec bit and content, every symlink with its target, every directory.
func describeDir(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for rel, e := range gittest.Checkout(t, root) {
		switch {
		case e.Mode&fs.ModeSymlink != 0:
			out[rel] = "symlink -> " + string(e.Data)
		case e.Mode.IsDir():
			out[rel] = "dir"
		default:
			out[rel] = fmt.Sprintf("file exec=%v %q", e.Mode&0o111 != 0, e.Data)
		}
	}
	return out
}

func diffDescriptions(got, want map[string]string) []string {
	var diffs []string
	for k, w := range want {
		if g, ok := got[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("missing %s (%s)", k, w))
		} else if g != w {
			diffs = append(diffs, fmt.Sprintf("%s: got %s, want %s", k, g, w))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("extra %s (%s)", k, g))
		}
	}
	sort.Strings(diffs)
	return diffs
}

func TestMaterializeMatchesCheckout(t *testing.T) {
	f := newFixture(t)
	c := open(t, t.TempDir(), f.repo.URL())
	tests := []struct{ name, ref, commit string }{
		{name: "first", ref: f.c1, commit: f.c1},
		{name: "lightweight tag", ref: "v1.1.0-light", commit: f.c2},
		{name: "with submodule and deletions", ref: "v1.2.0", commit: f.c3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkout := filepath.Join(t.TempDir(), "checkout")
			f.repo.Git("worktree", "add", "-q", "--detach", checkout, tt.commit)
			defer f.repo.Git("worktree", "remove", "--force", checkout)

			out := filepath.Join(t.TempDir(), "out")
			if err := c.Materialize(context.Background(), tt.ref, out); err != nil {
				t.Fatalf("Materialize() = %v", err)
			}
			got, want := describeDir(t, out), describeDir(t, checkout)
			if len(want) < 5 {
				t.Fatalf("checkout has only %v", want)
			}
			if d := diffDescriptions(got, want); len(d) > 0 {
				t.Errorf("Materialize(%s) differs from git checkout:\n%s", tt.ref, strings.Join(d, "\n"))
			}
		})
	}
}

func TestMaterializeReplacesAtomically(t *testing.T) {
	f := newFixture(t)
	c := open(t, t.TempDir(), f.repo.URL())
	out := filepath.Join(t.TempDir(), "out")
	if err := c.Materialize(context.Background(), f.c2, out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "docs/guide.md")); err != nil {
		t.Fatalf("c2 tree lacks docs/guide.md: %v", err)
	}
	before := describeDir(t, out)

	tests := []struct {
		name    string
		ctx     func() context.Context
		ref     string
		wantErr bool
	}{
		{name: "canceled leaves the old tree", ctx: func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, ref: f.c3, wantErr: true},
		{name: "unknown ref leaves the old tree", ctx: context.Background, ref: "v0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Materialize(tt.ctx(), tt.ref, out)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Materialize() = %v, wantErr %v", err, tt.wantErr)
			}
			if d := diffDescriptions(describeDir(t, out), before); len(d) > 0 {
				t.Errorf("a failed Materialize changed the tree:\n%s", strings.Join(d, "\n"))
			}
		})
	}
	if err := c.Materialize(context.Background(), f.c3, out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "docs/guide.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Materialize over an old tree kept docs/guide.md (%v)", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 1 {
		t.Errorf("Materialize left temporary trees next to out: %v", entries)
	}
}

// history builds main: a - b - m(merge of a - x) - d, with tags.
func history(t *testing.T) (*gittest.Repo, map[string]string) {
	r := gittest.New(t)
	ids := map[string]string{}
	r.Write("f", "a")
	ids["a"] = r.Commit("a")
	r.Git("checkout", "-q", "-b", "side")
	r.Write("side", "x")
	ids["x"] = r.Commit("x")
	r.Git("checkout", "-q", "main")
	r.Write("f", "b")
	ids["b"] = r.Commit("b")
	r.Git("merge", "-q", "--no-ff", "--no-commit", "side")
	ids["m"] = r.Commit("m") // commits the merge, at its own time
	if p2 := r.Git("rev-parse", ids["m"]+"^2"); p2 != ids["x"] {
		t.Fatalf("merge second parent = %s, want %s", p2, ids["x"])
	}
	r.Write("f", "d")
	ids["d"] = r.Commit("d")
	r.Tag("v1")
	return r, ids
}

func TestLog(t *testing.T) {
	r, ids := history(t)
	c := open(t, t.TempDir(), r.URL())
	name := map[string]string{}
	for k, v := range ids {
		name[v] = k
	}
	tests := []struct {
		name    string
		from    string
		stop    func(string) bool
		stopAt  int // fn returns ErrStop on this call (1-based); 0 never
		want    string
		wantErr bool
	}{
		{name: "all parents", from: "v1", want: "d m b x a"},
		{name: "from a merge parent", from: ids["x"], want: "x a"},
		{name: "stop at b keeps a through the side", from: "main", stop: func(id string) bool { return id == ids["b"] }, want: "d m x a"},
		{name: "stop at the start", from: "main", stop: func(id string) bool { return id == ids["d"] }, want: ""},
		{name: "fn ends the walk", from: "main", stopAt: 2, want: "d m"},
		{name: "unknown ref", from: "nope", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			err := c.Log(context.Background(), tt.from, tt.stop, func(cm *object.Commit) error {
				got = append(got, name[cm.Hash.String()])
				if len(got) == tt.stopAt {
					return ErrStop
				}
				return nil
			})
			if (err != nil) != tt.wantErr {
				t.Fatalf("Log(%s) = %v, wantErr %v", tt.from, err, tt.wantErr)
			}
			if g := strings.Join(got, " "); !tt.wantErr && g != tt.want {
				t.Errorf("Log(%s) visited %q, want %q", tt.from, g, tt.want)
			}
		})
	}
	t.Run("matches git rev-list", func(t *testing.T) {
		var got []string
		c.Log(context.Background(), "v1", nil, func(cm *object.Commit) error {
			got = append(got, cm.Hash.String())
			return nil
		})
		want := strings.Split(r.Git("rev-list", "--date-order", "v1"), "\n")
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("Log(v1) = %v, want git rev-list --date-order %v", got, want)
		}
	})
	t.Run("error from fn", func(t *testing.T) {
		boom := errors.New("boom")
		err := c.Log(context.Background(), "v1", nil, func(*object.Commit) error { return boom })
		if !errors.Is(err, boom) {
			t.Errorf("Log() = %v, want boom", err)
		}
	})
}
