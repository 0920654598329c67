package upstream

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/sys/unix"

	"github.com/patchkit/patchkit/internal/gittest"
)

func TestOpenValidates(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name string
		dir  string
		url  string
		opts []Option
		want string
	}{
		{name: "empty url", dir: t.TempDir(), url: "", want: "upstream url is empty"},
		{name: "empty dir", dir: "", url: f.repo.URL(), want: "no cache directory"},
		{name: "bad branch", dir: t.TempDir(), url: f.repo.URL(), opts: []Option{WithBranches("a..b")}, want: `invalid branch name "a..b"`},
		{name: "empty branch", dir: t.TempDir(), url: f.repo.URL(), opts: []Option{WithBranches("refs/heads/")}, want: "empty branch name"},
		{name: "missing upstream", dir: t.TempDir(), url: "file://" + filepath.Join(t.TempDir(), "nope"), want: "cloning: listing refs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Open(context.Background(), tt.dir, tt.url, tt.opts...)
			if err == nil {
				c.Close()
				t.Fatalf("Open() = nil error, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Open() = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestCacheLayout(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	c := open(t, dir, f.repo.URL())
	key := cacheKey(f.repo.URL())
	if want := filepath.Join(dir, key+".git"); c.Path() != want {
		t.Errorf("Path() = %s, want %s", c.Path(), want)
	}
	if fi, err := os.Stat(filepath.Join(c.Path(), "objects")); err != nil || !fi.IsDir() {
		t.Errorf("Path() has no objects/: %v", err)
	}
	if _, err := os.Stat(filepath.Join(c.Path(), "index")); err == nil {
		t.Errorf("cache has an index: it must be bare")
	}
	if out, _, err := gittest.Run(c.Path(), nil, "rev-parse", "--is-bare-repository"); err != nil || strings.TrimSpace(out) != "true" {
		t.Errorf("git rev-parse --is-bare-repository = %q, %v; want true", out, err)
	}
	if out, _, _ := gittest.Run(c.Path(), nil, "symbolic-ref", "HEAD"); strings.TrimSpace(out) != "refs/heads/main" {
		t.Errorf("cache HEAD = %q, want refs/heads/main (the upstream default branch)", out)
	}
	if got := c.DefaultBranch(); got != "main" {
		t.Errorf("DefaultBranch() = %q, want main", got)
	}
	if got := leftovers(t, dir); len(got) != 0 {
		t.Errorf("cache dir holds %v besides the cache and its lock", got)
	}
	fsck(t, c)
}

func TestDefaultCacheDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/tmp/xdg-cache")
	got, err := DefaultCacheDir()
	if err != nil || got != "/tmp/xdg-cache/patchkit" {
		t.Errorf("DefaultCacheDir() = %q, %v; want /tmp/xdg-cache/patchkit", got, err)
	}
}

func TestResolve(t *testing.T) {
	f := newFixture(t)
	c := open(t, t.TempDir(), f.repo.URL(), WithBranches("release-1"))
	tests := []struct {
		name    string
		ref     string
		want    string
		wantErr error
		errHas  []string
	}{
		{name: "annotated tag peeled", ref: "v1.0.0", want: f.c1},
		{name: "lightweight tag", ref: "v1.1.0-light", want: f.c2},
		{name: "annotated tag at head", ref: "v1.2.0", want: f.c3},
		{name: "full tag refname", ref: "refs/tags/v1.2.0", want: f.c3},
		{name: "default branch", ref: "main", want: f.c3},
		{name: "configured branch", ref: "release-1", want: f.c2},
		{name: "full branch refname", ref: "refs/heads/release-1", want: f.c2},
		{name: "HEAD", ref: "HEAD", want: f.c3},
		{name: "full commit id", ref: f.c1, want: f.c1},
		{name: "full commit id upper case", ref: strings.ToUpper(f.c2), want: f.c2},
		{name: "abbreviated id", ref: f.c1[:12], want: f.c1},
		{name: "abbreviated id, 7 digits", ref: f.c2[:7], want: f.c2},
		{name: "unknown abbreviated id", ref: "deadbeefdead", wantErr: ErrRefNotFound, errHas: []string{`"deadbeefdead"`, f.repo.URL()}},
		{name: "nonexistent tag", ref: "v9.9.9", wantErr: ErrRefNotFound, errHas: []string{`"v9.9.9"`, f.repo.URL()}},
		{name: "branch not fetched", ref: "feature", wantErr: ErrRefNotFound, errHas: []string{`"feature"`}},
		{name: "unknown full id", ref: strings.Repeat("ab", 20), wantErr: ErrRefNotFound, errHas: []string{strings.Repeat("ab", 20)}},
		{name: "tree id is not a commit", ref: f.repo.Git("rev-parse", f.c1+"^{tree}"), errHas: []string{"not a commit"}},
		{name: "empty ref", ref: "", errHas: []string{"empty ref"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.Resolve(tt.ref)
			if tt.want != "" {
				if err != nil || got != tt.want {
					t.Fatalf("Resolve(%q) = %q, %v; want %q", tt.ref, got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Resolve(%q) = %q, want an error", tt.ref, got)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Resolve(%q) = %v, want errors.Is %v", tt.ref, err, tt.wantErr)
			}
			for _, s := range tt.errHas {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("Resolve(%q) = %v, want it to contain %q", tt.ref, err, s)
				}
			}
		})
	}
}

func TestTags(t *testing.T) {
	f := newFixture(t)
	// A tag of a tree is left out of Tags.
	f.repo.Git("tag", "-a", "-m", "tree tag", "tree-tag", f.c1+"^{tree}")
	c := open(t, t.TempDir(), f.repo.URL())
	tags, err := c.Tags()
	if err != nil {
		t.Fatalf("Tags() = %v", err)
	}
	want := []struct{ name, commit string }{
		{"v1.0.0", f.c1}, {"v1.1.0-light", f.c2}, {"v1.2.0", f.c3},
	}
	if len(tags) != len(want) {
		t.Fatalf("Tags() = %v, want %v", tags, want)
	}
	for i, w := range want {
		g := tags[i]
		if g.Name != w.name || g.Commit != w.commit {
			t.Errorf("Tags()[%d] = %s %s, want %s %s", i, g.Name, g.Commit, w.name, w.commit)
		}
		ct := f.repo.Git("log", "-1", "--format=%ct", w.commit)
		if got := g.Time.Unix(); ct != strconv.FormatInt(got, 10) {
			t.Errorf("Tags()[%d].Time = %d, want the commit time %s", i, got, ct)
		}
	}
	// Annotated tags are kept as tag objects, not flattened to commits.
	ref, err := c.repo().Storer.Reference(plumbing.NewTagReferenceName("v1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	if ref.Hash().String() == f.c1 {
		t.Errorf("refs/tags/v1.0.0 = the commit, want the annotated tag object")
	}
	if _, err := c.repo().TagObject(ref.Hash()); err != nil {
		t.Errorf("TagObject(refs/tags/v1.0.0) = %v, want the annotated tag", err)
	}
}

func TestSecondRunNeedsNoNetwork(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	url := f.repo.URL()
	c, err := Open(context.Background(), dir, url)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ensure(context.Background(), "v1.2.0", f.c1); err != nil {
		t.Fatalf("Ensure() = %v", err)
	}
	c.Close()

	// The upstream goes away: nothing below may reach it.
	if err := os.Rename(f.repo.Dir, f.repo.Dir+".gone"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Rename(f.repo.Dir+".gone", f.repo.Dir) })

	tests := []struct {
		name string
		opts []Option
	}{
		{name: "online", opts: nil},
		{name: "offline", opts: []Option{WithOffline(true)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := open(t, dir, url, tt.opts...)
			if err := c.Ensure(context.Background(), "v1.2.0", f.c1); err != nil {
				t.Fatalf("Ensure() = %v", err)
			}
			if got := resolveOK(t, c, "v1.2.0"); got != f.c3 {
				t.Errorf("Resolve(v1.2.0) = %s, want %s", got, f.c3)
			}
			src, err := c.Source("v1.2.0")
			if err != nil {
				t.Fatalf("Source() = %v", err)
			}
			file, ok, err := src.Read("dir/nested/file.txt")
			if err != nil || !ok || string(file.Data) != "nested\n" {
				t.Errorf("Read(dir/nested/file.txt) = %v, %v, %v", file, ok, err)
			}
			if err := c.Materialize(context.Background(), f.c3, filepath.Join(t.TempDir(), "out")); err != nil {
				t.Errorf("Materialize() = %v", err)
			}
		})
	}

	t.Run("offline fetch is a no-op", func(t *testing.T) {
		c := open(t, dir, url, WithOffline(true))
		if err := c.Fetch(context.Background()); err != nil {
			t.Errorf("Fetch() offline = %v, want nil", err)
		}
	})
	t.Run("offline missing ref", func(t *testing.T) {
		c := open(t, dir, url, WithOffline(true))
		err := c.Ensure(context.Background(), "v2.0.0")
		if !errors.Is(err, ErrOffline) || !strings.Contains(err.Error(), "without --offline") || !strings.Contains(err.Error(), `"v2.0.0"`) {
			t.Errorf("Ensure(v2.0.0) offline = %v, want ErrOffline naming the ref and --offline", err)
		}
	})
	t.Run("offline missing cache", func(t *testing.T) {
		_, err := Open(context.Background(), t.TempDir(), url, WithOffline(true))
		if !errors.Is(err, ErrOffline) || !strings.Contains(err.Error(), "without --offline") {
			t.Errorf("Open() offline without cache = %v, want ErrOffline telling to run without --offline", err)
		}
	})
	t.Run("online missing ref fails on the gone upstream", func(t *testing.T) {
		c := open(t, dir, url)
		if err := c.Ensure(context.Background(), "v2.0.0"); err == nil {
			t.Errorf("Ensure(v2.0.0) = nil with the upstream gone, want a fetch error")
		}
	})
}

func TestEnsureFetchesOnlyWhatIsMissing(t *testing.T) {
	f := newFixture(t)
	f.repo.Git("config", "uploadpack.allowAnySHA1InWant", "true")
	dir := t.TempDir()
	c := open(t, dir, f.repo.URL())

	f.repo.Write("new.txt", "new\n")
	c4 := f.repo.Release("fourth", "v1.3.0")

	tests := []struct {
		name    string
		ref     string
		want    string
		wantErr error
	}{
		{name: "tag added upstream", ref: "v1.3.0", want: c4},
		{name: "branch not configured", ref: "feature", want: f.feature},
		{name: "commit reachable from no ref", ref: f.dangling, want: f.dangling},
		{name: "abbreviated id", ref: f.c1[:10], want: f.c1},
		{name: "unknown abbreviated id", ref: "deadbeefdead", wantErr: ErrRefNotFound},
		{name: "nonexistent", ref: "v7", wantErr: ErrRefNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Ensure(context.Background(), tt.ref)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Ensure(%q) = %v, want %v", tt.ref, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Ensure(%q) = %v", tt.ref, err)
			}
			if got := resolveOK(t, c, tt.ref); got != tt.want {
				t.Errorf("Resolve(%q) = %s, want %s", tt.ref, got, tt.want)
			}
		})
	}
	// Ensure of what is there does not fetch: main moved upstream, the cache keeps the old tip.
	f.repo.Write("later.txt", "later\n")
	f.repo.Commit("later")
	if err := c.Ensure(context.Background(), "main"); err != nil {
		t.Fatal(err)
	}
	if got := resolveOK(t, c, "main"); got != c4 {
		t.Errorf("Resolve(main) after Ensure = %s, want the cached %s (no fetch)", got, c4)
	}
	fsck(t, c)
}

