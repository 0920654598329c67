package upstream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// TestAbbreviatedIDAmbiguous: a prefix that several commits share is an
// error wrapping ErrAbbreviatedID that lists every one (git rev-parse's
// candidates); one digit more names one commit.
func TestAbbreviatedIDAmbiguous(t *testing.T) {
	r := gittest.New(t)
	r.Write("a.txt", "a\n")
	r.Release("first", "v1.0.0")
	var in strings.Builder
	for i := range 1500 {
		fmt.Fprintf(&in, "commit refs/heads/many\ncommitter c <c@example.com> %d +0000\ndata %d\n%s\n\n", 1700000000+i, len(fmt.Sprint(i))+1, fmt.Sprint(i)+"\n")
	}
	if _, errOut, err := gittest.Run(r.Dir, []byte(in.String()), "fast-import", "--quiet"); err != nil {
		t.Fatalf("git fast-import: %v\n%s", err, errOut)
	}
	list, _, err := gittest.Run(r.Dir, nil, "rev-list", "many")
	if err != nil {
		t.Fatal(err)
	}
	byPrefix := map[string][]string{}
	prefix := ""
	for _, id := range strings.Fields(list) {
		byPrefix[id[:4]] = append(byPrefix[id[:4]], id)
		if len(byPrefix[id[:4]]) == 2 {
			prefix = id[:4]
			break
		}
	}
	if prefix == "" {
		t.Fatal("no two of 1500 commits share 4 digits: make more")
	}
	c := open(t, t.TempDir(), r.URL(), WithBranches("many"))
	if err := c.Ensure(context.Background(), "many"); err != nil {
		t.Fatal(err)
	}
	_, err = c.Resolve(prefix)
	if !errors.Is(err, ErrAbbreviatedID) {
		t.Fatalf("Resolve(%q) = %v, want ErrAbbreviatedID", prefix, err)
	}
	for _, id := range byPrefix[prefix] {
		if !strings.Contains(err.Error(), id) {
			t.Errorf("Resolve(%q) = %v, want it to list %s", prefix, err, id)
		}
	}
	// Ensure fetches, finds it still ambiguous, and says so.
	if err := c.Ensure(context.Background(), prefix); !errors.Is(err, ErrAbbreviatedID) {
		t.Errorf("Ensure(%q) = %v, want ErrAbbreviatedID", prefix, err)
	}
	one := byPrefix[prefix][0]
	if got, err := c.Resolve(one[:12]); err != nil || got != one {
		t.Errorf("Resolve(%q) = %s, %v; want %s", one[:12], got, err, one)
	}
}

// TestAbbreviatedIDInPartialCache: a partial cache, which fetches only the
// refs asked for, cannot fetch an abbreviated id by name: Ensure fetches the
// whole history and finds the commit there.
func TestAbbreviatedIDInPartialCache(t *testing.T) {
	f := newFixture(t)
	c := open(t, t.TempDir(), f.repo.URL(), WithShallow(true))
	if err := c.Ensure(context.Background(), "v1.2.0"); err != nil {
		t.Fatal(err)
	}
	if err := c.Ensure(context.Background(), f.c1[:7]); err != nil {
		t.Fatalf("Ensure(%q) = %v", f.c1[:7], err)
	}
	if got := resolveOK(t, c, f.c1[:7]); got != f.c1 {
		t.Errorf("Resolve(%q) = %s, want %s", f.c1[:7], got, f.c1)
	}
}
