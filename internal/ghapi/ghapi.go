package ghapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/patchkit/patchkit/internal/httpguard"
	"github.com/patchkit/patchkit/internal/httpretry"
	"github.com/patchkit/patchkit/internal/untrusted"
)

// Errors that callers branch on; the errors CommitDiff returns wrap them.
var (
	// ErrNotFound: GitHub has no such repository or commit, or the token
	// (if any) cannot see it (HTTP 404).
	ErrNotFound = errors.New("HTTP 404")
	// ErrUnprocessable: GitHub cannot resolve the commit ("No commit found
	// for SHA") or cannot give its diff (HTTP 422).
	ErrUnprocessable = errors.New("HTTP 422")
	// ErrRateLimited: the rate limit held after the retries, or would reset
	// later than the client waits.
	ErrRateLimited = errors.New("rate limit exceeded")
)

// DefaultBaseURL is the GitHub REST API.
const DefaultBaseURL = "https://api.github.com/"

// Defaults of the retry policy.
const (
	DefaultRetries = 3
	DefaultMaxWait = 2 * time.Minute
)

// The bounds of an answer (see docs/reliability.md).
const (
	// DefaultTimeout bounds each request, from connecting to the last byte
	// of its answer (WithTimeout changes it).
	DefaultTimeout = 30 * time.Second
	// MaxAnswer is the longest answer body read: a page of JSON, a diff.
	MaxAnswer = 16 * httpguard.MiB
	// MaxPages is how many pages of a list are read before it is refused:
	// an API whose Link header always names a next page.
	MaxPages = 100
)

// Client gets commit diffs from the GitHub REST API.
type Client struct {
	gh    *github.Client
	token string
	base  string
}

type options struct {
	token      string
	baseURL    string
	httpClient *http.Client
	retries    int
	maxWait    time.Duration
	timeout    time.Duration
	sleep      func(context.Context, time.Duration) error
	now        func() time.Time
}

// Option configures New.
type Option func(*options)

// WithToken authenticates every request with token (a GITHUB_TOKEN, a
// personal access token). The default is anonymous, with GitHub's low rate
// limit. The token is sent only in the Authorization header and is removed
// from every error message.
func WithToken(token string) Option { return func(o *options) { o.token = token } }

// WithBaseURL replaces the API URL (default https://api.github.com/): a
// GitHub Enterprise Server's https://HOST/api/v3, or a test server.
func WithBaseURL(u string) Option { return func(o *options) { o.baseURL = u } }

// WithHTTPClient sends requests through c (its Transport is wrapped for
// retries, the timeout and the size limit; its redirects keep the token at
// the API's origin).
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.httpClient = c } }

// WithTimeout bounds each request, connecting to the last byte of its
// answer, to d (--fetch-timeout); 0 keeps DefaultTimeout. A request given
// up wraps *httpguard.TimeoutError.
func WithTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.timeout = d
		}
	}
}

// WithRetries sets how many times a rate-limited request is retried
// (default DefaultRetries); 0 turns retries off.
func WithRetries(n int) Option { return func(o *options) { o.retries = n } }

// WithMaxWait sets the longest wait before one retry (default
// DefaultMaxWait). A rate limit that resets later fails at once, with
// ErrRateLimited saying when it resets.
func WithMaxWait(d time.Duration) Option { return func(o *options) { o.maxWait = d } }

// withSleep replaces the wait between retries; a test seam.
func withSleep(f func(context.Context, time.Duration) error) Option {
	return func(o *options) { o.sleep = f }
}

// withNow replaces the clock that X-RateLimit-Reset is read against; a test seam.
func withNow(f func() time.Time) Option { return func(o *options) { o.now = f } }

