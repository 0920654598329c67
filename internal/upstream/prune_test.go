package upstream

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// refLines are the tags and branches of c, as "<id> <name>" lines, sorted.
func refLines(t *testing.T, c *Cache) []string {
	t.Helper()
	out, errOut, err := gittest.Run(c.Path(), nil, "for-each-ref", "--format=%(objectname) %(refname)", "refs/tags", "refs/heads")
	if err != nil {
		t.Fatalf("git for-each-ref: %v\n%s", err, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	sort.Strings(lines)
	return lines
}

// upstreamRefs are the upstream's tags and branches as git ls-remote lists
// them (peeled lines left out), "<id> <name>" lines, sorted, those of
// branches kept only when keep names them.
func upstreamRefs(t *testing.T, url string, keep ...string) []string {
	t.Helper()
	lines, errOut, err := gitLsRemote(url)
	if err != nil {
		t.Fatalf("git ls-remote %s: %v\n%s", url, err, errOut)
	}
	var out []string
	for _, l := range lines {
		id, name, _ := strings.Cut(l, "\t")
		switch {
		case strings.HasSuffix(name, "^{}"):
		case strings.HasPrefix(name, "refs/tags/"):
			out = append(out, id+" "+name)
		case strings.HasPrefix(name, "refs/heads/"):
			for _, k := range keep {
				if name == "refs/heads/"+k {
					out = append(out, id+" "+name)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestFetchDropsWhatUpstreamDropped: a tag upstream deleted (a release
// withdrawn), a kept branch it deleted, and its default branch renamed
// leave the cache as a fresh clone would hold them, as git fetch --prune
// --prune-tags does: a warm cache scans no ref a cold one would not have.
// Commits fetched by id stay. The oracle is git ls-remote.
func TestFetchDropsWhatUpstreamDropped(t *testing.T) {
	ctx := context.Background()
	for _, partial := range []bool{false, true} {
		t.Run(map[bool]string{false: "full", true: "partial"}[partial], func(t *testing.T) {
			f := newFixture(t)
			url := f.repo.URL()
			c := open(t, t.TempDir(), url, WithShallow(partial), WithBranches("release-1", "feature"))
			if err := c.Ensure(ctx, "v1.0.0", "v1.1.0-light", "v1.2.0", "release-1", "feature", f.c2); err != nil {
				t.Fatal(err)
			}
			if partial {
				// A pin that is a commit id, fetched by id.
				if err := c.Ensure(ctx, f.c1); err != nil {
					t.Fatal(err)
				}
			}
			byID, _, _ := gittest.Run(c.Path(), nil, "for-each-ref", "--format=%(refname)", "refs/patchkit")

			f.repo.Git("tag", "-d", "v1.1.0-light")
			f.repo.Git("branch", "-D", "release-1")
			f.repo.Git("branch", "-m", "main", "trunk")
			if partial {
				if err := c.Ensure(ctx, "v1.2.0"); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.Fetch(ctx); err != nil {
				t.Fatal(err)
			}
			if got, want := refLines(t, c), upstreamRefs(t, url, "trunk", "feature"); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("cache refs after upstream dropped some:\n%s\nwant (git ls-remote)\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if _, err := c.Resolve("v1.1.0-light"); !errors.Is(err, ErrRefNotFound) {
				t.Errorf("Resolve(v1.1.0-light) = %v, want ErrRefNotFound", err)
			}
			if b := c.DefaultBranch(); b != "trunk" {
				t.Errorf("DefaultBranch() = %q, want trunk", b)
			}
			if after, _, _ := gittest.Run(c.Path(), nil, "for-each-ref", "--format=%(refname)", "refs/patchkit"); after != byID {
				t.Errorf("refs fetched by id: %q, want %q kept", after, byID)
			}
			fsck(t, c)
			c.Close()
			// Offline, the cache says the same.
			off := open(t, c.dir, url, WithOffline(true))
			if _, err := off.Resolve("v1.1.0-light"); !errors.Is(err, ErrRefNotFound) {
				t.Errorf("offline Resolve(v1.1.0-light) = %v, want ErrRefNotFound", err)
			}
		})
	}
}
