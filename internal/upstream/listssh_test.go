package upstream

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/patchkit/patchkit/internal/gittest"
)

// fakeSSH writes into dir the ssh programs the tests run instead of ssh:
// each logs its arguments, a line per run, to the file $FAKE_SSH_LOG, then
// runs the remote command (its last argument) here with sh, as git's own
// tests fake ssh. "ssh", "plink" and "wrapper" answer `-G` (OpenSSH's
// configuration dump, what git probes an unknown program with) with
// success; "simple" fails it.
func fakeSSH(t *testing.T, dir string) {
	t.Helper()
	const body = `#!/bin/sh
printf '%s\n' "$*" >> "$FAKE_SSH_LOG"
if [ "$1" = "-G" ]; then exit $G; fi
while [ $# -gt 1 ]; do shift; done
exec sh -c "$1"
`
	for name, g := range map[string]string{"ssh": "0", "plink": "0", "wrapper": "0", "simple": "1"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Replace(body, "$G", g, 1)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSSHListingRunsGitsSSH: an ssh upstream is listed through the ssh
// program git runs for it, with git's arguments: for each URL form and each
// way of naming the program, the fake ssh's log of patchkit's listing is
// git ls-remote's (protocol v0) line for line, the `-G` probe of a program
// git does not know included. Where git lists, the refs are git's; where it
// refuses the URL (no path, a host or path that reads as an option, a port
// for a program that takes none), patchkit refuses it with git's words and
// runs nothing.
func TestSSHListingRunsGitsSSH(t *testing.T) {
	r := manyRefs(t, 20)
	bin := t.TempDir()
	fakeSSH(t, bin)
	log := filepath.Join(t.TempDir(), "ssh.log")
	t.Setenv("FAKE_SSH_LOG", log)
	t.Setenv("SSH_AUTH_SOCK", "") // go-git's ssh client wanted an agent
	odd := filepath.Join(t.TempDir(), "it's a repo! with %")
	if _, e, err := gittest.Run(t.TempDir(), nil, "clone", "-q", "--bare", r.Dir, odd); err != nil {
		t.Fatalf("git clone: %v: %s", err, e)
	}
	urls := []string{
		"ssh://example.invalid" + r.Dir,
		"ssh://someone@example.invalid:2222" + r.Dir,
		"git+ssh://example.invalid" + r.Dir,
		"ssh+git://example.invalid:" + r.Dir,
		"someone@example.invalid:" + r.Dir,
		"[someone@example.invalid:2222]:" + r.Dir,
		"ssh://someone@[::1]:2222" + r.Dir,
		"someone@[::1]:" + r.Dir,
		"ssh://example.invalid" + strings.ReplaceAll(odd, " ", "%20"),
		"example.invalid:" + odd,
		"ssh://example.invalid/~someone/repo.git",
		"example.invalid:~someone/repo.git",
		"example.invalid:/~someone/repo.git",
		"ssh://example.invalid:99999" + r.Dir,
		"example.invalid:-oProxyCommand=true",
		"ssh://-oProxyCommand=true/x",
		"ssh://example.invalid",
		"example.invalid:relative/repo.git",
	}
	programs := []struct {
		name string
		env  map[string]string
	}{
		{"GIT_SSH=ssh", map[string]string{"GIT_SSH": filepath.Join(bin, "ssh")}},
		{"GIT_SSH=plink", map[string]string{"GIT_SSH": filepath.Join(bin, "plink")}},
		{"GIT_SSH, probed", map[string]string{"GIT_SSH": filepath.Join(bin, "wrapper")}},
		{"GIT_SSH, probed, simple", map[string]string{"GIT_SSH": filepath.Join(bin, "simple")}},
		{"GIT_SSH_COMMAND", map[string]string{"GIT_SSH_COMMAND": filepath.Join(bin, "ssh") + " -o 'User Known=x'"}},
		{"GIT_SSH_COMMAND, no shell", map[string]string{"GIT_SSH_COMMAND": filepath.Join(bin, "wrapper")}},
		{"GIT_SSH_VARIANT=tortoiseplink", map[string]string{"GIT_SSH": filepath.Join(bin, "wrapper"), "GIT_SSH_VARIANT": "tortoiseplink"}},
		{"GIT_SSH_VARIANT=putty", map[string]string{"GIT_SSH": filepath.Join(bin, "ssh"), "GIT_SSH_VARIANT": "putty"}},
		{"GIT_SSH_VARIANT=auto", map[string]string{"GIT_SSH": filepath.Join(bin, "simple"), "GIT_SSH_VARIANT": "auto"}},
		{"GIT_SSH_VARIANT unknown", map[string]string{"GIT_SSH": filepath.Join(bin, "simple"), "GIT_SSH_VARIANT": "bogus"}},
	}
	for _, p := range programs {
		for _, url := range urls {
			t.Run(p.name+" "+url, func(t *testing.T) {
				for _, k := range []string{"GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT"} {
					t.Setenv(k, p.env[k])
					if p.env[k] == "" {
						os.Unsetenv(k)
					}
				}
				readAndRemove(t, log)
				var extra []string
				for k, v := range p.env {
					extra = append(extra, k+"="+v)
				}
				want, gitErr, err := gitLsRemote(url, extra...)
				gitOK := err == nil
				gitLog := readAndRemove(t, log)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				ar, err := (&Cache{}).listRefs(ctx, url, 5*time.Second)
				if got := readAndRemove(t, log); got != gitLog {
					t.Errorf("patchkit ran ssh as\n%s\ngit ran it as\n%s", got, gitLog)
				}
				if gitOK != (err == nil) {
					t.Fatalf("listRefs(%s) = %v; git ls-remote's error: %v %s", url, err, gitOK, gitErr)
				}
				if gitOK {
					sameListing(t, url, ar, want)
					return
				}
				for _, words := range []string{"no path specified", "strange hostname", "strange pathname", "does not support setting port"} {
					if strings.Contains(gitErr, words) && !strings.Contains(err.Error(), words) {
						t.Errorf("listRefs(%s) = %v; git said %q", url, err, strings.TrimSpace(gitErr))
					}
				}
			})
		}
	}
}

// TestFetchOverSSH: a cache of an ssh upstream opens, resolves and fetches
// through the user's ssh (GIT_SSH_COMMAND, no agent), as the git fetch
// after the listing always did.
func TestFetchOverSSH(t *testing.T) {
	f := newFixture(t)
	bin := t.TempDir()
	fakeSSH(t, bin)
	log := filepath.Join(t.TempDir(), "ssh.log")
	t.Setenv("FAKE_SSH_LOG", log)
	t.Setenv("SSH_AUTH_SOCK", "")
	t.Setenv("GIT_SSH_COMMAND", filepath.Join(bin, "ssh")+" -o BatchMode=yes")
	c := open(t, t.TempDir(), "someone@example.invalid:"+f.repo.Dir)
	if got := resolveOK(t, c, "v1.2.0"); got != f.c3 {
		t.Errorf("v1.2.0 resolved to %s, want %s", got, f.c3)
	}
	if err := c.Fetch(context.Background()); err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	b, _ := os.ReadFile(log)
	if !strings.Contains(string(b), "-o BatchMode=yes someone@example.invalid git-upload-pack '"+f.repo.Dir+"'") {
		t.Errorf("the listing did not run GIT_SSH_COMMAND as git does; the fake ssh ran as:\n%s", b)
	}
}

// TestSSHCommandSetButEmpty: GIT_SSH_COMMAND or GIT_SSH set to nothing is
// what git runs, and fails on; the listing says so rather than falling
// back to another ssh than the git fetch after it would run.
func TestSSHCommandSetButEmpty(t *testing.T) {
	for _, name := range []string{"GIT_SSH_COMMAND", "GIT_SSH"} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("GIT_SSH_COMMAND", "unset below")
			t.Setenv("GIT_SSH", "unset below")
			os.Unsetenv("GIT_SSH_COMMAND")
			os.Unsetenv("GIT_SSH")
			os.Setenv(name, "")
			_, err := (&Cache{}).listRefs(context.Background(), "git@example.invalid:org/x.git", 5*time.Second)
			if err == nil || !strings.Contains(err.Error(), "set but empty") {
				t.Errorf("listRefs = %v; want it to say %s is set but empty", err, name)
			}
			if _, e, gitErr := gitLsRemote("git@example.invalid:org/x.git", name+"="); gitErr == nil {
				t.Errorf("git ls-remote with %s empty succeeded; the listing refuses it", name)
			} else if !strings.Contains(e, "unable to fork") && !strings.Contains(e, "cannot run") {
				t.Errorf("git ls-remote with %s empty: %q; want it unable to run the ssh", name, e)
			}
		})
	}
}

