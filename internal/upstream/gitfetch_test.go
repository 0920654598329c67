package upstream

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// TestStaleGitLocks: a git fetch killed on its own (the OOM killer) leaves
// its lock files in a cache that still passes the check; the next fetch
// clears them, instead of failing on "File exists" or cloning afresh.
func TestStaleGitLocks(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	c := open(t, dir, f.repo.URL())
	// A commit-graph write killed inside git fetch leaves the chain's lock
	// (which would fail every later fetch) and a temporary layer.
	stale := []string{"refs/tags/v1.3.0.lock", "refs/heads/main.lock", "packed-refs.lock", "shallow.lock",
		"objects/info/commit-graphs/commit-graph-chain.lock", "objects/info/commit-graphs/tmp_graph_Xq1z9A"}
	for _, p := range stale {
		writeFile(t, filepath.Join(c.Path(), p), "")
	}
	f.repo.Write("README.md", "fourth\n")
	c4 := f.repo.Release("fourth", "v1.3.0")
	before, err := os.Stat(c.Path())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()

	r := open(t, dir, f.repo.URL())
	if err := r.Ensure(context.Background(), "v1.3.0"); err != nil {
		t.Fatalf("Ensure(v1.3.0) with stale lock files = %v", err)
	}
	if got := resolveOK(t, r, "v1.3.0"); got != c4 {
		t.Errorf("Resolve(v1.3.0) = %s, want %s", got, c4)
	}
	if got := resolveOK(t, r, "HEAD"); got != c4 {
		t.Errorf("Resolve(HEAD) = %s, want %s (main moved)", got, c4)
	}
	fsck(t, r)
	for _, p := range stale {
		if _, err := os.Lstat(filepath.Join(r.Path(), p)); !os.IsNotExist(err) {
			t.Errorf("%s is left after the fetch (%v)", p, err)
		}
	}
	if after, err := os.Stat(r.Path()); err != nil || !os.SameFile(before, after) {
		t.Errorf("the cache was cloned afresh (%v): stale lock files should be removed, not repaired", err)
	}
}

// TestProgressHidesToken: git's progress and ref lines, passed on to the
// progress writer, never show the token.
func TestProgressHidesToken(t *testing.T) {
	f := newFixture(t)
	base, _ := httpUpstream(t, f)
	url := withToken(base, tokenUser, token) + "/git/" + filepath.Base(f.repo.Dir)
	var progress bytes.Buffer
	c := open(t, t.TempDir(), url, WithProgress(&progress))
	if got := resolveOK(t, c, "v1.2.0"); got != f.c3 {
		t.Errorf("Resolve(v1.2.0) = %s, want %s", got, f.c3)
	}
	if progress.Len() == 0 {
		t.Error("no progress was written")
	}
	if strings.Contains(progress.String(), token) {
		t.Errorf("progress shows the token: %q", progress.String())
	}
}

// TestCredentialsOut: an http(s) URL's user and password leave the git
// command line for a credential helper scoped to the URL's scheme and host
// (their values in the environment, not in the config); other URLs pass
// unchanged.
func TestCredentialsOut(t *testing.T) {
	tests := []struct{ in, url, scope, user, pass string }{
		{"https://x-access-token:" + token + "@github.com/o/r", "https://github.com/o/r", "credential.https://github.com.helper", "x-access-token", token},
		{"http://" + token + "@127.0.0.1:8/git/r", "http://127.0.0.1:8/git/r", "credential.http://127.0.0.1:8.helper", token, ""},
		{"https://github.com/o/r", "https://github.com/o/r", "", "", ""},
		{"ssh://git@github.com/o/r", "ssh://git@github.com/o/r", "", "", ""},
		{"file:///tmp/r", "file:///tmp/r", "", "", ""},
	}
	for _, tt := range tests {
		u, env := credentialsOut(tt.in)
		got := map[string]string{}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			got[k] = v
		}
		if u != tt.url || got["GIT_CONFIG_KEY_0"] != tt.scope || got["PATCHKIT_GIT_USERNAME"] != tt.user || got["PATCHKIT_GIT_PASSWORD"] != tt.pass ||
			strings.Contains(u, token) || strings.Contains(got["GIT_CONFIG_VALUE_0"], token) {
			t.Errorf("credentialsOut(%q) = %q, %v; want %q scoped by %q", tt.in, u, env, tt.url, tt.scope)
		}
	}
}

