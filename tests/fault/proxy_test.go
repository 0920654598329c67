package fault

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// TestUpstreamThroughHTTPProxy: a CI job that reaches its upstreams only
// through an HTTP proxy (http_proxy and HTTP_PROXY, as curl, and so git,
// and Go read them) lists and fetches through it. The upstream's host
// (upstream.invalid) resolves nowhere, so nothing but the proxy can reach
// it: the verdicts match git apply --check's, and the proxy saw the
// listing and git fetch's negotiation.
func TestUpstreamThroughHTTPProxy(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	var proxy *httptest.Server
	p := newProject(t, func(up *gittest.Repo) string {
		backend := gittest.HTTPBackend(t, filepath.Dir(up.Dir), "")
		proxy = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, r.Method+" "+r.URL.String())
			mu.Unlock()
			if !r.URL.IsAbs() || r.URL.Host != "upstream.invalid" {
				http.Error(w, "not a proxy request for upstream.invalid", http.StatusBadRequest)
				return
			}
			backend.ServeHTTP(w, r)
		}))
		t.Cleanup(proxy.Close)
		return "http://upstream.invalid/" + filepath.Base(up.Dir)
	})
	for _, ref := range []string{"v1.0.0", "v2.0.0"} {
		cmd := p.cmd("apply", "app", "--check", "--ref", ref)
		cmd.Env = append(cmd.Env, "http_proxy="+proxy.URL, "HTTP_PROXY="+proxy.URL, "no_proxy=", "NO_PROXY=")
		wantVerdict(t, runGuarded(t, cmd), p.oracle(t, ref), "through the proxy at "+ref)
	}
	mu.Lock()
	defer mu.Unlock()
	listed, fetched := 0, 0
	for _, s := range seen {
		switch {
		case strings.HasPrefix(s, "GET ") && strings.Contains(s, "/info/refs?service=git-upload-pack"):
			listed++
		case strings.HasPrefix(s, "POST ") && strings.HasSuffix(s, "/git-upload-pack"):
			fetched++
		}
	}
	// Each run lists (patchkit, then git fetch when it fetches); the first
	// run clones, the second fetches nothing new or by id.
	if listed < 2 || fetched < 1 {
		t.Errorf("the proxy saw %d listings and %d negotiations (%q); want the listing and git fetch to go through it", listed, fetched, seen)
	}
}
