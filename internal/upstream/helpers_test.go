package upstream

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// fixture is an upstream with every kind of entry and ref the cache reads.
type fixture struct {
	repo       *gittest.Repo
	c1, c2, c3 string // commits on main: v1.0.0 (annotated), v1.1.0-light (lightweight), v1.2.0 (annotated)
	feature    string // tip of branch feature (not the default branch)
	dangling   string // a commit no ref reaches
	subCommit  string // the commit the vendor/sub gitlink records
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	r := gittest.New(t)
	f := &fixture{repo: r}
	r.Write("README.md", "hello\n")
	r.Write("dir/nested/file.txt", "nested\n")
	r.Write("dir/nested/deeper/leaf.txt", "leaf\n")
	r.WriteMode("bin/run.sh", "#!/bin/sh\necho run\n", 0o755)
	r.Symlink("link", "README.md")
	r.Symlink("dir/to-nested", "nested")
	r.Symlink("dangling-link", "does/not/exist")
	f.c1 = r.Commit("first")
	r.Tag("v1.0.0")

	r.Write("README.md", "hello again\n")
	r.Write("docs/guide.md", "guide\n")
	f.c2 = r.Commit("second")
	r.Git("tag", "v1.1.0-light")
	r.Git("branch", "release-1")

	sub := gittest.New(t)
	sub.Write("x", "x\n")
	f.subCommit = sub.Commit("sub")
	// An uninitialized submodule: a gitlink with an empty directory, as after
	// a clone without --recurse-submodules.
	r.Git("update-index", "--add", "--cacheinfo", "160000,"+f.subCommit+",vendor/sub")
	if err := os.MkdirAll(filepath.Join(r.Dir, "vendor/sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.Remove("docs/guide.md")
	r.Write("docs/other.md", "other\n")
	r.WriteMode("dir/nested/tool", "#!/bin/sh\n", 0o755)
	f.c3 = r.Commit("third")
	r.Tag("v1.2.0")

	r.Git("checkout", "-q", "-b", "feature", f.c2)
	r.Write("feature.txt", "feature\n")
	f.feature = r.Commit("feature work")
	r.Git("checkout", "-q", "-b", "tmp")
	r.Write("gone.txt", "gone\n")
	f.dangling = r.Commit("dangling")
	r.Git("checkout", "-q", "main")
	r.Git("branch", "-D", "tmp")
	return f
}

// open opens a cache and closes it when the test ends.
func open(t *testing.T, dir, url string, opts ...Option) *Cache {
	t.Helper()
	c, err := Open(context.Background(), dir, url, opts...)
	if err != nil {
		t.Fatalf("Open(%s) = %v", url, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// resolveOK resolves ref and fails the test on error.
func resolveOK(t *testing.T, c *Cache, ref string) string {
	t.Helper()
	got, err := c.Resolve(ref)
	if err != nil {
		t.Fatalf("Resolve(%q) = %v", ref, err)
	}
	return got
}

// fsck runs git fsck on the bare cache.
func fsck(t *testing.T, c *Cache) {
	t.Helper()
	if out, errOut, err := gittest.Run(c.Path(), nil, "fsck", "--no-dangling"); err != nil {
		t.Fatalf("git fsck %s: %v\n%s%s", c.Path(), err, out, errOut)
	}
}

// leftovers lists what besides the cache, its lock and (allowed) nothing else
// sits in the cache directory.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasSuffix(n, ".git") || strings.HasSuffix(n, ".lock") {
			continue
		}
		out = append(out, n)
	}
	return out
}