// TestFetchPacksRefs: a fetch that writes many refs leaves them packed, not
// one loose file per tag that every later run would open; a fetch that
// writes a few leaves them loose (packing rewrites every ref), until they
// are git's pack-refs --auto's threshold; every tag resolves.
func TestFetchPacksRefs(t *testing.T) {
	f := newFixture(t)
	for i := range 30 {
		f.repo.Git("tag", fmt.Sprintf("extra-%02d", i), f.c2)
	}
	c := open(t, t.TempDir(), f.repo.URL())
	check := func(wantLoose ...string) {
		t.Helper()
		var loose []string
		filepath.WalkDir(filepath.Join(c.Path(), "refs"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(c.Path(), p)
				loose = append(loose, filepath.ToSlash(rel))
			}
			return nil
		})
		if strings.Join(loose, " ") != strings.Join(wantLoose, " ") {
			t.Errorf("loose refs after a fetch: %v, want %v", loose, wantLoose)
		}
		want := f.repo.Git("for-each-ref", "--format=%(objectname) %(refname)", "refs/tags")
		got, errOut, err := gittest.Run(c.Path(), nil, "for-each-ref", "--format=%(objectname) %(refname)", "refs/tags")
		if err != nil || strings.TrimSpace(got) != strings.TrimSpace(want) {
			t.Errorf("cache tags = %q (%v %s), want %q", got, err, errOut, want)
		}
	}
	check()
	f.repo.Git("tag", "extra-new", f.c3)
	if err := c.Fetch(context.Background()); err != nil {
		t.Fatalf("Fetch() = %v", err)
	}
	check("refs/tags/extra-new")
	if got := resolveOK(t, c, "extra-new"); got != f.c3 {
		t.Errorf("Resolve(extra-new) = %s, want %s", got, f.c3)
	}
	// One short of git's threshold stays loose; the fetch that reaches it packs.
	fi, err := os.Stat(filepath.Join(c.Path(), "packed-refs"))
	if err != nil {
		t.Fatal(err)
	}
	limit := packRefsLimit(fi.Size())
	for i := range limit - 2 {
		f.repo.Git("tag", fmt.Sprintf("more-%02d", i), f.c3)
	}
	if err := c.Fetch(context.Background()); err != nil {
		t.Fatalf("Fetch() = %v", err)
	}
	if n := looseRefs(c.Path(), 1000); n != limit-1 {
		t.Errorf("%d loose refs after a fetch of %d tags, want %d (below the threshold %d, left loose)", n, limit-2, limit-1, limit)
	}
	f.repo.Git("tag", "more-last", f.c3)
	if err := c.Fetch(context.Background()); err != nil {
		t.Fatalf("Fetch() = %v", err)
	}
	check()
	if got := resolveOK(t, c, "more-last"); got != f.c3 {
		t.Errorf("Resolve(more-last) = %s, want %s", got, f.c3)
	}
	fsck(t, c)
}

// TestPackRefsLimit is git's pack-refs --auto threshold (refs/files-backend.c).
func TestPackRefsLimit(t *testing.T) {
	for size, want := range map[int64]int{0: 16, 99: 16, 1 << 10: 16, 10 << 10: 30, 100 << 10: 50, 1 << 20: 65, 10 << 20: 80} {
		if got := packRefsLimit(size); got != want {
			t.Errorf("packRefsLimit(%d) = %d, want %d", size, got, want)
		}
	}
}

// TestTailBufferCleansSideband: what git's sideband leaves in its error
// text (ESC[K after "remote:", a character cut by the 4 KiB tail, a U+FFFD)
// does not reach the message.
func TestTailBufferCleansSideband(t *testing.T) {
	var tb tailBuffer
	tb.Write([]byte("remote: fatal: nope\x1b[K\nerror: \xe2\x82 bad \ufffdpack\x07\n"))
	if got, want := tb.String(), "remote: fatal: nope; error:  bad pack"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// TestTailBufferKeepsCRLFLines: ssh ends its error lines in \r\n; they are
// errors, not progress, and stay. Progress that \r rewrites keeps its last
// text.
func TestTailBufferKeepsCRLFLines(t *testing.T) {
	var tb tailBuffer
	tb.Write([]byte("Receiving objects:  50% (1/2)\rReceiving objects: 100% (2/2), done.\n" +
		"ssh: Could not resolve hostname up.example: Name or service not known\r\n" +
		"fatal: Could not read from remote repository.\n"))
	want := "Receiving objects: 100% (2/2), done.; ssh: Could not resolve hostname up.example: Name or service not known; fatal: Could not read from remote repository."
	if got := tb.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
