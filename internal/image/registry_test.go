package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

func TestTransient(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"503", &transport.Error{StatusCode: 503}, true},
		{"500 wrapped", fmt.Errorf("put: %w", &transport.Error{StatusCode: 500}), true},
		{"429", &transport.Error{StatusCode: 429}, true},
		{"401", &transport.Error{StatusCode: 401}, false},
		{"404", &transport.Error{StatusCode: 404}, false},
		{"refused", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{"reset", fmt.Errorf("x: %w", syscall.ECONNRESET), true},
		{"cut", io.ErrUnexpectedEOF, true},
		{"cancelled", context.Canceled, false},
		{"other", errors.New("manifest invalid"), false},
	}
	for _, tt := range tests {
		if got := Transient(tt.err); got != tt.want {
			t.Errorf("Transient(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// flaky answers 503 to the first n requests, then serves the registry.
func flaky(n int32, next http.Handler) (http.Handler, *atomic.Int32) {
	var seen atomic.Int32
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen.Add(1) <= n {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r)
	}), &seen
}

func randomResult(t *testing.T) *Result {
	img, err := random.Image(1024, 2)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	return &Result{Image: img, Digest: d, Builder: "native"}
}

// TestRegistryRetries5xx: ggcr's in-process registry behind a handler that
// fails the first requests; the push is retried and lands.
func TestRegistryRetries5xx(t *testing.T) {
	h, seen := flaky(3, registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	srv := httptest.NewServer(h)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	r, err := NewRegistry(host+"/greeter", WithRetry(5, time.Millisecond), WithAuth(authn.Anonymous))
	if err != nil {
		t.Fatal(err)
	}
	res := randomResult(t)
	pub, err := r.Publish(context.Background(), res, "v1.0.0")
	if err != nil {
		t.Fatalf("Publish() error = %v, want it retried past the 503s", err)
	}
	if seen.Load() <= 3 || pub.Reference != host+"/greeter:v1.0.0@"+res.Digest.String() {
		t.Errorf("Publish() = %+v after %d requests", pub, seen.Load())
	}
	got, err := Fetch(context.Background(), host+"/greeter:v1.0.0")
	if err != nil || got != res.Digest {
		t.Errorf("Fetch() = %s, %v; want %s", got, err, res.Digest)
	}
}

// TestRegistryGivesUp: a registry that answers 503 to everything gets each
// request tried 3 times and the push 3 times, with waits that double from
// the first, and the error says so.
func TestRegistryGivesUp(t *testing.T) {
	h, seen := flaky(1000, http.NotFoundHandler())
	srv := httptest.NewServer(h)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	var waits []time.Duration
	rec := func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	r, _ := NewRegistry(host+"/greeter", WithRetry(3, time.Second), WithAuth(authn.Anonymous), withSleep(rec))
	_, err := r.Publish(context.Background(), randomResult(t), "v1")
	if err == nil || !strings.Contains(err.Error(), "gave up after 3 attempts") || !strings.Contains(err.Error(), "503") {
		t.Fatalf("Publish() error = %v, want gave up after 3 attempts, with the 503", err)
	}
	if n := seen.Load(); n != 9 {
		t.Errorf("registry saw %d requests, want 3 tries of the ping for each of 3 pushes (9)", n)
	}
	s := time.Second
	want := []time.Duration{s, 2 * s, s, s, 2 * s, 2 * s, s, 2 * s}
	if fmt.Sprint(waits) != fmt.Sprint(want) {
		t.Errorf("waits = %v, want %v (each request's, then the push's, doubling)", waits, want)
	}
}

// TestRetryWaits: the waits between the tries of one request double from
// the first up to MaxBackoff, and a Retry-After is honoured up to it.
func TestRetryWaits(t *testing.T) {
	s := time.Second
	tests := []struct {
		name       string
		first      time.Duration
		retryAfter string
		want       []time.Duration
	}{
		{"doubling", s, "", []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s}},
		{"capped", 10 * s, "", []time.Duration{10 * s, 20 * s, MaxBackoff, MaxBackoff, MaxBackoff}},
		{"retry-after", s, "7", []time.Duration{7 * s, 7 * s, 7 * s, 7 * s, 7 * s}},
		{"retry-after capped", s, "3600", []time.Duration{MaxBackoff, MaxBackoff, MaxBackoff, MaxBackoff, MaxBackoff}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seen.Add(1)
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
					w.WriteHeader(http.StatusTooManyRequests)
					return
				}
				w.WriteHeader(http.StatusServiceUnavailable)
			}))
			defer srv.Close()
			var waits []time.Duration
			rt := &retryTransport{inner: http.DefaultTransport, attempts: 6, first: tt.first, limit: MaxBackoff,
				sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
			req, _ := http.NewRequest(http.MethodPut, srv.URL+"/v2/x/manifests/v1", strings.NewReader("{}"))
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if seen.Load() != 6 || fmt.Sprint(waits) != fmt.Sprint(tt.want) {
				t.Errorf("%d tries, waits %v; want 6 tries, waits %v", seen.Load(), waits, tt.want)
			}
		})
	}
}

