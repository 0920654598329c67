package ghapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakePulls is the pulls endpoint of one repository, acme/widget.
type fakePulls struct {
	mu     sync.Mutex
	prs    []map[string]any
	calls  []string
	tokens []string
}

func (f *fakePulls) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, r.Method+" "+r.URL.Path)
	f.tokens = append(f.tokens, r.Header.Get("Authorization"))
	w.Header().Set("Content-Type", "application/json")
	body, _ := io.ReadAll(r.Body)
	var in map[string]any
	_ = json.Unmarshal(body, &in)
	switch {
	case r.Method == "GET" && r.URL.Path == "/repos/acme/widget/pulls":
		var out []map[string]any
		for _, pr := range f.prs {
			if r.URL.Query().Get("head") == "acme:"+pr["head"].(map[string]any)["ref"].(string) {
				out = append(out, pr)
			}
		}
		if out == nil {
			out = []map[string]any{}
		}
		json.NewEncoder(w).Encode(out)
	case r.Method == "POST" && r.URL.Path == "/repos/acme/widget/pulls":
		n := len(f.prs) + 1
		pr := map[string]any{"number": n, "title": in["title"], "body": in["body"], "html_url": fmt.Sprintf("https://github.com/acme/widget/pull/%d", n),
			"head": map[string]any{"ref": in["head"]}, "base": map[string]any{"ref": in["base"]}}
		f.prs = append(f.prs, pr)
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(pr)
	case r.Method == "PATCH" && strings.HasPrefix(r.URL.Path, "/repos/acme/widget/pulls/"):
		var n int
		fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/repos/acme/widget/pulls/"), "%d", &n)
		if n < 1 || n > len(f.prs) {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"message":"Not Found"}`)
			return
		}
		f.prs[n-1]["title"], f.prs[n-1]["body"] = in["title"], in["body"]
		json.NewEncoder(w).Encode(f.prs[n-1])
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"message":"Not Found %s"}`, testToken)
	}
}

func TestEnsurePullRequestOpensThenUpdates(t *testing.T) {
	fake := &fakePulls{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	c, err := New(WithBaseURL(srv.URL), WithToken(testToken), WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := c.EnsurePullRequest(ctx, "acme", "widget", "patchkit/upgrade-demo", "main", "upgrade demo to v1.1.0", "body one")
	if err != nil {
		t.Fatalf("EnsurePullRequest() = %v", err)
	}
	if !first.Created || first.Number != 1 {
		t.Errorf("first EnsurePullRequest() = %+v, want #1 created", first)
	}
	second, err := c.EnsurePullRequest(ctx, "acme", "widget", "patchkit/upgrade-demo", "main", "upgrade demo to v1.2.0", "body two")
	if err != nil {
		t.Fatalf("EnsurePullRequest() again = %v", err)
	}
	if second.Created || second.Number != 1 {
		t.Errorf("second EnsurePullRequest() = %+v, want #1 updated", second)
	}
	if len(fake.prs) != 1 || fake.prs[0]["body"] != "body two" || fake.prs[0]["title"] != "upgrade demo to v1.2.0" {
		t.Errorf("pull requests = %v, want one with the new body", fake.prs)
	}
	for _, tok := range fake.tokens {
		if tok != "Bearer "+testToken {
			t.Errorf("Authorization = %q", tok)
		}
	}
	// another branch opens its own
	other, err := c.EnsurePullRequest(ctx, "acme", "widget", "patchkit/upgrade-other", "main", "t", "b")
	if err != nil || !other.Created || other.Number != 2 {
		t.Errorf("EnsurePullRequest(other branch) = %+v, %v, want #2 created", other, err)
	}
}

func TestEnsurePullRequestErrorHidesToken(t *testing.T) {
	srv := httptest.NewServer(&fakePulls{})
	defer srv.Close()
	c, err := New(WithBaseURL(srv.URL), WithToken(testToken), WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.EnsurePullRequest(context.Background(), "acme", "nosuch", "b", "main", "t", "b")
	if err == nil {
		t.Fatal("EnsurePullRequest(unknown repo) = nil error")
	}
	if strings.Contains(err.Error(), testToken) {
		t.Errorf("error shows the token: %v", err)
	}
}