// TestSSHRefusalSaysWhereCredentialsGo: an ssh upstream that refuses the
// key fails the cache's opening with ssh's words and where a deploy key
// goes (GIT_SSH_COMMAND, docs/ci.md).
func TestSSHRefusalSaysWhereCredentialsGo(t *testing.T) {
	bin := t.TempDir()
	refuse := filepath.Join(bin, "ssh")
	if err := os.WriteFile(refuse, []byte("#!/bin/sh\nprintf 'git@example.invalid: Permission denied (publickey).\\r\\n' >&2\nexit 255\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_SSH_COMMAND", refuse+" -o BatchMode=yes")
	t.Setenv("GIT_SSH_VARIANT", "ssh")
	_, err := Open(context.Background(), t.TempDir(), "git@example.invalid:org/private.git")
	if err == nil || !strings.Contains(err.Error(), "Permission denied (publickey).") || !strings.Contains(err.Error(), "GIT_SSH_COMMAND over ssh (docs/ci.md)") {
		t.Errorf("Open = %v; want ssh's refusal and where a deploy key goes", err)
	}
}

// TestSSHListingAnswers: what the listing makes of an ssh that does not
// list: one that refuses (its words, named as ssh's), a server that says
// the repository is not there (go-git's "repository not found", as for the
// other transports), and one that never answers, which the context ends:
// the ssh and the shell's child before it are killed with their group.
func TestSSHListingAnswers(t *testing.T) {
	bin := t.TempDir()
	pidFile := filepath.Join(bin, "pid")
	scripts := map[string]string{
		// OpenSSH ends its error lines in \r\n.
		"refuses":  "printf 'someone@example.invalid: Permission denied (publickey).\\r\\n' >&2; exit 255",
		"notfound": "echo 'ERROR: Repository not found.' >&2; exit 1",
		"silent":   "sleep 600 & echo $! > " + pidFile + "; wait",
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, want string
		notFound   bool
	}{
		{name: "refuses", want: "ssh: someone@example.invalid: Permission denied (publickey)."},
		{name: "notfound", notFound: true},
		{name: "silent", want: "context deadline exceeded"},
		// The real ssh, whose connection (a proxy command that exits)
		// closes before the handshake: its own words (OpenSSH's last
		// line, after a kex_exchange_identification one) reach the error.
		// Which words depends on a race in ssh: it reads the end of the
		// connection ("Connection closed by UNKNOWN port 65535") or
		// writes into it first ("Connection to UNKNOWN port 65535:
		// Broken pipe"); both name the connection.
		{name: "ssh", want: "UNKNOWN port 65535"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A shell command: sh runs the program as its child.
			t.Setenv("GIT_SSH_COMMAND", filepath.Join(bin, tc.name)+" -o BatchMode=yes")
			if tc.name == "ssh" {
				t.Setenv("GIT_SSH_COMMAND", "ssh -F /dev/null -o BatchMode=yes -o ProxyCommand=false")
			}
			t.Setenv("GIT_SSH_VARIANT", "ssh")
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			start := time.Now()
			_, err := (&Cache{}).listRefs(ctx, "someone@example.invalid:repo.git", 5*time.Second)
			switch {
			case err == nil:
				t.Fatal("listRefs succeeded; want an error")
			case tc.notFound && !errors.Is(err, transport.ErrRepositoryNotFound):
				t.Errorf("listRefs = %v; want %v", err, transport.ErrRepositoryNotFound)
			case !tc.notFound && !strings.Contains(err.Error(), tc.want) && !(tc.name == "silent" && ctx.Err() != nil):
				t.Errorf("listRefs = %v; want it to say %q", err, tc.want)
			}
			if tc.name != "silent" {
				return
			}
			if waited := time.Since(start); waited > 30*time.Second {
				t.Errorf("listRefs returned after %v; the context ended after 1s", waited)
			}
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			// The group was killed: the grandchild is gone (a zombie at most
			// until its reaper runs).
			deadline := time.Now().Add(10 * time.Second)
			for alive(pid) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if alive(pid) {
				t.Errorf("the silent ssh's child %d still runs after the listing gave up", pid)
			}
		})
	}
}
