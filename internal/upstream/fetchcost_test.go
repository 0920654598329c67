package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// fetchTrace is what git reported of one fetch: the git processes it ran
// (their trace2 command names, children included, "upload-pack" for each
// listing), the refs every upload-pack sent, the refs git fetch read, and
// the listings git fetch asked for (protocol v2's ls-refs).
type fetchTrace struct {
	commands []string
	served   int // ref lines the upstream sent, over every listing
	fetched  []string
	lsRefs   int
}

// traceFetches points git's trace variables at files in a temporary
// directory, for the git commands a fetch runs, the listing's upload-pack
// among them (traceEnv), and returns a function that reads what was traced
// since the last call.
func traceFetches(t *testing.T) func() fetchTrace {
	dir := t.TempDir()
	events, packets := filepath.Join(dir, "events"), filepath.Join(dir, "packets")
	vars := []string{"GIT_TRACE2_EVENT=" + events, "GIT_TRACE_PACKET=" + packets}
	traceEnv = vars
	t.Cleanup(func() { traceEnv = nil })
	refLine := regexp.MustCompile(`packet: +(upload-pack>|fetch<) [0-9a-f]{40} (refs/[^\s\x00]+)`)
	lsRefsLine := regexp.MustCompile(`packet: +fetch> command=ls-refs`)
	return func() fetchTrace {
		t.Helper()
		var tr fetchTrace
		ev, _ := os.ReadFile(events)
		for _, line := range strings.Split(string(ev), "\n") {
			var e struct{ Event, Name string }
			if json.Unmarshal([]byte(line), &e) == nil && e.Event == "cmd_name" {
				tr.commands = append(tr.commands, e.Name)
			}
		}
		pk, _ := os.ReadFile(packets)
		tr.lsRefs = len(lsRefsLine.FindAllString(string(pk), -1))
		for _, m := range refLine.FindAllStringSubmatch(string(pk), -1) {
			if strings.HasSuffix(m[2], "^{}") {
				continue // a v0 listing's peeled line, of the ref before it
			}
			if m[1] == "fetch<" {
				tr.fetched = append(tr.fetched, m[2])
			} else {
				tr.served++
			}
		}
		sort.Strings(tr.commands)
		sort.Strings(tr.fetched)
		os.Remove(events)
		os.Remove(packets)
		return tr
	}
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// TestFetchCostsWhatChanged counts, not times, what a fetch into a full
// cache runs. With nothing new upstream: the one listing of the refs and no
// transfer (no git fetch). With one new unrelated commit, tagged: the one
// full listing, then one git fetch that asks the upstream for the objects
// of the two refs that changed (the tag and main) by id, without listing
// the refs again (a round trip), writes the commit-graph itself, a
// layer of one commit on the others, and leaves the two new refs loose
// instead of rewriting packed-refs: no pack-refs, no commit-graph process.
func TestFetchCostsWhatChanged(t *testing.T) {
	f := newFixture(t)
	for i := range 40 {
		f.repo.Git("tag", fmt.Sprintf("old-%02d", i), f.c2)
	}
	c := open(t, t.TempDir(), f.repo.URL())
	upstreamRefs := func() int {
		return len(strings.Fields(f.repo.Git("for-each-ref", "--format=%(refname)")))
	}
	traced := traceFetches(t)
	ctx := context.Background()

	if err := c.Fetch(ctx); err != nil {
		t.Fatalf("Fetch() = %v", err)
	}
	tr := traced()
	if strings.Join(tr.commands, " ") != "upload-pack" || tr.served != upstreamRefs() {
		t.Errorf("a fetch of nothing new ran %q and listed %d refs; want one upload-pack (the listing) listing the upstream's %d refs, and no transfer",
			tr.commands, tr.served, upstreamRefs())
	}

	f.repo.Write("unrelated.txt", "unrelated\n")
	f.repo.Release("unrelated", "v1.3.0")
	if err := c.Fetch(ctx); err != nil {
		t.Fatalf("Fetch() = %v", err)
	}
	tr = traced()
	if n := count(tr.commands, "fetch"); n != 1 {
		t.Errorf("git fetch ran %d times, want 1 (commands: %q)", n, tr.commands)
	}
	if count(tr.commands, "upload-pack") != 2 || count(tr.commands, "pack-refs") != 0 || count(tr.commands, "commit-graph") != 0 {
		t.Errorf("a fetch of one commit ran %q; want two upload-packs (the listing, git fetch's), no pack-refs, no commit-graph", tr.commands)
	}
	if tr.lsRefs != 0 || len(tr.fetched) != 0 {
		t.Errorf("git fetch listed refs %d times and read %q; want no listing (the refs fetched by id)", tr.lsRefs, tr.fetched)
	}
	if tr.served != upstreamRefs() {
		t.Errorf("the upstream sent %d ref lines, want %d: every ref once", tr.served, upstreamRefs())
	}
	layers := chainLayers(t, c.Path())
	if len(layers) < 2 {
		t.Fatalf("commit-graph layers %v, want a new one on the first", layers)
	}
	if n := graphCommits(t, filepath.Join(graphDir(c.Path()), "graph-"+layers[len(layers)-1]+".graph")); n != 1 {
		t.Errorf("the new commit-graph layer holds %d commits, want 1", n)
	}
	if n := looseRefs(c.Path(), 100); n != 2 {
		t.Errorf("%d loose refs, want the 2 the fetch wrote", n)
	}
	if got := resolveOK(t, c, "v1.3.0"); got != f.repo.Head() {
		t.Errorf("Resolve(v1.3.0) = %s, want %s", got, f.repo.Head())
	}
	fsck(t, c)
}

// TestTagGoneBeforeFetch: a tag deleted upstream after the listing named it
// and before git fetch asked for it. git fetch asks for the listed ids (see
// exactSpecs). Over protocol v2 the upstream serves the tag's object, which
// it still has: the run sees the upstream as its one listing did. An
// upstream that no longer has the object (pruned), or a server that speaks
// only v0 and refuses an id no ref points at, fails git fetch: the fetch
// lists the refs again and fetches what the upstream has now, once.
func TestTagGoneBeforeFetch(t *testing.T) {
	for _, tc := range []struct {
		name, protocol    string
		prune             bool
		listings, fetches int
		retractedResolves bool
	}{
		{name: "protocol v2", protocol: "2", listings: 1, fetches: 1, retractedResolves: true},
		{name: "protocol v2, tag object pruned", protocol: "2", prune: true, listings: 2, fetches: 2},
		{name: "protocol v0", protocol: "0", listings: 2, fetches: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			c := open(t, t.TempDir(), f.repo.URL())
			f.repo.Write("unrelated.txt", "unrelated\n")
			kept := f.repo.Release("unrelated", "v1.3.0")
			f.repo.Write("retracted.txt", "retracted\n")
			retracted := f.repo.Release("retracted", "v1.4.0")
			listings := 0
			afterListing = func() {
				if listings++; listings == 1 {
					f.repo.Git("tag", "-d", "v1.4.0")
					if tc.prune {
						f.repo.Git("gc", "-q", "--prune=now")
					}
				}
			}
			t.Cleanup(func() { afterListing = nil })
			traced := traceFetches(t)
			traceEnv = append(traceEnv, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=protocol.version", "GIT_CONFIG_VALUE_0="+tc.protocol)
			if err := c.Fetch(context.Background()); err != nil {
				t.Fatalf("Fetch() = %v", err)
			}
			if listings != tc.listings {
				t.Errorf("the refs were listed %d times, want %d", listings, tc.listings)
			}
			if n := count(traced().commands, "fetch"); n != tc.fetches {
				t.Errorf("git fetch ran %d times, want %d", n, tc.fetches)
			}
			if got := resolveOK(t, c, "v1.3.0"); got != kept {
				t.Errorf("Resolve(v1.3.0) = %s, want %s", got, kept)
			}
			got, err := c.Resolve("v1.4.0")
			switch {
			case tc.retractedResolves && (err != nil || got != retracted):
				t.Errorf("Resolve(v1.4.0) = %v, %v; want %s, as the listing named it", got, err, retracted)
			case !tc.retractedResolves && err == nil:
				t.Errorf("Resolve(v1.4.0) found the tag deleted upstream")
			}
			fsck(t, c)
		})
	}
}

// TestFetchReadsNoPackedRef: a fetch that finds every ref current checks
// that each ref's object is there through the pack indexes, reading none of
// them (an upstream's hundreds of tags each cost go-git an inflate).
func TestFetchReadsNoPackedRef(t *testing.T) {
	f := newFixture(t)
	for i := range 30 {
		f.repo.Git("tag", "-a", "-m", "t", fmt.Sprintf("nightly-%02d", i), f.c2)
	}
	c := open(t, t.TempDir(), f.repo.URL())
	before := hasReads.Load()
	if err := c.Fetch(context.Background()); err != nil {
		t.Fatalf("Fetch() = %v", err)
	}
	if n := hasReads.Load() - before; n != 0 {
		t.Errorf("a fetch of nothing new read %d objects that a pack index lists", n)
	}
}
