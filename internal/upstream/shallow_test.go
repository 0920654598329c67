package upstream

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/patchkit/patchkit/internal/gittest"
)

// logIDs walks the cache's history from ref and returns the commit ids.
func logIDs(t *testing.T, c *Cache, from string) []string {
	t.Helper()
	var got []string
	err := c.Log(context.Background(), from, nil, func(cm *object.Commit) error {
		got = append(got, cm.Hash.String())
		return nil
	})
	if err != nil {
		t.Fatalf("Log(%s) = %v", from, err)
	}
	return got
}

// shallowMirror is a shallow clone (--depth 3) of full, the upstream of the
// shallow-upstream tests.
func shallowMirror(t *testing.T, full *gittest.Repo) *gittest.Repo {
	t.Helper()
	mirror := filepath.Join(t.TempDir(), "mirror")
	if _, errOut, err := gittest.Run(t.TempDir(), nil, "clone", "-q", "--depth", "3", full.URL(), mirror); err != nil {
		t.Fatalf("git clone --depth 3: %v\n%s", err, errOut)
	}
	return &gittest.Repo{TB: t, Dir: mirror}
}

// revList is git's list of the commits reachable from ref in repo.
func revList(t *testing.T, repo, ref string) []string {
	t.Helper()
	out, errOut, err := gittest.Run(repo, nil, "rev-list", "--topo-order", ref)
	if err != nil {
		t.Fatalf("git rev-list %s: %v\n%s", ref, err, errOut)
	}
	return strings.Fields(out)
}