func TestEnsureByIDRefused(t *testing.T) {
	f := newFixture(t)
	c := open(t, t.TempDir(), f.repo.URL())
	err := c.Ensure(context.Background(), f.dangling)
	if !errors.Is(err, ErrRefNotFound) || !strings.Contains(err.Error(), "by id") {
		t.Errorf("Ensure(dangling commit) = %v, want ErrRefNotFound explaining the fetch by id", err)
	}
}

func TestFetch(t *testing.T) {
	f := newFixture(t)
	var progress bytes.Buffer
	c := open(t, t.TempDir(), f.repo.URL(), WithBranches("release-1"), WithProgress(&progress))
	if progress.Len() == 0 {
		t.Errorf("clone wrote no progress to WithProgress")
	}
	if err := c.Fetch(context.Background()); err != nil {
		t.Fatalf("Fetch() with nothing new = %v", err)
	}

	f.repo.Git("checkout", "-q", "release-1")
	f.repo.Write("fix.txt", "fix\n")
	rel := f.repo.Commit("release fix")
	f.repo.Git("checkout", "-q", "main")
	f.repo.Write("main.txt", "main\n")
	c4 := f.repo.Commit("main moves")
	f.repo.Git("tag", "-f", "-a", "-m", "moved", "v1.2.0") // a moved tag
	f.repo.Tag("v1.3.0")
	f.repo.Git("branch", "-D", "feature")

	progress.Reset()
	if err := c.Fetch(context.Background()); err != nil {
		t.Fatalf("Fetch() = %v", err)
	}
	if progress.Len() == 0 {
		t.Errorf("Fetch wrote no progress to WithProgress")
	}
	tests := []struct{ ref, want string }{
		{"main", c4},
		{"HEAD", c4},
		{"release-1", rel},
		{"v1.2.0", c4},
		{"v1.3.0", c4},
		{"v1.0.0", f.c1},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			if got := resolveOK(t, c, tt.ref); got != tt.want {
				t.Errorf("Resolve(%q) after Fetch = %s, want %s", tt.ref, got, tt.want)
			}
		})
	}
	fsck(t, c)
}

