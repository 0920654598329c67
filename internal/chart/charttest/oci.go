package charttest

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
)

// OCIRegistry is an in-process OCI registry (go-containerregistry's
// pkg/registry) on loopback that counts the requests it answers and, when
// told to lie, serves every blob with one byte flipped.
type OCIRegistry struct {
	Addr     string // host:port
	requests atomic.Int64
	blobs    atomic.Int64
	lie      atomic.Bool
}

// NewOCIRegistry starts a registry; it stops when the test ends.
func NewOCIRegistry(tb testing.TB) *OCIRegistry {
	tb.Helper()
	r := &OCIRegistry{}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		isBlob := req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/sha256:")
		if isBlob {
			r.blobs.Add(1)
		}
		if !isBlob || !r.lie.Load() {
			reg.ServeHTTP(w, req)
			return
		}
		rec := httptest.NewRecorder()
		reg.ServeHTTP(rec, req)
		body := rec.Body.Bytes()
		if len(body) > 0 {
			body[len(body)/2] ^= 0xff
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(body)
	}))
	tb.Cleanup(srv.Close)
	r.Addr = strings.TrimPrefix(srv.URL, "http://")
	return r
}

// Requests is how many requests the registry has answered.
func (r *OCIRegistry) Requests() int { return int(r.requests.Load()) }

// BlobDownloads is how many of them fetched a blob.
func (r *OCIRegistry) BlobDownloads() int { return int(r.blobs.Load()) }

// Lie makes the registry serve every blob with a byte flipped (its
// digest no longer the one it is asked by), or stop doing so.
func (r *OCIRegistry) Lie(on bool) { r.lie.Store(on) }
