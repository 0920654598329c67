package status

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/ghapi"
	"github.com/patchkit/patchkit/internal/obsolete"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
)

// barrierItems holds every lookup until `want` of them are in flight at
// once (then lets all through), and records the most it saw in flight.
type barrierItems struct {
	want    int
	mu      sync.Mutex
	now     int
	most    int
	asked   int
	opened  bool
	reached chan struct{}
}

func (b *barrierItems) Item(ctx context.Context, owner, repo string, n int, pr bool) (ghapi.Item, error) {
	b.mu.Lock()
	b.now++
	b.asked++
	b.most = max(b.most, b.now)
	if b.now == b.want && !b.opened {
		b.opened = true
		close(b.reached)
	}
	b.mu.Unlock()
	defer func() { b.mu.Lock(); b.now--; b.mu.Unlock() }()
	select {
	case <-b.reached:
	case <-ctx.Done():
		return ghapi.Item{}, ctx.Err()
	}
	return ghapi.Item{Number: n, PR: pr, State: "open"}, nil
}

// TestLookupsRunConcurrently: a unit's linked PRs are looked up at once, at
// most MaxLookups at a time, each once: against a GitHub that answers
// nothing until MaxLookups lookups wait together, one lookup after another
// never ends (the context's minute is the guard of a hang, not a timing).
func TestLookupsRunConcurrently(t *testing.T) {
	const diff = "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n"
	var patches []*series.Patch
	for i := 1; i <= 3*MaxLookups; i++ {
		p, err := series.Parse(fmt.Sprintf("%04d.diff", i), []byte(fmt.Sprintf("Subject: s\nOrigin: vendor\nForwarded: https://github.com/o/r/pull/%d\n\n%s", i%(2*MaxLookups)+1, diff)))
		if err != nil {
			t.Fatal(err)
		}
		patches = append(patches, p)
	}
	items := &barrierItems{want: MaxLookups, reached: make(chan struct{})}
	o := Options{GitHub: Memo(items)}
	in := UnitInput{Spec: &spec.Spec{Upstream: spec.Upstream{URL: "https://github.com/o/r", Releases: "v*"}}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prefetch(ctx, in, o, patches)
	for _, p := range patches {
		if u, _ := link(ctx, in, o, p, &obsolete.PatchReport{}); u.State != "open" {
			t.Fatalf("link(%s) = %s (%s), want open", p.Path, u.State, u.Note)
		}
	}
	if items.most > MaxLookups || items.most < MaxLookups {
		t.Errorf("at most %d lookups were in flight at once, want %d", items.most, MaxLookups)
	}
	if items.asked != 2*MaxLookups {
		t.Errorf("GitHub was asked %d times, want %d (each PR once)", items.asked, 2*MaxLookups)
	}
}
