package ghapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/httpretry"
)

const (
	testToken = "ghp_TESTTOKENshouldNEVERshow1234"
	testDiff  = "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
	knownSHA  = "635da9cc59aacfe868fd8b43ddccac9c47a9b7a3"
)

// fakeGitHub stands in for the commits endpoint. responses are served in
// order for each request; the last one repeats.
type fakeGitHub struct {
	t         *testing.T
	mu        sync.Mutex
	responses []func(w http.ResponseWriter, r *http.Request)
	requests  []*http.Request
}

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	n := len(f.requests)
	f.requests = append(f.requests, r)
	resp := f.responses[min(n, len(f.responses)-1)]
	f.mu.Unlock()
	if r.URL.Path != "/repos/acme/widget/commits/"+knownSHA {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`)
		return
	}
	resp(w, r)
}

func okDiff(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Accept") != "application/vnd.github.v3.diff" {
		w.WriteHeader(http.StatusNotAcceptable)
		return
	}
	fmt.Fprint(w, testDiff)
}

func status(code int, body string, headers ...string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprint(w, body)
	}
}

// sleeps records the waits instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return nil
}

func TestCommitDiff(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	reset := strconv.FormatInt(now.Add(10*time.Second).Unix(), 10)
	rateLimit403 := status(http.StatusForbidden, `{"message":"API rate limit exceeded for user."}`,
		"X-RateLimit-Limit", "60", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", reset)
	tests := []struct {
		name      string
		sha       string
		responses []func(http.ResponseWriter, *http.Request)
		opts      []Option
		want      string
		wantErr   error
		errText   string
		requests  int
		waits     []time.Duration
	}{
		{name: "ok", sha: knownSHA, responses: resp(okDiff), want: testDiff, requests: 1},
		{name: "404", sha: "0000000000000000000000000000000000000000", responses: resp(okDiff),
			wantErr: ErrNotFound, errText: "GitHub has no commit 0000000000000000000000000000000000000000 of acme/widget", requests: 1},
		{name: "422", sha: knownSHA, responses: resp(status(http.StatusUnprocessableEntity, `{"message":"No commit found for SHA: 635da9cc"}`)),
			wantErr: ErrUnprocessable, errText: "No commit found for SHA: 635da9cc", requests: 1},
		{name: "429 with Retry-After is retried", sha: knownSHA,
			responses: resp(status(http.StatusTooManyRequests, `{"message":"slow down"}`, "Retry-After", "30"), okDiff),
			want:      testDiff, requests: 2, waits: []time.Duration{30 * time.Second}},
		{name: "secondary limit 403 with Retry-After is retried", sha: knownSHA,
			responses: resp(status(http.StatusForbidden, `{"message":"You have exceeded a secondary rate limit.","documentation_url":"https://docs.github.com/rest/overview/resources-in-the-rest-api#secondary-rate-limits"}`, "Retry-After", "7"), okDiff),
			want:      testDiff, requests: 2, waits: []time.Duration{7 * time.Second}},
		{name: "primary limit waits for X-RateLimit-Reset", sha: knownSHA,
			responses: resp(rateLimit403, okDiff),
			want:      testDiff, requests: 2, waits: []time.Duration{11 * time.Second}},
		{name: "retries run out", sha: knownSHA, opts: []Option{WithRetries(2)},
			responses: resp(status(http.StatusTooManyRequests, `{"message":"slow down"}`, "Retry-After", "1")),
			wantErr:   ErrRateLimited, requests: 3, waits: []time.Duration{time.Second, time.Second}},
		{name: "reset too far away", sha: knownSHA, opts: []Option{WithMaxWait(5 * time.Second)},
			responses: resp(rateLimit403),
			wantErr:   ErrRateLimited, errText: "resets at", requests: 1},
		{name: "403 that is not a rate limit", sha: knownSHA,
			responses: resp(status(http.StatusForbidden, `{"message":"Resource not accessible by integration"}`)),
			errText:   "HTTP 403: Resource not accessible by integration", requests: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeGitHub{t: t, responses: tt.responses}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			var sl sleeps
			opts := append([]Option{WithBaseURL(srv.URL), WithToken(testToken), withSleep(sl.sleep), withNow(func() time.Time { return now })}, tt.opts...)
			c, err := New(opts...)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			got, err := c.CommitDiff(context.Background(), "acme", "widget", tt.sha)
			if elapsed := time.Since(start); elapsed > 2*time.Second {
				t.Errorf("CommitDiff took %s; the waits must go through the injected sleep", elapsed)
			}
			switch {
			case tt.wantErr == nil && tt.errText == "":
				if err != nil || got != tt.want {
					t.Errorf("CommitDiff() = %q, %v; want %q", got, err, tt.want)
				}
			default:
				if err == nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.errText) {
					t.Errorf("CommitDiff() error = %v, want %v containing %q", err, tt.wantErr, tt.errText)
				}
			}
			if len(fake.requests) != tt.requests {
				t.Errorf("requests = %d, want %d", len(fake.requests), tt.requests)
			}
			if fmt.Sprint(sl.d) != fmt.Sprint(tt.waits) {
				t.Errorf("waits = %v, want %v", sl.d, tt.waits)
			}
			for _, r := range fake.requests {
				if got := r.Header.Get("Authorization"); got != "Bearer "+testToken {
					t.Errorf("Authorization = %q, want the token", got)
				}
			}
			if err != nil && strings.Contains(err.Error(), testToken) {
				t.Errorf("error shows the token: %v", err)
			}
		})
	}
}

func resp(fs ...func(http.ResponseWriter, *http.Request)) []func(http.ResponseWriter, *http.Request) {
	return fs
}

// TestTokenNeverShows: a server that echoes the Authorization header in its
// messages does not get the token into an error.
func TestTokenNeverShows(t *testing.T) {
	echo := func(code int) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"message":"bad credentials %s"}`, r.Header.Get("Authorization"))
		}
	}
	for _, code := range []int{http.StatusUnprocessableEntity, http.StatusForbidden, http.StatusUnauthorized, http.StatusTooManyRequests, http.StatusInternalServerError} {
		srv := httptest.NewServer(&fakeGitHub{t: t, responses: resp(echo(code))})
		var sl sleeps
		c, err := New(WithBaseURL(srv.URL), WithToken(testToken), withSleep(sl.sleep), WithRetries(1))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.CommitDiff(context.Background(), "acme", "widget", knownSHA)
		srv.Close()
		if err == nil {
			t.Fatalf("HTTP %d: CommitDiff() = nil error", code)
		}
		if strings.Contains(err.Error(), testToken) || !strings.Contains(err.Error(), "***") {
			t.Errorf("HTTP %d: error = %v; want the echoed token replaced by ***", code, err)
		}
	}
}

