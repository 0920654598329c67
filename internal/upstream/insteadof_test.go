package upstream

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

func TestRewriteLongestPrefix(t *testing.T) {
	rules := []insteadOf{
		{Base: "file:///m/all/", Prefix: "https://github.com/"},
		{Base: "file:///m/kubeovn/", Prefix: "https://github.com/kubeovn/"},
		{Base: "file:///m/other/", Prefix: "https://gitlab.com/"},
	}
	tests := []struct {
		name, url, want string
	}{
		{"longest wins", "https://github.com/kubeovn/kube-ovn", "file:///m/kubeovn/kube-ovn"},
		{"shorter when only it matches", "https://github.com/squat/kilo", "file:///m/all/squat/kilo"},
		{"no match", "https://example.com/x.git", "https://example.com/x.git"},
		{"prefix is literal, not a host match", "https://github.company.com/x", "https://github.company.com/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rewrite(tt.url, rules); got != tt.want {
				t.Errorf("rewrite(%q) = %q, want %q", tt.url, got, tt.want)
			}
		})
	}
}

func TestGitConfigFiles(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"defaults", map[string]string{"HOME": "/h"}, []string{"/etc/gitconfig", "/h/.config/git/config", "/h/.gitconfig"}},
		{"xdg", map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "/x"}, []string{"/etc/gitconfig", "/x/git/config", "/h/.gitconfig"}},
		{"global replaces the user's files", map[string]string{"HOME": "/h", "GIT_CONFIG_GLOBAL": "/g"}, []string{"/etc/gitconfig", "/g"}},
		{"empty global means none", map[string]string{"HOME": "/h", "GIT_CONFIG_GLOBAL": ""}, []string{"/etc/gitconfig"}},
		{"nosystem", map[string]string{"HOME": "/h", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/g"}, []string{"/g"}},
		{"system file", map[string]string{"GIT_CONFIG_SYSTEM": "/s", "GIT_CONFIG_GLOBAL": "/g"}, []string{"/s", "/g"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := gitConfigFiles(env(tt.env)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("gitConfigFiles() = %q, want %q", got, tt.want)
			}
		})
	}
}

// widgetMirror makes a mirror directory holding acme/widget, a repository
// with the release v1.0.0, and returns the directory and v1.0.0's commit.
func widgetMirror(t *testing.T) (mirror, v1 string) {
	t.Helper()
	mirror = t.TempDir()
	up := gittest.New(t)
	up.Write("a.txt", "a\n")
	v1 = up.Release("first", "v1.0.0")
	if err := os.MkdirAll(filepath.Join(mirror, "acme"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(up.Dir, filepath.Join(mirror, "acme", "widget")); err != nil {
		t.Fatal(err)
	}
	return mirror, v1
}

// TestOpenThroughMirror fetches https://github.com/acme/widget, which does
// not exist, from a mirror that GIT_CONFIG_GLOBAL maps it to; git itself
// agrees on the rewrite. The cache keeps the spec's URL.
func TestOpenThroughMirror(t *testing.T) {
	mirror, want := widgetMirror(t)
	cfg := filepath.Join(t.TempDir(), "gitconfig")
	body := "[url \"file://" + mirror + "/\"]\n\tinsteadOf = https://github.com/\n[url \"file:///nowhere/\"]\n\tinsteadOf = https://\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", cfg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")

	const specURL = "https://github.com/acme/widget"
	// the git CLI is the oracle: it rewrites the same way
	cmd := []string{"-c", "include.path=" + cfg, "ls-remote", specURL, "refs/tags/v1.0.0^{}"}
	out, errOut, err := gittest.Run(t.TempDir(), nil, cmd...)
	if err != nil || !strings.HasPrefix(out, want) {
		t.Fatalf("git ls-remote through the mirror = %q, %v (%s), want %s", out, err, errOut, want)
	}
	if got := MirrorURL(specURL); got != "file://"+mirror+"/acme/widget" {
		t.Fatalf("MirrorURL() = %q", got)
	}

	c, err := Open(context.Background(), t.TempDir(), specURL)
	if err != nil {
		t.Fatalf("Open() through the mirror: %v", err)
	}
	defer c.Close()
	if err := c.Ensure(context.Background(), "v1.0.0"); err != nil {
		t.Fatalf("Ensure(v1.0.0) = %v", err)
	}
	got, err := c.Resolve("v1.0.0")
	if err != nil || got != want {
		t.Fatalf("Resolve(v1.0.0) = %s, %v, want %s", got, err, want)
	}
	if c.URL() != specURL {
		t.Errorf("URL() = %q, want the spec's %q", c.URL(), specURL)
	}
	if !strings.Contains(filepath.Base(c.Path()), "github.com") || c.key != cacheKey(specURL) {
		t.Errorf("cache key %s is not the spec URL's", c.Path())
	}
}

// TestInsteadOfFromTheEnvironment: a CI job that gives its mirror or its
// token through GIT_CONFIG_COUNT (no config file written) is rewritten as
// git rewrites it; git ls-remote is the oracle.
func TestInsteadOfFromTheEnvironment(t *testing.T) {
	mirror, want := widgetMirror(t)
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	env := map[string]string{
		"GIT_CONFIG_COUNT": "3",
		// not an insteadOf: left alone
		"GIT_CONFIG_KEY_0": "core.abbrev", "GIT_CONFIG_VALUE_0": "12",
		// a shorter prefix, then the longer one that wins, in git's
		// spelling of the key in any case
		"GIT_CONFIG_KEY_1": "url.file:///nowhere/.insteadOf", "GIT_CONFIG_VALUE_1": "https://",
		"GIT_CONFIG_KEY_2": "URL.file://" + mirror + "/.INSTEADOF", "GIT_CONFIG_VALUE_2": "https://github.com/",
	}
	var kv []string
	for k, v := range env {
		t.Setenv(k, v)
		kv = append(kv, k+"="+v)
	}
	const specURL = "https://github.com/acme/widget"
	lines, stderr, err := gitLsRemote(specURL, kv...)
	if err != nil || !slices.Contains(lines, want+"\trefs/tags/v1.0.0^{}") {
		t.Fatalf("git ls-remote through the environment's mirror = %q, %v (%s), want v1.0.0 at %s", lines, err, stderr, want)
	}
	if got := MirrorURL(specURL); got != "file://"+mirror+"/acme/widget" {
		t.Fatalf("MirrorURL() = %q", got)
	}
	c := open(t, t.TempDir(), specURL)
	if got := resolveOK(t, c, "v1.0.0"); got != want {
		t.Errorf("Resolve(v1.0.0) = %s, want %s", got, want)
	}
	// A malformed count is no rule, as an unparsable file is none.
	t.Setenv("GIT_CONFIG_COUNT", "three")
	if got := MirrorURL(specURL); got != specURL {
		t.Errorf("MirrorURL() with a bad GIT_CONFIG_COUNT = %q, want the URL unchanged", got)
	}
}
