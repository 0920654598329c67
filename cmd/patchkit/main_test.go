package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// binary is the real patchkit, built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "patchkit-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binary = filepath.Join(dir, "patchkit")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building patchkit: %v\n%s", err, out)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const patch = `Subject: greet the world
Origin: vendor
Forwarded: no

diff --git a/greet.txt b/greet.txt
--- a/greet.txt
+++ b/greet.txt
@@ -1,1 +1,1 @@
-hello
+hello world
`

// repo makes a repository root with one image, img, whose spec is spec.
func repo(t *testing.T, spec string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range map[string]string{
		"images/img/patchkit.yaml":    spec,
		"patches/img/0001-greet.diff": patch,
	} {
		os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(root, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

type result struct {
	code           int
	stdout, stderr string
}

// patchkit runs the binary with no user git configuration and env added.
func patchkit(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0")
	cmd.Env = append(cmd.Env, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running patchkit: %v", err)
	}
	return result{code, out.String(), errOut.String()}
}

// echoServer answers every git smart-HTTP request with status and a body
// that echoes the request: its line, every header (Authorization among
// them), the decoded basic credentials, and lines that would be workflow
// commands if printed raw. It records the Authorization headers it saw.
func echoServer(t *testing.T, status int) (srv *httptest.Server, seen func() []string) {
	t.Helper()
	var mu sync.Mutex
	var auths []string
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		fmt.Fprintf(&b, "request: %s %s %s\n", r.Method, r.URL.RequestURI(), r.Proto)
		names := make([]string, 0, len(r.Header))
		for k := range r.Header {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			for _, v := range r.Header[k] {
				fmt.Fprintf(&b, "%s: %s\n", k, v)
			}
		}
		if u, p, ok := r.BasicAuth(); ok {
			fmt.Fprintf(&b, "you are user=%s password=%s\n", u, p)
			fmt.Fprintf(&b, "see https://%s:%s@mirror.example/up.git?access_token=%s\n", u, p, p)
		}
		b.WriteString("::error file=x::pwned\n  ::warning::indented pwned\n%0A::error::encoded pwned\n##[error]old pwned\n")
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(status)
		fmt.Fprint(w, b.String())
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), auths...)
	}
}

// forbidden lists every form in which user and secret must not appear.
func forbidden(user, secret string) []string {
	var out []string
	for _, s := range []string{secret, user + ":" + secret} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			out = append(out, enc.EncodeToString([]byte(s)))
		}
	}
	return append(out, secret, url.PathEscape(secret), url.QueryEscape(secret))
}

// ownAnnotation is a workflow command patchkit itself prints in the github format.
var ownAnnotation = regexp.MustCompile(`^::(error|warning|notice) (file=[^,:]*,(line=\d+,)?)?title=patchkit[^:]*::`)

// injected finds an encoded line break followed by a command inside an annotation.
var injected = regexp.MustCompile(`(?i)%0[ad][ \t]*(::|##\[)`)

// TestEchoingServer points patchkit at a git server whose 401 and 403
// answers echo the credentials and carry workflow commands, and requires,
// in every output format, exit 2, the server's words shown, no credential
// in any encoding on stdout or stderr, and no line that a runner would read
// as a workflow command other than patchkit's own annotations.
func TestEchoingServer(t *testing.T) {
	const token = "ghp_EchoT0kenValue0123456789abcdefABCD"
	creds := []struct{ name, user, secret string }{
		{"password in the url", "deploy-user", "Pa55/w0rd-echo"},
		{"GITHUB_TOKEN in the url", "x-access-token", token},
	}
	root := repo(t, "upstream:\n  url: https://example.invalid/up.git\n  ref: v1\n  releases: \"v*\"\npatches: patches/img\n")
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		srv, seen := echoServer(t, status)
		for _, c := range creds {
			u, _ := url.Parse(srv.URL + "/up.git")
			u.User = url.UserPassword(c.user, c.secret)
			for _, cmd := range [][]string{{"apply", "img", "--check"}, {"obsolete-check", "img"}} {
				for _, format := range []string{"text", "json", "markdown", "github"} {
					name := fmt.Sprintf("%d/%s/%s/%s", status, c.name, cmd[0], format)
					t.Run(name, func(t *testing.T) {
						args := append([]string{"--root", root, "--cache-dir", t.TempDir(), "--upstream-url", u.String(), "-o", format}, cmd...)
						r := patchkit(t, []string{"GITHUB_TOKEN=" + token}, args...)
						checkEcho(t, r, format, forbidden(c.user, c.secret))
					})
				}
			}
			want := "Basic " + base64.StdEncoding.EncodeToString([]byte(c.user+":"+c.secret))
			if auths := seen(); !contains(auths, want) {
				t.Errorf("%d %s: the server never saw %q (saw %q): the test proves nothing", status, c.name, want, auths)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

func checkEcho(t *testing.T, r result, format string, secrets []string) {
	t.Helper()
	all := r.stdout + r.stderr
	if r.code != 2 {
		t.Errorf("exit = %d, want 2\n%s", r.code, all)
	}
	if !strings.Contains(r.stderr, "pwned") {
		t.Errorf("stderr lacks the server's answer:\n%s", r.stderr)
	}
	for _, s := range secrets {
		if strings.Contains(all, s) {
			t.Errorf("output holds the credential form %q:\n%s", s, all)
		}
	}
	for name, text := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
		for _, l := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == '\r' }) {
			trimmed := strings.TrimLeft(l, " \t")
			cmdLine := strings.HasPrefix(trimmed, "::") || strings.HasPrefix(trimmed, "##[")
			switch {
			case cmdLine && (name == "stderr" || format != "github"):
				t.Errorf("%s line is a workflow command: %q", name, l)
			case cmdLine && !ownAnnotation.MatchString(l):
				t.Errorf("%s line is a workflow command patchkit did not write: %q", name, l)
			case cmdLine && injected.MatchString(l):
				t.Errorf("%s annotation carries an encoded command: %q", name, l)
			}
		}
	}
	switch format {
	case "json":
		var e struct {
			Error    string `json:"error"`
			ExitCode int    `json:"exitCode"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &e); err != nil || e.ExitCode != 2 || !strings.Contains(e.Error, "pwned") {
			t.Errorf("stdout = %q (%v), want a JSON error object with the server's answer and exitCode 2", r.stdout, err)
		}
	case "github":
		if !strings.HasPrefix(r.stdout, "::error ") || !strings.Contains(r.stdout, "pwned") {
			t.Errorf("stdout = %q, want an ::error annotation with the server's answer", r.stdout)
		}
	case "markdown":
		if !strings.Contains(r.stdout, "patchkit: error (exit 2)") || !strings.Contains(r.stdout, "pwned") {
			t.Errorf("stdout = %q, want a markdown error block", r.stdout)
		}
	case "text":
		if r.stdout != "" {
			t.Errorf("stdout = %q, want nothing: the error is on stderr", r.stdout)
		}
	}
}

// TestErrorOutput requires an error in the output format on stdout, beside
// the plain line on stderr: a bad spec (input, with its file and line) and
// bad flags (usage), before and after -o.
func TestErrorOutput(t *testing.T) {
	root := repo(t, "upstream:\n  url: https://example.invalid/up.git\n  ref: v1\n  colour: red\npatches: patches/img\n")
	const specErr = "images/img/patchkit.yaml:4: upstream.colour: unknown key"
	tests := []struct {
		name string
		args []string
		kind string
		want string // in the message
		file string
		line int
	}{
		{"bad spec", []string{"-o", "json", "apply", "img"}, "input", specErr, "images/img/patchkit.yaml", 4},
		{"bad flag after -o", []string{"--output=json", "apply", "img", "--bogus"}, "usage", "unknown flag: --bogus", "", 0},
		{"bad flag before -o", []string{"apply", "--bogus", "img", "-ojson"}, "usage", "unknown flag: --bogus", "", 0},
		{"bad flag combination", []string{"-o", "json", "apply", "img", "--check", "--out", "x"}, "usage", "--check and --out exclude each other", "", 0},
		{"bad output format", []string{"-o", "yaml", "apply", "img"}, "", "want text, json, markdown or github", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := patchkit(t, nil, append([]string{"--root", root, "--cache-dir", t.TempDir()}, tt.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, "patchkit: ") || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit = %d, stderr = %q; want 2 and %q", r.code, r.stderr, tt.want)
			}
			if tt.kind == "" { // no valid format: text, nothing on stdout
				if r.stdout != "" {
					t.Errorf("stdout = %q, want nothing", r.stdout)
				}
				return
			}
			var e struct {
				Error    string `json:"error"`
				ExitCode int    `json:"exitCode"`
				Kind     string `json:"kind"`
				File     string `json:"file"`
				Line     int    `json:"line"`
				Key      string `json:"key"`
			}
			dec := json.NewDecoder(strings.NewReader(r.stdout))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&e); err != nil {
				t.Fatalf("stdout = %q: %v", r.stdout, err)
			}
			if !strings.Contains(e.Error, tt.want) || e.ExitCode != 2 || e.Kind != tt.kind || e.File != tt.file || e.Line != tt.line {
				t.Errorf("error object = %+v, want kind %s, file %q, line %d, message with %q", e, tt.kind, tt.file, tt.line, tt.want)
			}
		})
	}
	r := patchkit(t, nil, "--root", root, "-o", "github", "apply", "img")
	if want := "::error file=images/img/patchkit.yaml,line=4,title=patchkit input::" + specErr; !strings.HasPrefix(r.stdout, want) || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("github stdout = %q, want %q", r.stdout, want)
	}
	r = patchkit(t, nil, "--root", root, "-o", "markdown", "apply", "img")
	if !strings.HasPrefix(r.stdout, "### ❌ patchkit: input (exit 2)\n") || !strings.Contains(r.stdout, specErr) {
		t.Errorf("markdown stdout = %q, want a short error block", r.stdout)
	}
}
