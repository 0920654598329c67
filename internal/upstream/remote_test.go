package upstream

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// TestRemoteTags lists the upstream's tags as `git ls-remote --tags` does
// (annotated tags peeled), from the advertisement a shallow clone read
// without fetching any object; offline it fails.
func TestRemoteTags(t *testing.T) {
	r := gittest.New(t)
	r.Write("a.txt", "a\n")
	c1 := r.Commit("one")
	r.Tag("v1.0.0")
	r.Git("tag", "light")
	ctx := context.Background()
	dir := t.TempDir()
	c, err := Open(ctx, dir, r.URL(), WithShallow(true))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tags, err := c.RemoteTags(ctx)
	if err != nil {
		t.Fatal(err)
	}
	annotated := strings.TrimSpace(r.Git("rev-parse", "refs/tags/v1.0.0"))
	want := []RemoteTag{{Name: "light", Target: c1, Peeled: c1}, {Name: "v1.0.0", Target: annotated, Peeled: c1}}
	if !reflect.DeepEqual(tags, want) {
		t.Errorf("RemoteTags() = %+v, want %+v", tags, want)
	}
	var ls []string
	for _, l := range strings.Split(strings.TrimSpace(r.Git("ls-remote", "--tags", r.Dir)), "\n") {
		ls = append(ls, strings.Fields(l)[0])
	}
	if got := []string{c1, annotated, c1}; !reflect.DeepEqual(ls, got) {
		t.Errorf("git ls-remote --tags lists %v, want %v", ls, got)
	}
	objects, _, err := gittest.Run(c.Path(), nil, "cat-file", "--batch-all-objects", "--batch-check")
	if err != nil || objects != "" {
		t.Errorf("the cache holds objects after listing tags: %q, %v", objects, err)
	}

	off, err := Open(ctx, dir, r.URL(), WithOffline(true), WithShallow(true))
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	if _, err := off.RemoteTags(ctx); !errors.Is(err, ErrOffline) {
		t.Errorf("offline RemoteTags() = %v, want ErrOffline", err)
	}
}