// objectSet is the set of every object in the repository at dir.
func objectSet(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out, errOut, err := gittest.Run(dir, nil, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
	if err != nil {
		t.Fatalf("git cat-file --batch-all-objects: %v\n%s", err, errOut)
	}
	set := map[string]bool{}
	for _, id := range strings.Fields(out) {
		set[id] = true
	}
	return set
}

// refObjects is the set of objects `git clone --depth 1 --branch ref` of
// repo fetches: the tag object (for an annotated tag), the commit, and every
// tree and blob of its tree.
func refObjects(t *testing.T, repo, ref string) map[string]bool {
	t.Helper()
	out, errOut, err := gittest.Run(repo, nil, "rev-list", "--objects", "--no-object-names", "--max-count=1", ref)
	if err != nil {
		t.Fatalf("git rev-list --objects %s: %v\n%s", ref, err, errOut)
	}
	set := map[string]bool{}
	for _, id := range strings.Fields(out) {
		set[id] = true
	}
	if id, _, err := gittest.Run(repo, nil, "rev-parse", "refs/tags/"+ref); err == nil {
		set[strings.TrimSpace(id)] = true
	}
	return set
}

// TestShallowCacheFetchesOnlyTheRefs: a cache cloned WithShallow holds the
// refs it is asked for at depth 1 and no other object (not another tag's),
// marked partial, with their commits as its boundaries. Another tag or
// branch comes at depth 1 when a shallow run first asks for it; offline, a
// ref it was not asked for is ErrOffline, naming the way out. Opened without
// WithShallow, the cache is deepened to the upstream's whole history, every
// tag and branch, and is no longer partial.
func TestShallowCacheFetchesOnlyTheRefs(t *testing.T) {
	f := newFixture(t)
	f.repo.Write("README.md", "fourth\n")
	c4 := f.repo.Commit("fourth, untagged")
	f.repo.Write("README.md", "fifth\n")
	c5 := f.repo.Release("fifth", "v1.3.0")
	dir := t.TempDir()
	ctx := context.Background()
	s := open(t, dir, f.repo.URL(), WithShallow(true))
	if err := s.Ensure(ctx, "v1.3.0"); err != nil {
		t.Fatalf("Ensure(v1.3.0) = %v", err)
	}
	if got := resolveOK(t, s, "v1.3.0"); got != c5 {
		t.Errorf("Resolve(v1.3.0) = %s, want %s", got, c5)
	}
	if !s.Partial() || !s.Boundary(c5) {
		t.Errorf("Partial() = %v, Boundary(pin) = %v; want both true", s.Partial(), s.Boundary(c5))
	}
	if got, want := objectSet(t, s.Path()), refObjects(t, f.repo.Dir, "v1.3.0"); !maps.Equal(got, want) {
		t.Errorf("the cache holds %d objects, want the %d of v1.3.0 at depth 1:\n got %v\nwant %v", len(got), len(want), got, want)
	}
	v1blob := strings.TrimSpace(f.repo.Git("rev-parse", "v1.0.0:README.md"))
	if objectSet(t, s.Path())[v1blob] {
		t.Errorf("v1.0.0's README.md %s is in the cache before anything asked for v1.0.0", v1blob)
	}
	if _, err := s.Resolve("v1.0.0"); !errors.Is(err, ErrRefNotFound) {
		t.Errorf("Resolve(v1.0.0) before Ensure = %v, want ErrRefNotFound (not fetched)", err)
	}
	if hasCommitGraph(s.Path()) {
		t.Errorf("a partial cache has a commit-graph (git ignores it there)")
	}
	// Another tag comes when asked for, at depth 1, and only it.
	if err := s.Ensure(ctx, "v1.0.0"); err != nil {
		t.Fatalf("Ensure(v1.0.0) = %v", err)
	}
	if got := resolveOK(t, s, "v1.0.0"); got != f.c1 {
		t.Errorf("Resolve(v1.0.0) = %s, want %s", got, f.c1)
	}
	if got, want := strings.Join(revList(t, s.Path(), "--all"), " "), strings.Join([]string{c5, f.c1}, " "); got != want {
		t.Errorf("the shallow cache holds commits %s, want only the asked-for ones %s", got, want)
	}
	if !objectSet(t, s.Path())[v1blob] {
		t.Errorf("v1.0.0's README.md %s is not in the cache after Ensure(v1.0.0)", v1blob)
	}
	// A tag made upstream after this Cache last listed the refs is found.
	f.repo.Git("tag", "v1.4.0-late", c5)
	if err := s.Ensure(ctx, "v1.4.0-late"); err != nil {
		t.Fatalf("Ensure(a tag made after the last fetch) = %v", err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if err := s.Materialize(ctx, c5, out); err != nil {
		t.Fatalf("Materialize(pin) from the shallow cache = %v", err)
	}
	// A branch that is not kept comes at depth 1 too.
	if err := s.Ensure(ctx, "feature", "HEAD"); err != nil {
		t.Fatalf("Ensure(feature, HEAD) = %v", err)
	}
	if got := resolveOK(t, s, "feature"); got != f.feature {
		t.Errorf("Resolve(feature) = %s, want %s", got, f.feature)
	}
	if got := resolveOK(t, s, "HEAD"); got != c5 {
		t.Errorf("Resolve(HEAD) = %s, want %s", got, c5)
	}
	if err := s.Ensure(ctx, "no-such-tag"); !errors.Is(err, ErrRefNotFound) || !s.Partial() {
		t.Errorf("Ensure(no-such-tag) = %v, Partial() = %v; want ErrRefNotFound and still partial", err, s.Partial())
	}
	fsck(t, s)
	s.Close()

	if _, err := Open(ctx, dir, f.repo.URL(), WithOffline(true)); !errors.Is(err, ErrOffline) {
		t.Errorf("Open offline, for history, of a partial cache = %v; want ErrOffline", err)
	}
	o := open(t, dir, f.repo.URL(), WithOffline(true), WithShallow(true))
	if got := resolveOK(t, o, "v1.0.0"); got != f.c1 {
		t.Errorf("offline shallow Resolve(v1.0.0) = %s, want %s", got, f.c1)
	}
	if err := o.Ensure(ctx, "v1.2.0"); !errors.Is(err, ErrOffline) || !strings.Contains(err.Error(), "run once without --offline") || !strings.Contains(err.Error(), "v1.2.0") {
		t.Errorf("offline shallow Ensure(v1.2.0), never fetched = %v; want ErrOffline naming it and the way out", err)
	}
	if _, err := o.Resolve(c4); !errors.Is(err, ErrRefNotFound) {
		t.Errorf("offline shallow Resolve(untagged commit) = %v, want ErrRefNotFound (not fetched)", err)
	}
	o.Close()

	c := open(t, dir, f.repo.URL())
	if c.Partial() {
		t.Fatal("a cache opened for history is still partial")
	}
	for ref, want := range map[string]string{"v1.0.0": f.c1, "v1.1.0-light": f.c2, "v1.2.0": f.c3, "v1.3.0": c5, c4: c4, "main": c5, "feature": f.feature} {
		if got := resolveOK(t, c, ref); got != want {
			t.Errorf("Resolve(%s) after deepening = %s, want %s", ref, got, want)
		}
	}
	for _, ref := range []string{"v1.3.0", "feature"} {
		if got, want := logIDs(t, c, ref), revList(t, f.repo.Dir, ref); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("Log(%s) after deepening = %v, want %v", ref, got, want)
		}
	}
	if sh, err := c.repo().Storer.Shallow(); err != nil || len(sh) != 0 {
		t.Errorf("shallow list after deepening = %v, %v; want none", sh, err)
	}
	if !hasCommitGraph(c.Path()) {
		t.Errorf("the deepened cache has no commit-graph")
	}
	fsck(t, c)
	if got := leftovers(t, dir); len(got) != 0 {
		t.Errorf("cache dir holds %v", got)
	}
}

// TestShallowCacheCommitByID: a commit no ref reaches comes by id at depth 2,
// so that its diff against its parent can be shown.
func TestShallowCacheCommitByID(t *testing.T) {
	f := newFixture(t)
	f.repo.Git("config", "uploadpack.allowAnySHA1InWant", "true")
	s := open(t, t.TempDir(), f.repo.URL(), WithShallow(true))
	if err := s.Ensure(context.Background(), f.dangling); err != nil {
		t.Fatalf("Ensure(dangling id) = %v", err)
	}
	if !s.Partial() {
		t.Error("the cache is not partial after fetching by id")
	}
	if s.Boundary(f.dangling) {
		t.Error("the commit fetched by id is a boundary: its parent is missing")
	}
	if out, errOut, err := gittest.Run(s.Path(), nil, "diff", "--name-only", f.dangling+"^", f.dangling); err != nil || strings.TrimSpace(out) != "gone.txt" {
		t.Errorf("git diff of the commit = %q, %v %s; want gone.txt", out, err, errOut)
	}
}

// TestShallowCacheCommitOfATag: a commit asked for by id that a tag points
// at comes through the tag, at depth 2, from an upstream that does not allow
// fetching by id; the cache stays partial.
func TestShallowCacheCommitOfATag(t *testing.T) {
	f := newFixture(t)
	s := open(t, t.TempDir(), f.repo.URL(), WithShallow(true))
	if err := s.Ensure(context.Background(), f.c3); err != nil {
		t.Fatalf("Ensure(v1.2.0's commit) = %v", err)
	}
	if got := resolveOK(t, s, f.c3); got != f.c3 {
		t.Errorf("Resolve(v1.2.0's commit) = %s", got)
	}
	if got, want := strings.Join(revList(t, s.Path(), "--all"), " "), f.c3+" "+f.c2; got != want || !s.Partial() {
		t.Errorf("the cache holds commits %s (partial %v), want %s at depth 2 and still partial", got, s.Partial(), want)
	}
}

// TestShallowCacheOfShallowUpstream: deepening a partial cache of a shallow
// upstream stops at the upstream's boundary, which stays the end of history.
func TestShallowCacheOfShallowUpstream(t *testing.T) {
	full := gittest.New(t)
	var ids []string
	for i := range 6 {
		full.Write("f.txt", fmt.Sprint(i))
		ids = append(ids, full.Commit(fmt.Sprint("c", i)))
	}
	full.Tag("v1.0.0")
	up := shallowMirror(t, full)
	dir := t.TempDir()
	s := open(t, dir, up.URL(), WithShallow(true))
	if err := s.Ensure(context.Background(), "v1.0.0"); err != nil {
		t.Fatalf("Ensure(v1.0.0) = %v", err)
	}
	s.Close()
	c := open(t, dir, up.URL())
	if c.Partial() {
		t.Fatal("still partial after deepening")
	}
	if got := logIDs(t, c, "v1.0.0"); strings.Join(got, " ") != strings.Join([]string{ids[5], ids[4], ids[3]}, " ") {
		t.Errorf("Log(v1.0.0) = %v, want the mirror's 3 commits", got)
	}
	if !c.Boundary(ids[3]) {
		t.Errorf("the upstream's boundary %s is not the cache's", ids[3])
	}
	fsck(t, c)
}
