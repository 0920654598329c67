package fault

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/gittest"
)

// silentServer accepts TCP connections on loopback and never answers.
func silentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return l.Addr().String()
}

// runGuarded runs cmd, killing it after hangGuard (a hung run fails the
// test instead of hanging it).
func runGuarded(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(hangGuard):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v hung (killed after %s)\nstderr: %s", cmd.Args, hangGuard, errOut.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	return result{code, out.String(), errOut.String()}
}

// TestSilentUpstream: an upstream that accepts connections and never
// answers (http and git://), and one that stalls mid-pack, are given up
// after the fetch timeout (the flag, or PATCHKIT_FETCH_TIMEOUT): exit 2
// saying so, and no temporary pack left in the cache.
func TestSilentUpstream(t *testing.T) {
	addr := silentServer(t)
	for _, tc := range []struct {
		name, url string
		env       bool
	}{
		{"http flag", "http://" + addr + "/repo.git", false},
		{"git flag", "git://" + addr + "/repo.git", false},
		{"http env", "http://" + addr + "/repo.git", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, func(*gittest.Repo) string { return tc.url })
			args := []string{"apply", "app", "--check"}
			if !tc.env {
				args = append(args, "--fetch-timeout", "2s")
			}
			cmd := p.cmd(args...)
			if tc.env {
				cmd.Env = append(cmd.Env, "PATCHKIT_FETCH_TIMEOUT=2s")
			}
			r := runGuarded(t, cmd)
			if r.code != 2 || !strings.Contains(r.stderr, "no answer for") {
				t.Errorf("exit %d, stderr %q; want 2 and \"no answer for\"", r.code, r.stderr)
			}
		})
	}
	t.Run("stall mid-pack", func(t *testing.T) {
		var srv *stallServer
		p := newProject(t, func(up *gittest.Repo) string {
			srv = newStallServer(t, filepath.Dir(up.Dir), 1<<20)
			return srv.URL + "/" + filepath.Base(up.Dir)
		})
		wantVerdict(t, p.run(t, "apply", "app", "--check"), p.oracle(t, "v1.0.0"), "filling the cache")
		for i := range 4 {
			buf := make([]byte, 1<<20)
			rand.Read(buf)
			write(t, filepath.Join(p.up.Dir, fmt.Sprintf("data/blob-%02d.bin", i)), string(buf))
		}
		p.up.Git("add", "-A")
		p.up.Commit("v3: large")
		p.up.Tag("v3.0.0")
		srv.stall()
		r := runGuarded(t, p.cmd("apply", "app", "--check", "--ref", "v3.0.0", "--fetch-timeout", "3s"))
		if r.code != 2 || !strings.Contains(r.stderr, "no answer for 3s") {
			t.Errorf("exit %d, stderr %q; want 2 and \"no answer for 3s\"", r.code, r.stderr)
		}
		if got := leftovers(t, p.cache); len(got) != 0 {
			t.Errorf("the stalled fetch left %v", got)
		}
		srv.unstall()
		wantVerdict(t, p.run(t, "apply", "app", "--check", "--ref", "v3.0.0"), p.oracle(t, "v3.0.0"), "after the server recovers")
	})
}
