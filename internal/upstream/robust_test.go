package upstream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/tree"
)

// The helper process of TestConcurrentProcesses: with these variables set,
// the test binary opens and fetches one cache, then exits.
const (
	helperEnv    = "PATCHKIT_UPSTREAM_HELPER"
	helperDirEnv = "PATCHKIT_UPSTREAM_HELPER_DIR"
	helperURLEnv = "PATCHKIT_UPSTREAM_HELPER_URL"
	helperRefEnv = "PATCHKIT_UPSTREAM_HELPER_REF"
	// helperPacksEnv sets maxPacks in the helper (TestConsolidate*).
	helperPacksEnv = "PATCHKIT_UPSTREAM_HELPER_MAXPACKS"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		if err := helper(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func helper() error {
	ctx := context.Background()
	if n := os.Getenv(helperPacksEnv); n != "" {
		if _, err := fmt.Sscan(n, &maxPacks); err != nil {
			return err
		}
	}
	c, err := Open(ctx, os.Getenv(helperDirEnv), os.Getenv(helperURLEnv), WithBranches("release-1"))
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Fetch(ctx); err != nil {
		return err
	}
	ref := os.Getenv(helperRefEnv)
	if err := c.Ensure(ctx, ref); err != nil {
		return err
	}
	if _, err := c.Resolve(ref); err != nil {
		return err
	}
	src, err := c.Source(ref)
	if err != nil {
		return err
	}
	return src.Walk(func(string, *tree.File) error { return nil })
}

// moveUpstream adds commits, a tag and a branch update, so that a fetch has work.
func moveUpstream(t *testing.T, f *fixture, n int) string {
	t.Helper()
	var last string
	for i := range n {
		f.repo.Write(fmt.Sprintf("more/%d.txt", i), strings.Repeat("x", i*100))
		last = f.repo.Commit(fmt.Sprintf("more %d", i))
	}
	f.repo.Tag(fmt.Sprintf("v2.%d.0", n))
	f.repo.Git("branch", "-f", "release-1", last)
	return last
}

func TestConcurrentGoroutines(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
	}{
		{name: "fresh cache", setup: func(*testing.T, string) {}},
		{name: "existing cache, upstream moved", setup: func(t *testing.T, dir string) {
			c, err := Open(context.Background(), dir, f.repo.URL())
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
			moveUpstream(t, f, 5)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(t, dir)
			want := f.repo.Head()
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c, err := Open(context.Background(), dir, f.repo.URL(), WithBranches("release-1"))
					if err != nil {
						errs <- err
						return
					}
					defer c.Close()
					if err := c.Fetch(context.Background()); err != nil {
						errs <- err
						return
					}
					if got, err := c.Resolve("main"); err != nil || got != want {
						errs <- fmt.Errorf("Resolve(main) = %s, %v; want %s", got, err, want)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			c := open(t, dir, f.repo.URL(), WithOffline(true))
			fsck(t, c)
			if got := leftovers(t, dir); len(got) != 0 {
				t.Errorf("cache dir holds %v after concurrent runs", got)
			}
		})
	}
}

func TestConcurrentProcesses(t *testing.T) {
	f := newFixture(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for round, moves := range []int{0, 7} {
		if moves > 0 {
			moveUpstream(t, f, moves)
		}
		ref := f.repo.Head()
		var cmds []*exec.Cmd
		outs := make([]*strings.Builder, 4)
		for i := range outs {
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"=1", helperDirEnv+"="+dir, helperURLEnv+"="+f.repo.URL(), helperRefEnv+"="+ref)
			outs[i] = &strings.Builder{}
			cmd.Stdout, cmd.Stderr = outs[i], outs[i]
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds = append(cmds, cmd)
		}
		for i, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Errorf("round %d: helper process %d: %v\n%s", round, i, err, outs[i])
			}
		}
		c := open(t, dir, f.repo.URL(), WithOffline(true))
		fsck(t, c)
		if got := resolveOK(t, c, "release-1"); moves > 0 && got != ref {
			t.Errorf("round %d: Resolve(release-1) = %s, want %s", round, got, ref)
		}
		if got := leftovers(t, dir); len(got) != 0 {
			t.Errorf("round %d: cache dir holds %v", round, got)
		}
	}
}

