// Package httpretry owns what patchkit's HTTP clients share between two
// tries of a request: the wait that the run's context cuts short, and the
// wait a server asks for in Retry-After. ghapi (GitHub's rate limits) and
// image (a registry's transient failures) each decide when to retry and
// for how long; both wait here.
package httpretry

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Sleep waits d, or until ctx ends, and then returns ctx's error.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// RetryAfter reads a Retry-After header: a whole number of seconds, or an
// HTTP date (the wait from now to it, never negative). It reports false
// when the header is absent or neither.
func RetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}
