package ghapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/httpguard"
	"github.com/patchkit/patchkit/internal/httpguard/guardtest"
)

// The API answering 302 to another host: the redirected request must go
// without the token (go-github's WithAuthToken sent it).
func TestTokenStaysWithTheAPIHost(t *testing.T) {
	other := guardtest.NewRecorder(t)
	api := httptest.NewServer(guardtest.RedirectTo(other.URL))
	defer api.Close()
	tests := []struct {
		name string
		call func(*Client) error
	}{
		{"pull request", func(c *Client) error {
			_, err := c.Item(context.Background(), "o", "r", 7, true)
			return err
		}},
		{"commit diff", func(c *Client) error {
			_, err := c.CommitDiff(context.Background(), "o", "r", "abc123")
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(WithBaseURL(api.URL), WithToken(testToken), WithRetries(0))
			if err != nil {
				t.Fatal(err)
			}
			tt.call(c) // the other host's "ok" is no answer of GitHub's: any outcome
		})
	}
	got := other.Headers()
	if len(got) != len(tests) {
		t.Fatalf("the other host got %d requests, want %d (the redirects were not followed)", len(got), len(tests))
	}
	for i, h := range got {
		if a := h.Get("Authorization"); a != "" {
			t.Errorf("request %d to the other host had Authorization %q, want none", i, a)
		}
	}
}

// The token still reaches the API itself.
func TestTokenReachesTheAPI(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization"))
		fmt.Fprint(w, `{"number":7,"state":"open"}`)
	}))
	defer srv.Close()
	c, err := New(WithBaseURL(srv.URL+"/api/v3"), WithToken(testToken))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Item(context.Background(), "o", "r", 7, true); err != nil {
		t.Fatal(err)
	}
	if a, _ := got.Load().(string); a != "Bearer "+testToken {
		t.Fatalf("Authorization at the API = %q, want the token", a)
	}
}

// An endless JSON answer is refused at MaxAnswer, under a memory limit
// that an unbounded read exceeds.
func TestEndlessAnswerIsRefused(t *testing.T) {
	if guardtest.RunLimited(t, guardtest.Headroom) {
		return
	}
	srv := httptest.NewServer(guardtest.Endless("application/json", `{"number":7,"title":"`, "x"))
	defer srv.Close()
	c, err := New(WithBaseURL(srv.URL), WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Item(context.Background(), "o", "r", 7, true)
	var tl *httpguard.TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("Item() on an endless answer = %v, want a TooLargeError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, srv.URL+"/repos/o/r/pulls/7") || !strings.Contains(msg, "16 MiB") {
		t.Errorf("Item() error = %q, want the URL and the limit", msg)
	}
}

// An issue list whose Link header always names a next page ends at
// MaxPages (the server fails the requests past 150, so that the old
// endless loop ends too).
func TestEndlessPagingIsBounded(t *testing.T) {
	var n atomic.Int64
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			t.Errorf("%s %s: want only listing", r.Method, r.URL)
			http.Error(w, "no", http.StatusTeapot)
			return
		}
		k := n.Add(1)
		if k > 150 {
			http.Error(w, "too many requests for this test", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Link", fmt.Sprintf(`<%s/repos/o/r/issues?page=%d>; rel="next"`, srv.URL, k+1))
		fmt.Fprint(w, `[{"number":1,"title":"something else"}]`)
	}))
	defer srv.Close()
	c, err := New(WithBaseURL(srv.URL), WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.UpsertIssue(context.Background(), "o", "r", "patchkit status", "body")
	if err == nil || !strings.Contains(err.Error(), "after 100 pages") || !strings.Contains(err.Error(), srv.URL+"/repos/o/r/issues") {
		t.Fatalf("UpsertIssue() on endless paging = %v, want the page limit and the URL", err)
	}
	if got := n.Load(); got != MaxPages {
		t.Errorf("UpsertIssue() made %d requests, want %d", got, MaxPages)
	}
}

// An answer that trickles a byte at a time is given up at the timeout.
func TestTrickleIsGivenUpAtTheTimeout(t *testing.T) {
	srv := httptest.NewServer(guardtest.Trickle("application/json", `{"number":7,"title":"`, 'x', 20*time.Millisecond))
	defer srv.Close()
	c, err := New(WithBaseURL(srv.URL), WithRetries(0), WithTimeout(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Item(context.Background(), "o", "r", 7, true)
	var te *httpguard.TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("Item() on a trickle = %v, want a TimeoutError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, srv.URL+"/repos/o/r/pulls/7") || !strings.Contains(msg, "300ms") {
		t.Errorf("Item() error = %q, want the URL and the timeout", msg)
	}
}