// damage breaks a cache the way a killed run could leave it.
type damage struct {
	name string
	// fresh: the cache never finished its first clone (no healthy cache first).
	fresh bool
	do    func(t *testing.T, c *Cache)
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func removeGlob(t *testing.T, pattern string) {
	t.Helper()
	matches, _ := filepath.Glob(pattern)
	if len(matches) == 0 {
		t.Fatalf("nothing matches %s", pattern)
	}
	for _, m := range matches {
		if err := os.Remove(m); err != nil {
			t.Fatal(err)
		}
	}
}

var damages = []damage{
	{name: "killed clone: leftover temp clone", fresh: true, do: func(t *testing.T, c *Cache) {
		writeFile(t, filepath.Join(c.dir, c.tmpPrefix()+"12345", "objects/pack/tmp_pack_x"), "partial")
	}},
	{name: "killed clone: garbage file at the cache path", fresh: true, do: func(t *testing.T, c *Cache) {
		writeFile(t, c.Path(), "garbage")
	}},
	{name: "killed clone: empty directory at the cache path", fresh: true, do: func(t *testing.T, c *Cache) {
		os.MkdirAll(c.Path(), 0o755)
	}},
	{name: "killed clone: half a repository at the cache path", fresh: true, do: func(t *testing.T, c *Cache) {
		writeFile(t, filepath.Join(c.Path(), "HEAD"), "ref: refs/heads/main\n")
		writeFile(t, filepath.Join(c.Path(), "config"), "[core]\n\tbare = true\n")
		os.MkdirAll(filepath.Join(c.Path(), "objects/pack"), 0o755)
	}},
	{name: "killed fetch: marker and corrupted ref", do: func(t *testing.T, c *Cache) {
		writeFile(t, c.markerPath(), "pid 1")
		writeFile(t, filepath.Join(c.Path(), "refs/tags/v1.0.0"), "garbage\n")
	}},
	{name: "killed fetch: marker and deleted pack", do: func(t *testing.T, c *Cache) {
		writeFile(t, c.markerPath(), "pid 1")
		removeGlob(t, filepath.Join(c.Path(), "objects/pack/*.pack"))
	}},
	{name: "killed fetch: marker only", do: func(t *testing.T, c *Cache) {
		writeFile(t, c.markerPath(), "pid 1")
	}},
	{name: "no marker: ref at a missing object", do: func(t *testing.T, c *Cache) {
		writeFile(t, filepath.Join(c.Path(), "refs/heads/main"), strings.Repeat("ab", 20)+"\n")
	}},
	{name: "no marker: packs deleted", do: func(t *testing.T, c *Cache) {
		removeGlob(t, filepath.Join(c.Path(), "objects/pack/*"))
	}},
	{name: "no marker: HEAD deleted", do: func(t *testing.T, c *Cache) {
		removeGlob(t, filepath.Join(c.Path(), "HEAD"))
	}},
	{name: "no marker: every ref lost", do: func(t *testing.T, c *Cache) {
		// HEAD names a branch the cache no longer has: unborn, which an
		// upstream without HEAD leaves too (TestUpstreamWithoutHead), but
		// here with no ref at all.
		for _, p := range []string{"packed-refs", "refs/heads", "refs/tags"} {
			os.RemoveAll(filepath.Join(c.Path(), p))
		}
	}},
}

func TestRepair(t *testing.T) {
	f := newFixture(t)
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			dir := t.TempDir()
			c := &Cache{dir: dir, key: cacheKey(f.repo.URL())}
			if !d.fresh {
				healthy, err := Open(context.Background(), dir, f.repo.URL())
				if err != nil {
					t.Fatal(err)
				}
				healthy.Close()
			}
			d.do(t, c)

			t.Run("offline is a clear error", func(t *testing.T) {
				_, err := Open(context.Background(), dir, f.repo.URL(), WithOffline(true))
				var cf *CacheFaultError
				if _, statErr := os.Lstat(c.Path()); statErr != nil {
					// Nothing was ever cached: that is not damage.
					if !errors.Is(err, ErrOffline) || !strings.Contains(err.Error(), "without --offline") {
						t.Errorf("Open() offline without a cache = %v, want ErrOffline telling to run without --offline", err)
					}
				} else if !errors.As(err, &cf) || !errors.Is(err, ErrCacheDamaged) || cf.Path != c.Path() ||
					!strings.Contains(err.Error(), "cache damaged") || !strings.Contains(err.Error(), "without --offline") {
					t.Errorf("Open() offline on a damaged cache = %v, want a *CacheFaultError telling to run without --offline", err)
				}
			})

			r := open(t, dir, f.repo.URL())
			if got := resolveOK(t, r, "v1.0.0"); got != f.c1 {
				t.Errorf("Resolve(v1.0.0) after repair = %s, want %s", got, f.c1)
			}
			src, err := r.Source("v1.2.0")
			if err != nil {
				t.Fatal(err)
			}
			if file, ok, err := src.Read("README.md"); err != nil || !ok || string(file.Data) != "hello again\n" {
				t.Errorf("Read(README.md) after repair = %v, %v, %v", file, ok, err)
			}
			fsck(t, r)
			if got := leftovers(t, dir); len(got) != 0 {
				t.Errorf("cache dir holds %v after repair", got)
			}
		})
	}
}