// New returns a Client. A base URL that does not parse as an http(s) URL is
// an error.
func New(opts ...Option) (*Client, error) {
	o := options{baseURL: DefaultBaseURL, retries: DefaultRetries, maxWait: DefaultMaxWait, timeout: DefaultTimeout, sleep: httpretry.Sleep, now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	base, err := url.Parse(o.baseURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("GitHub API URL %q: want an http(s) URL such as %s", o.baseURL, DefaultBaseURL)
	}
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	if o.retries < 0 {
		o.retries = 0
	}
	hc := &http.Client{}
	if o.httpClient != nil {
		cp := *o.httpClient
		hc = &cp
	}
	// Each try is bounded (time, size); the retries wrap the tries; the
	// token is added last, to the requests for the API's own origin only:
	// go-github's WithAuthToken adds it to every request, a redirect to
	// another host included.
	var rt http.RoundTripper = &retryTransport{
		base:    httpguard.Transport(hc.Transport, o.timeout, MaxAnswer, "a GitHub API answer"),
		retries: o.retries, maxWait: o.maxWait, sleep: o.sleep, now: o.now,
	}
	if o.token != "" {
		rt = httpguard.Auth(rt, base, "Authorization", "Bearer "+o.token)
	}
	hc.Transport = rt
	hc.CheckRedirect = httpguard.CheckRedirect
	gh := github.NewClient(hc)
	gh.BaseURL = base
	gh.UserAgent = "patchkit"
	return &Client{gh: gh, token: o.token, base: base.String()}, nil
}

// FromEnv returns a Client configured from the environment, before opts:
// GITHUB_TOKEN (else GH_TOKEN) as the token, and GITHUB_API_URL (set by
// GitHub Actions, also on Enterprise Server) as the base URL.
func FromEnv(opts ...Option) (*Client, error) {
	var env []Option
	if t := os.Getenv("GITHUB_TOKEN"); t != "" {
		env = append(env, WithToken(t))
	} else if t := os.Getenv("GH_TOKEN"); t != "" {
		env = append(env, WithToken(t))
	}
	if u := os.Getenv("GITHUB_API_URL"); u != "" {
		env = append(env, WithBaseURL(u))
	}
	return New(append(env, opts...)...)
}

// CommitDiff returns the diff of commit sha (a full or abbreviated id, or a
// ref) in owner/repo, as GitHub's .diff gives it: the GET
// /repos/{owner}/{repo}/commits/{sha} request with the diff media type
// (go-github's GetCommitRaw with RawOptions{Type: Diff}). A rate limit is
// retried, waiting as Retry-After or X-RateLimit-Reset says.
func (c *Client) CommitDiff(ctx context.Context, owner, repo, sha string) (string, error) {
	for _, s := range []string{owner, repo, sha} {
		if s == "" || strings.ContainsAny(s, "/?#% \t\n") || s == "." || s == ".." {
			return "", fmt.Errorf("GitHub commit %s/%s@%s: bad name %q", owner, repo, sha, s)
		}
	}
	diff, _, err := c.gh.Repositories.GetCommitRaw(ctx, owner, repo, sha, github.RawOptions{Type: github.Diff})
	if err != nil {
		return "", c.scrub(c.classify(fmt.Sprintf("commit %s of %s/%s", sha, owner, repo), err))
	}
	return diff, nil
}

// ErrNotMerged is wrapped by PullMergeCommit's error for a pull request that
// is open or was closed without merging.
var ErrNotMerged = errors.New("pull request not merged")

// PullMergeCommit returns the commit that merged pull request number of
// owner/repo: GitHub's merge_commit_sha of GET /repos/{owner}/{repo}/pulls/{n},
// which is the merge commit, the squashed commit, or the last of the rebased
// commits, as the PR was merged. A PR that is not merged wraps ErrNotMerged;
// the other errors are CommitDiff's.
func (c *Client) PullMergeCommit(ctx context.Context, owner, repo string, number int) (string, error) {
	for _, s := range []string{owner, repo} {
		if s == "" || strings.ContainsAny(s, "/?#% \t\n") || s == "." || s == ".." {
			return "", fmt.Errorf("GitHub pull request %s/%s#%d: bad name %q", owner, repo, number, s)
		}
	}
	if number <= 0 {
		return "", fmt.Errorf("GitHub pull request %s/%s#%d: bad number", owner, repo, number)
	}
	what := fmt.Sprintf("pull request #%d of %s/%s", number, owner, repo)
	pr, _, err := c.gh.PullRequests.Get(ctx, owner, repo, number)
	if err != nil {
		return "", c.scrub(c.classify(what, err))
	}
	sha := pr.GetMergeCommitSHA()
	if !pr.GetMerged() || sha == "" {
		return "", fmt.Errorf("%s is %s: %w", what, pr.GetState(), ErrNotMerged)
	}
	if !fullSHA(sha) {
		return "", fmt.Errorf("%s: GitHub gave merge commit %q, not a commit id", what, sha)
	}
	return sha, nil
}

func fullSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

// classify maps go-github's errors to ErrNotFound, ErrUnprocessable and
// ErrRateLimited with a message that says what to do; what names the thing
// asked for ("commit <id> of owner/repo").
func (c *Client) classify(what string, err error) error {
	var rl *github.RateLimitError
	var abuse *github.AbuseRateLimitError
	var er *github.ErrorResponse
	switch {
	case errors.As(err, &rl):
		hint := ""
		if c.token == "" {
			hint = "; set GITHUB_TOKEN for a higher limit"
		}
		return fmt.Errorf("getting the diff of %s from GitHub: %w (limit %d, resets at %s)%s", what, ErrRateLimited, rl.Rate.Limit, rl.Rate.Reset.Time.UTC().Format(time.RFC3339), hint)
	case errors.As(err, &abuse):
		wait := ""
		if abuse.RetryAfter != nil {
			wait = fmt.Sprintf(", retry after %s", abuse.RetryAfter.Round(time.Second))
		}
		return fmt.Errorf("getting the diff of %s from GitHub: %w (secondary limit%s)", what, ErrRateLimited, wait)
	case errors.As(err, &er) && er.Response != nil:
		msg := strings.TrimSpace(er.Message)
		switch er.Response.StatusCode {
		case http.StatusNotFound:
			hint := ""
			if c.token == "" {
				hint = " (a private repository needs GITHUB_TOKEN)"
			}
			return fmt.Errorf("GitHub has no %s (%w)%s", what, ErrNotFound, hint)
		case http.StatusUnprocessableEntity:
			if msg == "" {
				msg = "Unprocessable Entity"
			}
			return fmt.Errorf("GitHub cannot give the diff of %s (%w: %s)", what, ErrUnprocessable, msg)
		case http.StatusTooManyRequests, http.StatusForbidden:
			if er.Response.StatusCode == http.StatusTooManyRequests || isRateLimitText(msg) {
				return fmt.Errorf("getting the diff of %s from GitHub: %w: %s", what, ErrRateLimited, msg)
			}
		}
		if msg == "" {
			msg = er.Response.Status
		}
		return fmt.Errorf("getting the diff of %s from GitHub: HTTP %d: %s", what, er.Response.StatusCode, msg)
	}
	// The bounds' errors name the URL themselves: not net/http's wrapping.
	var te *httpguard.TimeoutError
	var tl *httpguard.TooLargeError
	switch {
	case errors.As(err, &te):
		err = te
	case errors.As(err, &tl):
		err = tl
	}
	return fmt.Errorf("getting the diff of %s from GitHub: %w", what, err)
}

// scrub removes the token from an error's message, keeping the chain.
func (c *Client) scrub(err error) error {
	if err == nil || c.token == "" || !strings.Contains(err.Error(), c.token) {
		return err
	}
	return &scrubbed{msg: untrusted.Hide(err.Error(), c.token), err: err}
}

type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// ParseRepo returns owner and repo of a github.com repository URL
// (https://github.com/owner/repo[.git], git@github.com:owner/repo.git) or of
// a commit URL on it (https://github.com/owner/repo/commit/<id>). host is
// the web host to accept besides github.com ("" for none): the host of
// GITHUB_SERVER_URL on Enterprise Server.
func ParseRepo(raw, host string) (owner, repo string, ok bool) {
	raw = strings.TrimSpace(raw)
	var h, p string
	switch {
	case strings.Contains(raw, "://"):
		u, err := url.Parse(raw)
		if err != nil {
			return "", "", false
		}
		h, p = u.Hostname(), u.Path
	case strings.HasPrefix(raw, "git@"):
		h, p, _ = strings.Cut(strings.TrimPrefix(raw, "git@"), ":")
	default:
		return "", "", false
	}
	h = strings.ToLower(h)
	if h != "github.com" && h != "www.github.com" && (host == "" || h != strings.ToLower(host)) {
		return "", "", false
	}
	parts := strings.Split(strings.Trim(p, "/"), "/")
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return "", "", false
	}
	return parts[0], strings.TrimSuffix(parts[1], ".git"), true
}