func TestDefaultBranchFollowed(t *testing.T) {
	f := newFixture(t)
	f.repo.Git("branch", "-m", "main", "trunk")
	c := open(t, t.TempDir(), f.repo.URL())
	if got := resolveOK(t, c, "trunk"); got != f.c3 {
		t.Errorf("Resolve(trunk) = %s, want %s", got, f.c3)
	}
	if got := resolveOK(t, c, "HEAD"); got != f.c3 {
		t.Errorf("Resolve(HEAD) = %s, want %s", got, f.c3)
	}
}

func TestLockWaitHonorsContext(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	c := open(t, dir, f.repo.URL())
	lk, err := lockFile(context.Background(), c.lockPath(), unix.LOCK_EX)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.unlock()
	tests := []struct {
		name string
		run  func(ctx context.Context) error
	}{
		{name: "Open", run: func(ctx context.Context) error {
			c, err := Open(ctx, dir, f.repo.URL())
			if err == nil {
				c.Close()
			}
			return err
		}},
		{name: "Fetch", run: c.Fetch},
		{name: "Ensure missing", run: func(ctx context.Context) error { return c.Ensure(ctx, "v9") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
			defer cancel()
			if err := tt.run(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s while locked = %v, want context.DeadlineExceeded", tt.name, err)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain https", "https://github.com/kubeovn/kube-ovn", "https://github.com/kubeovn/kube-ovn"},
		{"user and token", "https://x-access-token:ghp_SECRET@github.com/a/b.git", "https://***@github.com/a/b.git"},
		{"token as user", "https://ghp_SECRET@github.com/a/b", "https://***@github.com/a/b"},
		{"ssh user kept", "ssh://git@github.com/a/b.git", "ssh://git@github.com/a/b.git"},
		{"ssh password hidden", "ssh://git:pw@host/a", "ssh://***@host/a"},
		{"scp-like", "git@github.com:a/b.git", "git@github.com:a/b.git"},
		{"file", "file:///tmp/repo", "file:///tmp/repo"},
		{"at sign in path", "https://host/a@b", "https://host/a@b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCacheKey(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Za-z0-9._-]+-[0-9a-f]{12}$`)
	tests := []struct{ name, url, wantPrefix string }{
		{"https", "https://github.com/kubeovn/kube-ovn", "github.com-kubeovn-kube-ovn-"},
		{"https .git", "https://github.com/kubeovn/kube-ovn.git", "github.com-kubeovn-kube-ovn-"},
		{"token", "https://x-access-token:ghp_SECRET@github.com/kubeovn/kube-ovn", "github.com-kubeovn-kube-ovn-"},
		{"port", "http://127.0.0.1:8080/r.git", "127.0.0.1-8080-r-"},
		{"scp-like", "git@github.com:kubeovn/kube-ovn.git", "github.com-kubeovn-kube-ovn-"},
		{"file", "file:///tmp/up stream/repo", "tmp-up-stream-repo-"},
		{"bare path", "/srv/git/repo.git", "srv-git-repo-"},
		{"long", "https://example.com/" + strings.Repeat("abcdefghij/", 20) + "end", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cacheKey(tt.url)
			if !valid.MatchString(got) || len(got) > maxKeyName+13 {
				t.Errorf("cacheKey(%q) = %q, not a safe file name", tt.url, got)
			}
			if !strings.HasPrefix(got, tt.wantPrefix) {
				t.Errorf("cacheKey(%q) = %q, want prefix %q", tt.url, got, tt.wantPrefix)
			}
			if strings.Contains(got, "SECRET") {
				t.Errorf("cacheKey(%q) = %q holds the token", tt.url, got)
			}
		})
	}
	if a, b := cacheKey("https://a:ONE@h/r"), cacheKey("https://a:TWO@h/r"); a != b {
		t.Errorf("cacheKey differs by token: %q, %q; a rotated token must keep the cache", a, b)
	}
	if a, b := cacheKey("https://h/r1"), cacheKey("https://h/r2"); a == b {
		t.Errorf("cacheKey(r1) = cacheKey(r2) = %q", a)
	}
}
