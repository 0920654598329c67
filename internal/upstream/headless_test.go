package upstream

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// tagsOnlyMirror is a bare copy of f's upstream holding its tags only, the
// way a CI mirror made with `git init --bare` and `git fetch --tags` is:
// its HEAD names refs/heads/master, which it does not have, so it
// advertises no HEAD.
func tagsOnlyMirror(t *testing.T, f *fixture) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mirror.git")
	for _, args := range [][]string{
		{"init", "-q", "--bare", "--initial-branch=master", dir},
		{"--git-dir", dir, "fetch", "-q", "--no-tags", f.repo.Dir, "+refs/tags/*:refs/tags/*"},
	} {
		if _, errOut, err := gittest.Run("", nil, args...); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, errOut)
		}
	}
	return dir
}

// An upstream with no HEAD (an unborn default branch) is no damage: git
// clones it (and warns), and the cache opens, reopens and opens offline.
// HEAD names no commit there, and there is no default branch.
func TestUpstreamWithoutHead(t *testing.T) {
	f := newFixture(t)
	url := "file://" + tagsOnlyMirror(t, f)

	// The oracle: git lists no HEAD, and its clone succeeds.
	lines, errOut, err := gitLsRemote(url)
	if out := strings.Join(lines, "\n") + "\n"; err != nil || strings.Contains(out, "\tHEAD\n") || !strings.Contains(out, "\trefs/tags/v1.2.0\n") {
		t.Fatalf("git ls-remote %s: %v\n%s%s\nwant the tags and no HEAD", url, err, out, errOut)
	}
	if _, errOut, err := gittest.Run("", nil, "clone", "-q", "--bare", url, filepath.Join(t.TempDir(), "clone.git")); err != nil {
		t.Fatalf("git clone --bare %s: %v\n%s", url, err, errOut)
	}

	for _, shallow := range []bool{false, true} {
		t.Run(map[bool]string{false: "full", true: "partial"}[shallow], func(t *testing.T) {
			dir := t.TempDir()
			for i, opts := range [][]Option{
				{WithShallow(shallow)},
				{WithShallow(shallow)},
				{WithShallow(shallow), WithOffline(true)},
				{}, // a partial cache gets its whole history
				{WithOffline(true)},
			} {
				c, err := Open(context.Background(), dir, url, opts...)
				if err != nil {
					t.Fatalf("Open #%d = %v", i+1, err)
				}
				if err := c.Ensure(context.Background(), "v1.0.0", "v1.2.0"); err != nil {
					t.Fatalf("Ensure #%d = %v", i+1, err)
				}
				if got := resolveOK(t, c, "v1.0.0"); got != f.c1 {
					t.Errorf("Open #%d: Resolve(v1.0.0) = %s, want %s", i+1, got, f.c1)
				}
				if got := resolveOK(t, c, "v1.2.0"); got != f.c3 {
					t.Errorf("Open #%d: Resolve(v1.2.0) = %s, want %s", i+1, got, f.c3)
				}
				if _, err := c.Resolve("HEAD"); !errors.Is(err, ErrRefNotFound) || !strings.Contains(err.Error(), "has no HEAD (no default branch)") {
					t.Errorf("Open #%d: Resolve(HEAD) = %v, want ErrRefNotFound saying there is no default branch", i+1, err)
				}
				if b := c.DefaultBranch(); b != "" {
					t.Errorf("Open #%d: DefaultBranch() = %q, want none", i+1, b)
				}
				fsck(t, c)
				c.Close()
			}
		})
	}
}
