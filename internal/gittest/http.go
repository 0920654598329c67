package gittest

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// HTTPBackend is git http-backend serving every repository below root over
// smart HTTP, as a handler for a test server: the repository root/<name> is
// at <mount>/<name> ("" mounts it at the server's root). Tests wrap it to
// count, stall, redirect or refuse requests.
func HTTPBackend(tb testing.TB, root, mount string) http.Handler {
	tb.Helper()
	execPath, stderr, err := Run(tb.TempDir(), nil, "--exec-path")
	if err != nil {
		tb.Fatalf("git --exec-path: %v\n%s", err, stderr)
	}
	return &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(execPath), "git-http-backend"),
		Root: mount,
		Env:  Env("GIT_PROJECT_ROOT="+root, "GIT_HTTP_EXPORT_ALL=1"),
	}
}

// HTTP serves the repository dir with git http-backend on loopback until the
// test ends, with every repository beside it, and returns dir's http:// URL:
// the transport GitHub serves, as Daemon is git daemon's.
func HTTP(tb testing.TB, dir string) string {
	tb.Helper()
	srv := httptest.NewServer(HTTPBackend(tb, filepath.Dir(dir), ""))
	tb.Cleanup(srv.Close)
	return srv.URL + "/" + filepath.Base(dir)
}
