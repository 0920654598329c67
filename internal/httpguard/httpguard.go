// Package httpguard bounds what patchkit's HTTP clients take from a server
// and keeps their credentials with the host they are for:
//
//   - Auth adds a credential header only to requests for the one origin
//     (scheme, host and port) it belongs to, so a redirect to any other
//     host, or to plain http, goes without it;
//   - CheckRedirect is every client's redirect policy: at most 10
//     redirects, and the credentials of the request (Authorization,
//     Cookie) dropped when the next hop is another origin;
//   - Transport gives each request a deadline that covers its whole answer,
//     connecting to the last byte of the body (a server that stalls
//     mid-body or trickles is given up, *TimeoutError), and refuses an
//     answer body longer than a limit (*TooLargeError).
//
// Each limit is documented in docs/reliability.md.
package httpguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/patchkit/patchkit/internal/untrusted"
)

// MiB is a mebibyte, the unit of the limits.
const MiB = 1 << 20

// MaxRedirects is how many redirects a client follows (net/http's default).
const MaxRedirects = 10

// TimeoutError is a request given up because its answer was not complete
// within After.
type TimeoutError struct {
	URL   string // redacted
	After time.Duration
	Err   error
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("fetching %s: no complete answer within %s (--fetch-timeout, PATCHKIT_FETCH_TIMEOUT)", e.URL, e.After)
}

func (e *TimeoutError) Unwrap() error { return e.Err }

// Timeout reports that the request was given up for its deadline.
func (e *TimeoutError) Timeout() bool { return true }

// TooLargeError is an answer refused because its body is longer than Limit
// bytes: What says which kind of answer ("a Helm repository index").
type TooLargeError struct {
	URL   string // redacted
	What  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("fetching %s: the answer is larger than %s, the limit for %s: refused", e.URL, Size(e.Limit), e.What)
}

// Size writes n bytes as the limits are written: "64 MiB", "512 KiB".
func Size(n int64) string {
	switch {
	case n >= MiB && n%MiB == 0:
		return fmt.Sprintf("%d MiB", n/MiB)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Redact is the URL as errors show it: without its password, and without
// the run's other secrets.
func Redact(u *url.URL) string { return untrusted.Redact(u.Redacted()) }

// Transport returns inner (http.DefaultTransport if nil) bounded: each
// request's answer must be complete within timeout (0: no deadline of its
// own), and its body at most limit bytes (0: no limit), what naming the
// kind of answer for TooLargeError.
func Transport(inner http.RoundTripper, timeout time.Duration, limit int64, what string) http.RoundTripper {
	if inner == nil {
		inner = http.DefaultTransport
	}
	return &transport{inner: inner, timeout: timeout, limit: limit, what: what}
}

type transport struct {
	inner   http.RoundTripper
	timeout time.Duration
	limit   int64
	what    string
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	parent := req.Context()
	ctx, cancel := context.WithCancel(parent)
	if t.timeout > 0 {
		ctx, cancel = context.WithTimeout(parent, t.timeout)
	}
	resp, err := t.inner.RoundTrip(req.WithContext(ctx))
	if err != nil {
		err = t.timedOut(ctx, parent, req, err)
		cancel()
		return nil, err
	}
	resp.Body = &body{rc: resp.Body, t: t, req: req, ctx: ctx, parent: parent, cancel: cancel, left: t.limit}
	return resp, nil
}

// timedOut is err, or a *TimeoutError when the request's own deadline (not
// the caller's context) ended it.
func (t *transport) timedOut(ctx, parent context.Context, req *http.Request, err error) error {
	if t.timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) && parent.Err() == nil {
		return &TimeoutError{URL: Redact(req.URL), After: t.timeout, Err: err}
	}
	return err
}

type body struct {
	rc     io.ReadCloser
	t      *transport
	req    *http.Request
	ctx    context.Context
	parent context.Context
	cancel context.CancelFunc
	left   int64 // bytes the limit still allows
	err    error // the limit's error, once reached
}

func (b *body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.t.limit > 0 && int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	if b.t.limit > 0 {
		if int64(n) > b.left {
			b.err = &TooLargeError{URL: Redact(b.req.URL), What: b.t.what, Limit: b.t.limit}
			return int(b.left), b.err
		}
		b.left -= int64(n)
	}
	if err != nil && err != io.EOF {
		err = b.t.timedOut(b.ctx, b.parent, b.req, err)
	}
	return n, err
}

func (b *body) Close() error {
	err := b.rc.Close()
	b.cancel()
	return err
}

// Auth returns inner (http.DefaultTransport if nil) setting header to value
// on the requests for origin's scheme, host and port only: a redirect to
// another host, another port, or from https to http goes without it.
func Auth(inner http.RoundTripper, origin *url.URL, header, value string) http.RoundTripper {
	if inner == nil {
		inner = http.DefaultTransport
	}
	return &auth{inner: inner, origin: Origin(origin), header: header, value: value}
}

type auth struct {
	inner         http.RoundTripper
	origin        string
	header, value string
}

func (a *auth) RoundTrip(req *http.Request) (*http.Response, error) {
	if Origin(req.URL) == a.origin {
		req = req.Clone(req.Context())
		req.Header.Set(a.header, a.value)
	}
	return a.inner.RoundTrip(req)
}

// Origin is u's scheme, host and port (the scheme's default port when u
// names none), lowercase: "https://api.github.com:443".
func Origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// CheckRedirect is an http.Client's CheckRedirect: it follows at most
// MaxRedirects redirects, and drops the credentials net/http would carry
// to the next hop (Authorization, Proxy-Authorization, Cookie) when it is
// another origin than the first request's. net/http itself compares host
// names only, without scheme and port.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= MaxRedirects {
		return fmt.Errorf("stopped after %d redirects", MaxRedirects)
	}
	if Origin(req.URL) != Origin(via[0].URL) {
		for _, h := range []string{"Authorization", "Proxy-Authorization", "Cookie"} {
			req.Header.Del(h)
		}
	}
	return nil
}

// Client is an http.Client over Transport(inner, timeout, limit, what)
// whose redirects are CheckRedirect's.
func Client(inner http.RoundTripper, timeout time.Duration, limit int64, what string) *http.Client {
	return &http.Client{Transport: Transport(inner, timeout, limit, what), CheckRedirect: CheckRedirect}
}
