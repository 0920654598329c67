package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/patchkit/patchkit/internal/httpretry"
)

// The defaults of a registry's timeouts and retries (see NewRegistry).
const (
	// DefaultRequestTimeout bounds connecting to the registry and waiting
	// for the headers of each answer.
	DefaultRequestTimeout = 30 * time.Second
	// DefaultPushTimeout bounds a whole push, its retries and the readback.
	DefaultPushTimeout = 10 * time.Minute
	// DefaultAttempts is how many times a request (and a push) is tried.
	DefaultAttempts = 5
	// DefaultBackoff is the first wait before a retry; each next one doubles.
	DefaultBackoff = time.Second
	// MaxBackoff caps a wait, a Retry-After included.
	MaxBackoff = 30 * time.Second
)

// httpTransport is the registry's HTTP transport: it gives up on a
// connection that does not open within connect, and on an answer whose
// headers do not come within header (0: no limit).
func httpTransport(connect, header time.Duration) *http.Transport {
	t := remote.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = connect
	t.ResponseHeaderTimeout = header
	return t
}

// sleeper waits d or until ctx ends; the tests' seam records the waits.
type sleeper func(ctx context.Context, d time.Duration) error

// backoff is the wait before retry n (1-based): first, doubling each
// time, never more than limit.
func backoff(first, limit time.Duration, n int) time.Duration {
	d := first
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// retryTransport retries each request that failed transiently (see
// transientResponse) up to attempts times, rewinding its body. It waits
// backoff(first, limit, n) between tries, or what a 429 or 503's
// Retry-After asks, up to limit.
type retryTransport struct {
	inner    http.RoundTripper
	attempts int
	first    time.Duration
	limit    time.Duration
	sleep    sleeper
}

var _ http.RoundTripper = (*retryTransport)(nil)

// RoundTrip implements http.RoundTripper.
func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rewindable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	ctx := req.Context()
	last := "" // the previous try's failure
	for n := 1; ; n++ {
		try := req
		if n > 1 && req.Body != nil && req.Body != http.NoBody {
			body, err := req.GetBody()
			if err != nil {
				return nil, fmt.Errorf("rewinding the request body: %w", err)
			}
			try = req.Clone(ctx)
			try.Body = body
		}
		resp, err := t.inner.RoundTrip(try)
		if resp == nil && !idempotent(req) && !dialError(err) {
			// Sent, perhaps acted on: the caller retries the step.
			return nil, err
		}
		if !transientResponse(resp, err) || !rewindable || n >= t.attempts || ctx.Err() != nil {
			if err != nil && last != "" && ctx.Err() != nil {
				err = fmt.Errorf("%s, then %w", last, err)
			}
			if err != nil {
				err = &settled{err}
			}
			return resp, err
		}
		wait := backoff(t.first, t.limit, n)
		if resp != nil {
			if ra, ok := httpretry.RetryAfter(resp.Header, time.Now()); ok {
				wait = min(ra, t.limit)
			}
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
		last = fmt.Sprintf("%s %s: %s", req.Method, req.URL.Redacted(), describe(resp, err))
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return nil, &settled{fmt.Errorf("%s, and the push timeout ends before the next try: %w", last, context.DeadlineExceeded)}
		}
		if err := t.sleep(ctx, wait); err != nil {
			return nil, &settled{fmt.Errorf("%s, then %w", last, err)}
		}
	}
}

// settled is a request error the transport already retried as far as it
// should: no step above retries it again (see stepRetry).
type settled struct{ err error }

func (e *settled) Error() string { return e.err.Error() }
func (e *settled) Unwrap() error { return e.err }

// stepRetry is go-containerregistry's retry predicate, for a blob upload
// or manifest PUT as a whole: it retries what the transport left to it, a
// non-idempotent request cut after it was sent, and a registry that lost
// the upload session; not what the transport already retried.
func stepRetry(err error) bool {
	var s *settled
	if err == nil || errors.As(err, &s) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return uploadLost(err) || transientNet(err)
}

// idempotent reports whether sending req twice does what sending it once
// does. A blob upload's POST, PATCH and PUT are not: a registry that acted
// on one whose answer was lost refuses the repeat, so only the whole push
// is retried then.
func idempotent(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	case http.MethodPut:
		return !strings.Contains(req.URL.Path, "/blobs/uploads/")
	}
	return false
}

// dialError reports whether err happened before the request was sent.
func dialError(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}

// describe names a failed try: its status or its error.
func describe(resp *http.Response, err error) string {
	if resp != nil {
		return resp.Status
	}
	return err.Error()
}

// transientResponse reports whether a request's outcome may differ on a
// next try: a 408, 429, 500, 502, 503 or 504 answer; a refused, reset or
// cut connection; a timeout. A cancelled request is not.
func transientResponse(resp *http.Response, err error) bool {
	if err != nil {
		return transientNet(err)
	}
	switch resp.StatusCode {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// transientNet reports whether a network error may go away on its own.
// Callers check their context first: net/http's timeouts are also
// context.DeadlineExceeded.
func transientNet(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	// net/http's "timeout awaiting response headers" has Timeout but is
	// no net.Error.
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}
