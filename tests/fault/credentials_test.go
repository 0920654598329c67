package fault

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// TestCredentialsStayWithTheirHost: the upstream URL holds a user and
// password. A server that checks them serves the fetch (the credentials
// reach their own host); when that server redirects git to a second one,
// which serves the repository and records every header, the second never
// receives them, in any encoding.
func TestCredentialsStayWithTheirHost(t *testing.T) {
	const user, pass = "carrier", "s3cr3t-Pa55word"

	t.Run("own host", func(t *testing.T) {
		p := newProject(t, func(up *gittest.Repo) string {
			return authServer(t, up, user, pass, nil)
		})
		wantVerdict(t, runGuarded(t, p.cmd("apply", "app", "--check")), p.oracle(t, "v1.0.0"), "a fetch with credentials")
	})

	t.Run("redirect", func(t *testing.T) {
		var mu sync.Mutex
		var seen []string
		var other *httptest.Server
		// patchkit reads the upstream's refs itself (go-git), then runs git
		// fetch: the server answers the first and redirects git's requests
		// to another server that serves the repository without asking, so
		// git goes on with it (its later requests go there directly).
		p := newProject(t, func(up *gittest.Repo) string {
			backend := gittest.HTTPBackend(t, filepath.Dir(up.Dir), "")
			other = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				for k, vs := range r.Header {
					seen = append(seen, k+": "+strings.Join(vs, ","))
				}
				seen = append(seen, r.Method+" "+r.URL.String())
				mu.Unlock()
				backend.ServeHTTP(w, r)
			}))
			t.Cleanup(other.Close)
			return authServer(t, up, user, pass, func(w http.ResponseWriter, r *http.Request) bool {
				if !strings.HasPrefix(r.UserAgent(), "git/") {
					return false
				}
				http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusFound)
				return true
			})
		})
		runGuarded(t, p.cmd("apply", "app", "--check")) // the verdict does not matter here
		mu.Lock()
		defer mu.Unlock()
		if len(seen) == 0 {
			t.Fatal("the redirect target received nothing: the test proves nothing")
		}
		all := strings.Join(seen, "\n")
		for _, secret := range secretForms(user, pass) {
			if strings.Contains(all, secret) {
				t.Errorf("the redirect target received the credentials (%q):\n%s", secret, all)
			}
		}
	})
}

// TestCredentialsFromInsteadOf: a private upstream's credentials come from
// git's insteadOf in the job's global git configuration, never from
// patchkit.yaml (docs/ci.md); without them, the error says so. The listing and git fetch both reach the
// server that asks for them, and when the rewritten upstream cannot be
// reached, the error names it without them, in any encoding, in text and
// in JSON.
func TestCredentialsFromInsteadOf(t *testing.T) {
	const user, pass = "x-access-token", "ghs_Pr1vateUpstreamT0ken42"
	var withCreds string
	p := newProject(t, func(up *gittest.Repo) string {
		withCreds = authServer(t, up, user, pass, nil)
		return "https://github.invalid/org/" + filepath.Base(up.Dir)
	})
	config := func(base string) string {
		f := filepath.Join(t.TempDir(), "gitconfig")
		write(t, f, "[url \""+base+"\"]\n\tinsteadOf = https://github.invalid/org/\n")
		return "GIT_CONFIG_GLOBAL=" + f
	}
	// Without them, the server's refusal says where they go.
	withoutCreds := strings.Replace(withCreds, user+":"+pass+"@", "", 1)
	cmd := p.cmd("apply", "app", "--check")
	cmd.Env = append(cmd.Env, config(strings.TrimSuffix(withoutCreds, filepath.Base(withoutCreds))))
	if r := runGuarded(t, cmd); r.code != 2 || !strings.Contains(r.stderr, "authentication required") || !strings.Contains(r.stderr, "url.<base>.insteadOf") {
		t.Errorf("without credentials: exit %d, stderr %q; want 2, the refusal and where credentials go", r.code, r.stderr)
	}
	good := config(strings.TrimSuffix(withCreds, filepath.Base(withCreds)))
	for _, ref := range []string{"v1.0.0", "v2.0.0"} {
		cmd := p.cmd("apply", "app", "--check", "--ref", ref)
		cmd.Env = append(cmd.Env, good)
		wantVerdict(t, runGuarded(t, cmd), p.oracle(t, ref), "through insteadOf at "+ref)
	}
	for _, format := range []string{"text", "json"} {
		p.cache = t.TempDir() // a cold cache: the run must reach the upstream
		cmd := p.cmd("apply", "app", "--check", "-o", format)
		cmd.Env = append(cmd.Env, config("http://"+user+":"+pass+"@127.0.0.1:1/"))
		r := runGuarded(t, cmd)
		out := r.stdout + r.stderr
		if r.code != 2 || !strings.Contains(out, "***@127.0.0.1:1") {
			t.Errorf("-o %s: exit %d, output %q; want 2 and the rewritten upstream named without its credentials", format, r.code, out)
		}
		for _, secret := range secretForms(user, pass) {
			if strings.Contains(out, secret) {
				t.Errorf("-o %s printed the credential (%q):\n%s", format, secret, out)
			}
		}
	}
}

// secretForms are the forms in which a user and password may leak: the
// password, and base64 (standard and URL alphabets) of "user:password", as
// a Basic Authorization header carries them, and of the password alone.
func secretForms(user, pass string) []string {
	return []string{pass, base64.StdEncoding.EncodeToString([]byte(user + ":" + pass)),
		base64.URLEncoding.EncodeToString([]byte(user + ":" + pass)), base64.StdEncoding.EncodeToString([]byte(pass))}
}

// authServer serves up's repository over http, asking for user and pass;
// intercept, when it returns true, has answered a request itself. It
// returns the URL with the credentials in it.
func authServer(t *testing.T, up *gittest.Repo, user, pass string, intercept func(http.ResponseWriter, *http.Request) bool) string {
	t.Helper()
	backend := gittest.HTTPBackend(t, filepath.Dir(up.Dir), "")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if intercept != nil && intercept(w, r) {
			return
		}
		if u, pw, ok := r.BasicAuth(); !ok || u != user || pw != pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.Replace(srv.URL, "http://", "http://"+user+":"+pass+"@", 1) + "/" + filepath.Base(up.Dir)
}