func TestCommitDiffCancelledWait(t *testing.T) {
	srv := httptest.NewServer(&fakeGitHub{t: t, responses: resp(status(http.StatusTooManyRequests, `{}`, "Retry-After", "60"))})
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	c, err := New(WithBaseURL(srv.URL), withSleep(func(ctx context.Context, d time.Duration) error {
		cancel()
		return httpretry.Sleep(ctx, d)
	}))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := c.CommitDiff(ctx, "acme", "widget", knownSHA); !errors.Is(err, context.Canceled) {
		t.Errorf("CommitDiff() = %v, want context.Canceled", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("a cancelled wait took %s", time.Since(start))
	}
}

func TestFromEnv(t *testing.T) {
	fake := &fakeGitHub{t: t, responses: resp(okDiff)}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	t.Setenv("GITHUB_TOKEN", testToken)
	t.Setenv("GITHUB_API_URL", srv.URL+"/")
	c, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.CommitDiff(context.Background(), "acme", "widget", knownSHA); err != nil || got != testDiff {
		t.Fatalf("CommitDiff() = %q, %v", got, err)
	}
	if got := fake.requests[0].Header.Get("Authorization"); got != "Bearer "+testToken {
		t.Errorf("Authorization = %q", got)
	}
	if _, err := New(WithBaseURL("ftp://example.com")); err == nil {
		t.Errorf("New(ftp URL) = nil error")
	}
	if _, err := c.CommitDiff(context.Background(), "acme", "widget/../x", knownSHA); err == nil {
		t.Errorf("CommitDiff(bad repo) = nil error")
	}
}

func TestParseRepo(t *testing.T) {
	tests := []struct {
		in, host, owner, repo string
		ok                    bool
	}{
		{in: "https://github.com/kubeovn/kube-ovn", owner: "kubeovn", repo: "kube-ovn", ok: true},
		{in: "https://github.com/kubeovn/kube-ovn.git", owner: "kubeovn", repo: "kube-ovn", ok: true},
		{in: "https://x-access-token:abc@github.com/kubeovn/kube-ovn", owner: "kubeovn", repo: "kube-ovn", ok: true},
		{in: "https://github.com/kubeovn/kube-ovn/commit/a229dec3d5150f55ca8344d0e296a8a02d52b726", owner: "kubeovn", repo: "kube-ovn", ok: true},
		{in: "git@github.com:kubeovn/kube-ovn.git", owner: "kubeovn", repo: "kube-ovn", ok: true},
		{in: "https://ghe.example.com/team/tool", host: "ghe.example.com", owner: "team", repo: "tool", ok: true},
		{in: "https://ghe.example.com/team/tool"},
		{in: "https://gitlab.com/group/project"},
		{in: "file:///tmp/upstream"},
		{in: "https://github.com/onlyowner"},
	}
	for _, tt := range tests {
		owner, repo, ok := ParseRepo(tt.in, tt.host)
		if owner != tt.owner || repo != tt.repo || ok != tt.ok {
			t.Errorf("ParseRepo(%q, %q) = %q, %q, %v; want %q, %q, %v", tt.in, tt.host, owner, repo, ok, tt.owner, tt.repo, tt.ok)
		}
	}
}

func TestPullMergeCommit(t *testing.T) {
	const merge = "1111111111111111111111111111111111111111"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/repos/acme/widget/pulls/347":
			fmt.Fprintf(w, `{"number":347,"state":"closed","merged":true,"merge_commit_sha":%q}`, merge)
		case "/repos/acme/widget/pulls/348":
			fmt.Fprint(w, `{"number":348,"state":"open","merged":false,"merge_commit_sha":"2222222222222222222222222222222222222222"}`)
		case "/repos/acme/widget/pulls/349":
			fmt.Fprint(w, `{"number":349,"state":"closed","merged":true,"merge_commit_sha":"::error::x"}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"message":"Not Found"}`)
		}
	}))
	defer srv.Close()
	c, err := New(WithBaseURL(srv.URL), WithToken(testToken))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		n       int
		want    string
		wantErr error
		errText string
	}{
		{n: 347, want: merge},
		{n: 348, wantErr: ErrNotMerged, errText: "pull request #348 of acme/widget is open"},
		{n: 349, errText: "not a commit id"},
		{n: 9, wantErr: ErrNotFound, errText: "GitHub has no pull request #9 of acme/widget"},
		{n: 0, errText: "bad number"},
	}
	for _, tt := range cases {
		t.Run(strconv.Itoa(tt.n), func(t *testing.T) {
			got, err := c.PullMergeCommit(context.Background(), "acme", "widget", tt.n)
			if tt.errText == "" {
				if err != nil || got != tt.want {
					t.Fatalf("PullMergeCommit() = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if err == nil || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) || !strings.Contains(err.Error(), tt.errText) {
				t.Fatalf("PullMergeCommit() error = %v, want %v containing %q", err, tt.wantErr, tt.errText)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Fatalf("the token leaked: %v", err)
			}
		})
	}
}