func TestFailedFetchKeepsCache(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	c := open(t, dir, f.repo.URL())
	if err := os.Rename(f.repo.Dir, f.repo.Dir+".gone"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Rename(f.repo.Dir+".gone", f.repo.Dir) })
	if err := c.Fetch(context.Background()); err == nil {
		t.Fatal("Fetch() from a gone upstream = nil, want an error")
	}
	// The fetch failed cleanly: the cache is intact, so no marker is left to
	// force a re-clone, and offline use goes on.
	if got := leftovers(t, dir); len(got) != 0 {
		t.Errorf("cache dir holds %v after a failed fetch", got)
	}
	o := open(t, dir, f.repo.URL(), WithOffline(true))
	if got := resolveOK(t, o, "v1.2.0"); got != f.c3 {
		t.Errorf("Resolve(v1.2.0) = %s, want %s", got, f.c3)
	}
}

func TestShallowUpstream(t *testing.T) {
	full := gittest.New(t)
	var ids []string
	for i := range 10 {
		full.Write("f.txt", fmt.Sprint(i))
		full.Write(fmt.Sprintf("d/%d.txt", i), "x")
		ids = append(ids, full.Commit(fmt.Sprint("c", i)))
	}
	full.Tag("v1.0.0")
	up := shallowMirror(t, full)
	if got := up.Git("rev-parse", "--is-shallow-repository"); got != "true" {
		t.Fatalf("mirror is not shallow: %s", got)
	}
	boundary := ids[7]

	dir := t.TempDir()
	c := open(t, dir, up.URL())
	if err := c.Ensure(context.Background(), "v1.0.0", "main"); err != nil {
		t.Fatalf("Ensure() = %v", err)
	}
	shallow, err := c.repo().Storer.Shallow()
	if err != nil || len(shallow) != 1 || shallow[0].String() != boundary {
		t.Errorf("cache shallow list = %v, %v; want [%s]", shallow, err, boundary)
	}
	walk := logIDs // on a shallow cache
	tests := []struct {
		name string
		from string
		want []string
	}{
		{name: "tag", from: "v1.0.0", want: []string{ids[9], ids[8], ids[7]}},
		{name: "inside", from: ids[8], want: []string{ids[8], ids[7]}},
		{name: "boundary", from: boundary, want: []string{ids[7]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := walk(t, c, tt.from); strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("Log(%s) = %v, want %v", tt.from, got, tt.want)
			}
		})
	}
	if out := strings.TrimSpace(up.Git("-C", c.Path(), "rev-list", "--count", "main")); out != "3" {
		t.Errorf("git rev-list --count in the cache = %s, want 3 (git reads the shallow file)", out)
	}
	fsck(t, c)

	t.Run("fetch after the mirror moves", func(t *testing.T) {
		up.Write("f.txt", "new")
		next := up.Release("on the mirror", "v1.1.0")
		if err := c.Fetch(context.Background()); err != nil {
			t.Fatalf("Fetch() from the shallow mirror = %v", err)
		}
		if got := resolveOK(t, c, "v1.1.0"); got != next {
			t.Errorf("Resolve(v1.1.0) = %s, want %s", got, next)
		}
		if got := walk(t, c, "v1.1.0"); len(got) != 4 {
			t.Errorf("Log(v1.1.0) = %d commits, want 4", len(got))
		}
		out := filepath.Join(t.TempDir(), "out")
		if err := c.Materialize(context.Background(), "v1.1.0", out); err != nil {
			t.Fatalf("Materialize() = %v", err)
		}
		fsck(t, c)
	})
	t.Run("reopened offline", func(t *testing.T) {
		o := open(t, dir, up.URL(), WithOffline(true))
		if got := walk(t, o, "v1.0.0"); len(got) != 3 {
			t.Errorf("Log(v1.0.0) offline = %d commits, want 3", len(got))
		}
	})
}
