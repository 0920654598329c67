// Package guardtest has the hostile servers the tests of patchkit's HTTP
// clients run against, on loopback: one that records the headers it got
// (on another host than the first server: 127.0.0.2), a body that never
// ends, one that trickles, and a way to run a test in a child process
// under a memory limit, so that an unbounded read fails the test and not
// the machine.
package guardtest

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Recorder is a server that answers 200 "ok" and keeps the headers of
// every request it got.
type Recorder struct {
	*httptest.Server
	mu  sync.Mutex
	got []http.Header
}

// NewRecorder starts a Recorder on 127.0.0.2, another host name than
// httptest's 127.0.0.1 (net/http compares host names, not ports, when it
// decides what a redirect keeps). A machine without 127.0.0.2 skips the test.
func NewRecorder(t testing.TB) *Recorder {
	t.Helper()
	return NewRecorderAt(t, "127.0.0.2:0")
}

// NewRecorderAt starts a Recorder listening on addr: "127.0.0.1:0" is
// another origin of the same host name (a client that refuses redirects
// to another private host still follows it).
func NewRecorderAt(t testing.TB, addr string) *Recorder {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening on the loopback address %s: %v", addr, err)
	}
	r := &Recorder{}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.got = append(r.got, req.Header.Clone())
		r.mu.Unlock()
		w.Write([]byte("ok"))
	}))
	r.Server.Listener.Close()
	r.Server.Listener = l
	r.Start()
	t.Cleanup(r.Close)
	return r
}

// Headers are the headers of the requests the Recorder got, in order.
func (r *Recorder) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.got...)
}

// RedirectTo is a handler that answers every request with 302 to target
// and the request's path.
func RedirectTo(target string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, strings.TrimSuffix(target, "/")+r.URL.Path, http.StatusFound)
	}
}

// Endless is a handler whose 200 answer starts with prefix and then never
// ends (repeating fill), until the client goes away.
func Endless(contentType, prefix, fill string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Write([]byte(prefix))
		chunk := bytes.Repeat([]byte(fill), max(1, 64<<10/len(fill)))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}
}

// Trickle is a handler whose 200 answer starts with prefix and then sends
// one byte of fill every interval, never ending, until the client goes away.
func Trickle(contentType, prefix string, fill byte, every time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Write([]byte(prefix))
		w.(http.Flusher).Flush()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
				if _, err := w.Write([]byte{fill}); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}
	}
}

// childEnv marks the child process RunLimited starts.
const childEnv = "PATCHKIT_GUARDTEST_CHILD"

// Child reports whether this test runs as RunLimited's child.
func Child() bool { return os.Getenv(childEnv) == "1" }

// Headroom is the address space a limited test may use beyond what the
// test binary reserves before it reads anything (a Go 1.26 binary
// reserves about 1.5 GiB it never touches): a bounded read stays well
// within it, an unbounded read of an endless answer goes past it in
// seconds.
const Headroom = 1 << 30

// RunLimited runs the test named t.Name() again in a child process of the
// test binary whose address space is limited (prlimit --as) to what this
// process has reserved (its VmSize, the same binary's baseline) plus
// headroom, and fails t with the child's output if the child fails: an
// unbounded read dies there with "out of memory". The test calls it first
// and returns when it reports true; in the child it reports false and the
// test does its work. Without prlimit, the work runs in this process.
func RunLimited(t *testing.T, headroom int64) bool {
	t.Helper()
	if Child() {
		return false
	}
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Logf("no prlimit (%v): running without a memory limit", err)
		return false
	}
	limit := vmSize() + headroom
	cmd := exec.Command(prlimit, fmt.Sprintf("--as=%d", limit), os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"=1", "GOMAXPROCS=2")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s under a %d MiB address space limit: %v\n%s", t.Name(), limit>>20, err, tail(out))
	}
	if !bytes.Contains(out, []byte("--- PASS: "+t.Name())) {
		t.Fatalf("%s under a memory limit did not pass:\n%s", t.Name(), tail(out))
	}
	return true
}

// vmSize is this process's address space in bytes (2 GiB when /proc does
// not say).
func vmSize() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "VmSize:"); ok {
				var kb int64
				if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb); err == nil && kb > 0 {
					return kb << 10
				}
			}
		}
	}
	return 2 << 30
}

// tail is the start of out (where a runtime's fatal error is) and its end.
func tail(b []byte) []byte {
	if len(b) > 6000 {
		return append(append(b[:3000:3000], "\n...\n"...), b[len(b)-3000:]...)
	}
	return b
}
