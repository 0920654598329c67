package obsolete_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/cmd/obsolete"
	"github.com/patchkit/patchkit/internal/gittest"
)

// TestUnitsListedConcurrently: a run over six units, each with its own
// upstream served over smart HTTP on loopback, lists the upstreams four at a
// time, never more, and reports exactly what the same run does one upstream
// at a time. The server counts the ref listings in flight; each listing
// waits (up to a minute) until as many as the bound are in flight, so that
// the count reaches the bound whenever the run overlaps that many, however
// slow the machine.
func TestUnitsListedConcurrently(t *testing.T) {
	f := newFixture(t)
	project := t.TempDir()
	var (
		mu             sync.Mutex
		inFlight, peak int
		want           int
		reached        = make(chan struct{})
		reachedOnce    sync.Once
	)
	backend := gittest.HTTPBackend(t, project, "/git")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/info/refs") {
			backend.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		if inFlight >= want {
			reachedOnce.Do(func() { close(reached) })
		}
		mu.Unlock()
		select {
		case <-reached:
		case <-time.After(time.Minute):
		}
		backend.ServeHTTP(w, r)
		mu.Lock()
		inFlight--
		mu.Unlock()
	}))
	defer srv.Close()

	// Six units, each on its own bare copy of the fixture's upstream.
	os.RemoveAll(filepath.Join(f.root, "images", "img"))
	os.RemoveAll(filepath.Join(f.root, "patches", "img"))
	var names []string
	for _, n := range []string{"u1", "u2", "u3", "u4", "u5", "u6"} {
		gittest.Run(project, nil, "clone", "-q", "--bare", f.up.Dir, n+".git")
		f.addImage(t, n, "v1.0.0", map[string]string{"0001-greet.diff": patchGreet, "0002-tool.patch": patchTool})
		spec := filepath.Join(f.root, "images", n, "patchkit.yaml")
		data, err := os.ReadFile(spec)
		must(t, err)
		must(t, os.WriteFile(spec, []byte(strings.Replace(string(data), f.up.URL(), srv.URL+"/git/"+n+".git", 1)), 0o644))
		names = append(names, n)
	}

	run := func(bound int) (string, int) {
		t.Helper()
		defer obsolete.SetListBound(bound)()
		mu.Lock()
		inFlight, peak, want = 0, 0, bound
		reached = make(chan struct{})
		reachedOnce = sync.Once{}
		mu.Unlock()
		code, out, stderr := runPatchkit(t, "--root", f.root, "--cache-dir", t.TempDir(), "-o", "json", "obsolete-check")
		if code != 1 {
			t.Fatalf("bound %d: exit %d, want 1\n%s%s", bound, code, out, stderr)
		}
		mu.Lock()
		defer mu.Unlock()
		return out, peak
	}
	sequential, peak := run(1)
	if peak != 1 {
		t.Errorf("one at a time: %d listings in flight at once", peak)
	}
	concurrent, peak := run(4)
	if peak != 4 {
		t.Errorf("bound 4: %d listings in flight at once, want 4", peak)
	}
	if concurrent != sequential {
		t.Errorf("the concurrent run reports\n%s\nthe sequential one\n%s", concurrent, sequential)
	}
	for _, n := range names {
		if !strings.Contains(sequential, `"image": "`+n+`"`) {
			t.Errorf("no report for %s:\n%s", n, sequential)
		}
	}
}
