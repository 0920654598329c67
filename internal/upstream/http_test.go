package upstream

import (
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

const (
	tokenUser = "x-access-token"
	token     = "ghs_s3cr3tT0kenValue"
)

// httpUpstream serves f's repository over smart HTTP with git http-backend,
// in process on loopback, and requires basic auth with the token.
func httpUpstream(t *testing.T, f *fixture) (base string, seenAuth *bool) {
	t.Helper()
	backend := gittest.HTTPBackend(t, filepath.Dir(f.repo.Dir), "/git")
	seen := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != tokenUser || p != token {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		seen = true
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &seen
}

func withToken(base, user, pass string) string {
	return strings.Replace(base, "http://", "http://"+user+":"+pass+"@", 1)
}

func TestTokenNeverShown(t *testing.T) {
	f := newFixture(t)
	base, seenAuth := httpUpstream(t, f)
	repoPath := "/git/" + filepath.Base(f.repo.Dir)
	url := withToken(base, tokenUser, token) + repoPath
	dir := t.TempDir()

	c := open(t, dir, url)
	if !*seenAuth {
		t.Fatal("the server never saw the credentials")
	}
	if got := resolveOK(t, c, "v1.2.0"); got != f.c3 {
		t.Errorf("Resolve(v1.2.0) over http = %s, want %s", got, f.c3)
	}
	if strings.Contains(c.Path(), token) || strings.Contains(c.Path(), tokenUser) {
		t.Errorf("Path() = %s holds the credentials", c.Path())
	}
	if strings.Contains(c.URL(), token) {
		t.Errorf("URL() = %s holds the token", c.URL())
	}

	errs := []struct {
		name string
		run  func() error
	}{
		{name: "Resolve missing", run: func() error { _, err := c.Resolve("v9"); return err }},
		{name: "Resolve abbreviated", run: func() error { _, err := c.Resolve("abcdef1"); return err }},
		{name: "Ensure missing", run: func() error { return c.Ensure(context.Background(), "v9") }},
		{name: "Ensure unreachable id", run: func() error { return c.Ensure(context.Background(), f.dangling) }},
		{name: "Source missing", run: func() error { _, err := c.Source("v9"); return err }},
		{name: "Log missing", run: func() error { return c.Log(context.Background(), "v9", nil, nil) }},
		{name: "Open offline without cache", run: func() error {
			_, err := Open(context.Background(), t.TempDir(), url, WithOffline(true))
			return err
		}},
		{name: "Ensure offline", run: func() error {
			o, err := Open(context.Background(), dir, url, WithOffline(true))
			if err != nil {
				return err
			}
			defer o.Close()
			return o.Ensure(context.Background(), "v9")
		}},
		{name: "wrong token", run: func() error {
			_, err := Open(context.Background(), t.TempDir(), withToken(base, tokenUser, token+"X")+repoPath)
			return err
		}},
		{name: "token as user name, missing repo", run: func() error {
			_, err := Open(context.Background(), t.TempDir(), withToken(base, token, "")+"/git/nope")
			return err
		}},
		{name: "server gone", run: func() error {
			_, err := Open(context.Background(), t.TempDir(), "http://"+tokenUser+":"+token+"@127.0.0.1:1/git/x")
			return err
		}},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if err == nil {
				t.Fatalf("%s = nil, want an error", tt.name)
			}
			if strings.Contains(err.Error(), token) || strings.Contains(err.Error(), strings.ToLower(token)) {
				t.Errorf("%s error shows the token: %v", tt.name, err)
			}
			t.Logf("%s: %v", tt.name, err)
		})
	}

	// Nothing written to the cache holds the token.
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.Contains(p, token) {
			t.Errorf("cache file name %s holds the token", p)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(data), token) {
			t.Errorf("cache file %s holds the token", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
