package upstream

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

// The defaults of a fetch's timeouts (see WithTimeouts).
const (
	// DefaultConnectTimeout bounds opening a connection to the upstream.
	DefaultConnectTimeout = 30 * time.Second
	// DefaultIdleTimeout bounds how long a fetch may go without receiving
	// anything: an answer that never comes, a pack that stalls.
	DefaultIdleTimeout = 60 * time.Second
)

// WithTimeouts sets the fetch timeouts: connect bounds opening a connection,
// idle how long a fetch may receive nothing (the first answer included)
// before it is given up. Zero keeps a default (DefaultConnectTimeout,
// DefaultIdleTimeout).
func WithTimeouts(connect, idle time.Duration) Option {
	return func(o *options) {
		if connect > 0 {
			o.connectTimeout = connect
		}
		if idle > 0 {
			o.idleTimeout = idle
		}
	}
}

func (o *options) timeouts() (connect, idle time.Duration) {
	connect, idle = o.connectTimeout, o.idleTimeout
	if connect <= 0 {
		connect = DefaultConnectTimeout
	}
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	return connect, idle
}

// TimeoutError is a fetch given up because the upstream sent nothing for
// the idle timeout, or did not accept a connection within the connect one.
type TimeoutError struct {
	URL   string // redacted
	After time.Duration
	Err   error
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("fetching %s: no answer for %s (--fetch-timeout, PATCHKIT_FETCH_TIMEOUT): %v", e.URL, e.After, e.Err)
}

func (e *TimeoutError) Unwrap() error { return e.Err }

// transportClient is go-git's client for ep: for http and https one whose
// connections and answers are bounded by the cache's timeouts, and whose
// certificate checks are git fetch's (gitTLS), over the run's shared
// transport for those settings (httpTransport).
func (c *Cache) transportClient(ep *transport.Endpoint) (transport.Transport, error) {
	if ep.Protocol != "http" && ep.Protocol != "https" {
		return client.NewClient(ep)
	}
	connect, idle := c.opts.timeouts()
	t, err := httpTransport(connect, idle)
	if err != nil {
		return nil, err
	}
	return githttp.NewClient(&http.Client{Transport: t}), nil
}

// httpTransports are the http(s) listings' transports, one per setting,
// shared by every cache of the run: the listings of a monorepo's units on
// one host (github.com) reuse its connection, HTTP/2 or kept alive, where
// each paid a TCP and a TLS handshake of its own.
var httpTransports sync.Map // transportKey → *http.Transport

// transportKey is what a transport is made of: the timeouts, and git's TLS
// variables (gitTLS).
type transportKey struct {
	connect, idle time.Duration
	tls           string
}

// httpTransport is the shared transport for the timeouts connect and idle
// and the environment's TLS settings.
func httpTransport(connect, idle time.Duration) (*http.Transport, error) {
	key := transportKey{connect, idle, tlsSettings()}
	if t, ok := httpTransports.Load(key); ok {
		return t.(*http.Transport), nil
	}
	tlsConf, err := gitTLS()
	if err != nil {
		return nil, err
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = connect
	t.ResponseHeaderTimeout = idle
	t.TLSClientConfig = tlsConf
	shared, _ := httpTransports.LoadOrStore(key, t)
	return shared.(*http.Transport), nil
}

// idleWatch kills a git command (its whole process group) when nothing was
// written to it for idle: git fetch --progress writes as bytes arrive.
type idleWatch struct {
	mu      sync.Mutex
	last    time.Time
	stalled bool
}

func (w *idleWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.last = time.Now()
	w.mu.Unlock()
	return len(p), nil
}

// run starts cmd in its own process group and waits for it, killing the
// group when ctx ends or nothing came for idle. stalled reports the latter.
//
// The kernel kills cmd when the thread that started it ends (Pdeathsig),
// which it does when this process dies: the thread stays locked to this
// goroutine until cmd is waited for. A run killed mid-fetch so leaves no
// git fetch writing into a cache that the next run repairs.
func (w *idleWatch) run(ctx context.Context, cmd *exec.Cmd, idle time.Duration) (stalled bool, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	w.last = time.Now()
	if err := cmd.Start(); err != nil {
		return false, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(min(idle/4, time.Second))
	defer tick.Stop()
	kill := func(sig syscall.Signal) { syscall.Kill(-cmd.Process.Pid, sig) }
	for {
		select {
		case err := <-done:
			return w.stalled, err
		case <-ctx.Done():
			kill(syscall.SIGTERM)
			select {
			case err := <-done:
				return false, err
			case <-time.After(5 * time.Second):
				kill(syscall.SIGKILL)
				return false, <-done
			}
		case <-tick.C:
			w.mu.Lock()
			quiet := time.Since(w.last)
			w.mu.Unlock()
			if quiet > idle && !w.stalled {
				w.stalled = true
				kill(syscall.SIGKILL)
			}
		}
	}
}
