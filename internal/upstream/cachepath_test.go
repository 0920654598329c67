package upstream

import (
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// TestCachePath: CachePath is the path of the cache Open opens, for a URL
// with and without credentials alike, and another URL's is another.
func TestCachePath(t *testing.T) {
	up := gittest.New(t)
	up.Write("a.txt", "a\n")
	up.Commit("one")
	dir := t.TempDir()
	c := open(t, dir, up.URL())
	if got := CachePath(dir, up.URL()); got != c.Path() {
		t.Errorf("CachePath() = %q, want Open's %q", got, c.Path())
	}
	const plain = "https://example.invalid/org/repo.git"
	if withUser := strings.Replace(plain, "://", "://someone:secret@", 1); CachePath(dir, withUser) != CachePath(dir, plain) {
		t.Errorf("CachePath(with credentials) = %q, want %q", CachePath(dir, withUser), CachePath(dir, plain))
	}
	if CachePath(dir, plain) == c.Path() {
		t.Errorf("two upstreams share the cache %q", c.Path())
	}
}