func TestRegistryPermanentErrorNotRetried(t *testing.T) {
	var seen atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}`)
	}))
	defer srv.Close()
	r, _ := NewRegistry(strings.TrimPrefix(srv.URL, "http://")+"/greeter", WithRetry(5, time.Millisecond), WithAuth(authn.Anonymous))
	_, err := r.Publish(context.Background(), randomResult(t), "v1")
	if err == nil || strings.Contains(err.Error(), "gave up") || seen.Load() != 1 {
		t.Errorf("Publish() error = %v after %d requests, want one denied request", err, seen.Load())
	}
}

func TestRegistryDown(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	r, _ := NewRegistry(addr+"/greeter", WithRetry(3, time.Millisecond), WithAuth(authn.Anonymous))
	_, err := r.Publish(context.Background(), randomResult(t), "v1")
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "is the registry running") {
		t.Errorf("Publish() error = %v, want a refused connection and a hint", err)
	}
}

func TestRegistryCancelledDuringBackoff(t *testing.T) {
	h, _ := flaky(1000, http.NotFoundHandler())
	srv := httptest.NewServer(h)
	defer srv.Close()
	r, _ := NewRegistry(strings.TrimPrefix(srv.URL, "http://")+"/greeter", WithRetry(10, time.Hour), WithAuth(authn.Anonymous))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := r.Publish(ctx, randomResult(t), "v1")
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
		t.Errorf("Publish() error = %v after %v, want the context's end promptly", err, time.Since(start))
	}
}

// TestRegistryAlreadyPushed: an image the docker builder pushed is read
// back, not pushed again.
func TestRegistryAlreadyPushed(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	res := randomResult(t)
	ref, _ := name.NewTag(host + "/greeter:v1")
	if err := remote.Write(ref, res.Image); err != nil {
		t.Fatal(err)
	}
	pushed := &Result{Digest: res.Digest, Pushed: ref.String(), Builder: "docker"}
	r, _ := NewRegistry(host+"/greeter", WithAuth(authn.Anonymous))
	if _, err := r.Publish(context.Background(), pushed, "v1"); err != nil {
		t.Errorf("Publish(pushed) error = %v", err)
	}
	other := randomResult(t)
	pushed.Digest = other.Digest
	if _, err := r.Publish(context.Background(), pushed, "v1"); !errors.Is(err, ErrReadBack) {
		t.Errorf("Publish(wrong digest) error = %v, want ErrReadBack", err)
	}
	if _, err := r.Publish(context.Background(), pushed, "v2"); err == nil || !strings.Contains(err.Error(), "pushed to") {
		t.Errorf("Publish(other tag) error = %v, want a mismatch", err)
	}
}

func TestLayoutPublisher(t *testing.T) {
	dir := t.TempDir() + "/oci"
	l, err := NewLayout(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, b := randomResult(t), randomResult(t)
	for _, step := range []struct {
		res *Result
		tag string
	}{{a, "v1"}, {b, "v2"}, {b, "v1"}} {
		pub, err := l.Publish(ctx, step.res, step.tag)
		if err != nil {
			t.Fatal(err)
		}
		if pub.Reference != "oci:"+dir+":"+step.tag+"@"+step.res.Digest.String() {
			t.Errorf("Publish() reference = %s", pub.Reference)
		}
	}
	for tag, want := range map[string]*Result{"v1": b, "v2": b} {
		img, err := ReadLayout(dir, tag)
		if err != nil {
			t.Fatalf("ReadLayout(%s) error = %v", tag, err)
		}
		if d, _ := img.Digest(); d != want.Digest {
			t.Errorf("ReadLayout(%s) = %s, want %s", tag, d, want.Digest)
		}
	}
	if _, err := ReadLayout(dir, "v3"); err == nil {
		t.Error("ReadLayout(v3) error = nil, want no such tag")
	}
}

func TestMulti(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	reg, _ := NewRegistry(host+"/greeter", WithAuth(authn.Anonymous))
	lay, _ := NewLayout(t.TempDir())
	res := randomResult(t)
	pub, err := Multi(reg, lay).Publish(context.Background(), res, "v1")
	if err != nil || pub.Reference != host+"/greeter:v1@"+res.Digest.String() {
		t.Fatalf("Multi().Publish() = %+v, %v; want the registry's reference", pub, err)
	}
	if _, err := ReadLayout(lay.Dir(), "v1"); err != nil {
		t.Errorf("the layout lacks v1: %v", err)
	}
}

// TestRegistryComesUp: the registry refuses connections at first (it is
// still starting), then answers; the push is retried until it lands.
func TestRegistryComesUp(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	up := make(chan *httptest.Server, 1)
	go func() {
		time.Sleep(150 * time.Millisecond)
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			up <- nil
			return
		}
		srv := httptest.NewUnstartedServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
		srv.Listener = ln
		srv.Start()
		up <- srv
	}()
	r, _ := NewRegistry(addr+"/greeter", WithRetry(8, 50*time.Millisecond), WithAuth(authn.Anonymous))
	res := randomResult(t)
	_, err := r.Publish(context.Background(), res, "v1")
	if srv := <-up; srv != nil {
		defer srv.Close()
	} else {
		t.Fatalf("could not listen on %s again", addr)
	}
	if err != nil {
		t.Fatalf("Publish() error = %v, want it retried until the registry came up", err)
	}
	if got, err := Fetch(context.Background(), addr+"/greeter:v1"); err != nil || got != res.Digest {
		t.Errorf("Fetch() = %s, %v; want %s", got, err, res.Digest)
	}
}
