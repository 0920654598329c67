package httpguard_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/httpguard"
	"github.com/patchkit/patchkit/internal/httpguard/guardtest"
)

func TestCredentialsStayWithTheirOrigin(t *testing.T) {
	other := guardtest.NewRecorder(t)                                                                  // 127.0.0.2
	samePortless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { // 127.0.0.1, another port
		if r.Header.Get("Authorization") != "" || r.Header.Get("Cookie") != "" {
			t.Errorf("the server on another port got Authorization %q, Cookie %q", r.Header.Get("Authorization"), r.Header.Get("Cookie"))
		}
	}))
	defer samePortless.Close()
	tests := []struct {
		name   string
		target string
	}{
		{"another host", other.URL},
		{"another port of the same host", samePortless.URL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := httptest.NewServer(guardtest.RedirectTo(tt.target))
			defer first.Close()
			base, _ := url.Parse(first.URL)
			c := httpguard.Client(httpguard.Auth(nil, base, "Authorization", "Bearer s3cret"), time.Minute, 1<<20, "a test answer")
			// A header the caller set itself: net/http keeps it for the
			// same host name on another port; CheckRedirect does not.
			req, _ := http.NewRequest(http.MethodGet, first.URL+"/x", nil)
			req.Header.Set("Cookie", "session=s3cret")
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("Do() = %v, want the redirected answer", err)
			}
			resp.Body.Close()
		})
	}
	if n := len(other.Headers()); n != 1 {
		t.Fatalf("the other host got %d requests, want 1", n)
	}
	for _, h := range other.Headers() {
		if h.Get("Authorization") != "" || h.Get("Cookie") != "" {
			t.Errorf("the other host got Authorization %q, Cookie %q, want neither", h.Get("Authorization"), h.Get("Cookie"))
		}
	}
}

func TestAuthReachesItsOrigin(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Get("Authorization") }))
	defer srv.Close()
	base, _ := url.Parse(srv.URL + "/api/v3/")
	resp, err := httpguard.Client(httpguard.Auth(nil, base, "Authorization", "Bearer s3cret"), 0, 0, "").Get(srv.URL + "/other/path")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got != "Bearer s3cret" {
		t.Fatalf("Authorization at its own origin = %q, want the token", got)
	}
}

func TestEndlessBodyIsRefused(t *testing.T) {
	srv := httptest.NewServer(guardtest.Endless("text/plain", "", "x"))
	defer srv.Close()
	c := httpguard.Client(nil, time.Minute, 2<<20, "a test answer")
	resp, err := c.Get(srv.URL + "/big")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	var tl *httpguard.TooLargeError
	if !errors.As(err, &tl) || n != 2<<20 {
		t.Fatalf("reading an endless body = %d bytes, %v; want 2 MiB and a TooLargeError", n, err)
	}
	if msg := err.Error(); !strings.Contains(msg, srv.URL+"/big") || !strings.Contains(msg, "2 MiB") {
		t.Errorf("error = %q, want the URL and the limit", msg)
	}
}

func TestTrickleIsGivenUpAtTheTimeout(t *testing.T) {
	srv := httptest.NewServer(guardtest.Trickle("text/plain", "start", 'x', 20*time.Millisecond))
	defer srv.Close()
	c := httpguard.Client(nil, 300*time.Millisecond, 0, "")
	resp, err := c.Get(srv.URL + "/slow")
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	var te *httpguard.TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("reading a trickle = %v, want a TimeoutError", err)
	}
	if msg := te.Error(); !strings.Contains(msg, srv.URL+"/slow") || !strings.Contains(msg, "300ms") {
		t.Errorf("error = %q, want the URL and the timeout", msg)
	}
}

func TestCallerCancelIsNoTimeout(t *testing.T) {
	srv := httptest.NewServer(guardtest.Trickle("text/plain", "", 'x', 20*time.Millisecond))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := httpguard.Client(nil, time.Hour, 0, "").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	var te *httpguard.TimeoutError
	if err == nil || errors.As(err, &te) {
		t.Fatalf("reading after the caller cancelled = %v, want the cancellation", err)
	}
}