// retryTransport retries requests that hit a rate limit: HTTP 429, or 403
// with X-RateLimit-Remaining: 0, a Retry-After header, or a rate limit
// message. It waits Retry-After seconds, else until X-RateLimit-Reset, else
// 1, 2, 4... seconds; it gives up (passing the last response on) after
// retries, or when the wait would be longer than maxWait.
type retryTransport struct {
	base    http.RoundTripper
	retries int
	maxWait time.Duration
	sleep   func(context.Context, time.Duration) error
	now     func() time.Time
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := t.base.RoundTrip(req.Clone(req.Context()))
		if err != nil {
			return nil, err
		}
		wait, limited := t.rateLimited(resp, attempt)
		if !limited || attempt >= t.retries || wait > t.maxWait {
			return resp, nil
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err := t.sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

// rateLimited reports whether resp is a rate limit, and how long to wait.
func (t *retryTransport) rateLimited(resp *http.Response, attempt int) (time.Duration, bool) {
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
	case http.StatusForbidden:
		if resp.Header.Get("X-RateLimit-Remaining") != "0" && resp.Header.Get("Retry-After") == "" {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(body))
			if !isRateLimitText(string(body)) {
				return 0, false
			}
		}
	default:
		return 0, false
	}
	if wait, ok := httpretry.RetryAfter(resp.Header, t.now()); ok {
		return wait, true
	}
	if v := resp.Header.Get("X-RateLimit-Reset"); v != "" && resp.Header.Get("X-RateLimit-Remaining") == "0" {
		if s, err := strconv.ParseInt(v, 10, 64); err == nil {
			// One second more: the reset time is rounded down.
			return max(time.Unix(s, 0).Sub(t.now()), 0) + time.Second, true
		}
	}
	return time.Duration(1<<min(attempt, 6)) * time.Second, true
}

func isRateLimitText(s string) bool {
	s = strings.ToLower(s)
	return strings.Contains(s, "rate limit")
}
