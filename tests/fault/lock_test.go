package fault

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/patchkit/patchkit/internal/txn"
)

// backportProject is a project whose upstream has, after v2.0.0, commits
// that each add a file: they apply to the pin, so a backport writes
// patches/app/0002-*.diff and exits 0.
func backportProject(t *testing.T, n int) (*project, []string) {
	t.Helper()
	p := newProject(t, nil)
	var ids []string
	for i := 0; i < n; i++ {
		name := string(rune('a'+i)) + ".txt"
		p.up.Write("extra/"+name, strings.Repeat("extra "+name+"\n", 2000))
		ids = append(ids, p.up.Commit("extra: add "+name))
	}
	if r := p.run(t, "apply", "app", "--check"); r.code != 0 { // fills the cache
		t.Fatalf("apply --check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return p, ids
}

// newPatches lists patches/app beyond the project's own 0001.
func newPatches(t *testing.T, p *project) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(p.root, "patches/app"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Name() != "0001-line-150.diff" {
			out = append(out, e.Name())
		}
	}
	return out
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestBackportWaitsForTheLock: backport holds the repository lock to
// write, as upgrade and refresh do: while another patchkit holds it,
// backport says it waits and writes nothing; it writes once the lock is
// free. SIGTERM while it waits ends it with exit 2 and nothing written.
func TestBackportWaitsForTheLock(t *testing.T) {
	for _, sig := range []syscall.Signal{0, syscall.SIGTERM} {
		name := "released"
		if sig != 0 {
			name = sig.String()
		}
		t.Run(name, func(t *testing.T) {
			p, ids := backportProject(t, 1)
			lock := holdLock(t, txn.LockPath(p.root))
			cmd := p.cmd("backport", "app", ids[0])
			stderr, _ := cmd.StderrPipe()
			cmd.Stdout = io.Discard
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitLine(t, stderr, "waiting for the repository lock")
			if got := newPatches(t, p); len(got) != 0 {
				t.Errorf("backport wrote %v while the lock was held", got)
			}
			if sig != 0 {
				cmd.Process.Signal(sig)
			}
			if sig == 0 {
				lock.Close()
			}
			rest, _ := io.ReadAll(stderr)
			code := exitCode(cmd.Wait())
			lock.Close()
			got := newPatches(t, p)
			switch {
			case sig == 0 && (code != 0 || len(got) != 1 || !strings.HasPrefix(got[0], "0002-")):
				t.Errorf("after the lock was freed: exit %d, new patches %v, stderr %s; want 0 and one 0002-*", code, got, rest)
			case sig != 0 && (code != 2 || len(got) != 0):
				t.Errorf("after %v: exit %d, new patches %v, stderr %s; want 2 and none", sig, code, got, rest)
			}
			if l := tempLeftovers(p.root); len(l) > 0 {
				t.Errorf("left over: %v", l)
			}
		})
	}
}

// TestConcurrentBackports: two backports of different commits run at once,
// both numbering their patch 0002. Every round, either both land under
// different numbers, or one lands and the other exits 2 saying the
// directory changed since it read it: never one patch written over the
// other, never two patches with one number.
func TestConcurrentBackports(t *testing.T) {
	refused := 0
	for round := 0; round < 5; round++ {
		p, ids := backportProject(t, 2)
		var errs [2]bytes.Buffer
		cmds := []*exec.Cmd{p.cmd("backport", "app", ids[0]), p.cmd("backport", "app", ids[1])}
		for i, c := range cmds {
			c.Stdout, c.Stderr = io.Discard, &errs[i]
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
		}
		codes := []int{exitCode(cmds[0].Wait()), exitCode(cmds[1].Wait())}
		got := newPatches(t, p)
		numbers := map[string]bool{}
		for _, n := range got {
			if numbers[n[:4]] {
				t.Errorf("round %d: two patches numbered %s: %v", round, n[:4], got)
			}
			numbers[n[:4]] = true
		}
		ok := 0
		for i, c := range codes {
			switch c {
			case 0:
				ok++
			case 2:
				refused++
				if !strings.Contains(errs[i].String(), "changed since it was read") || !strings.Contains(errs[i].String(), "nothing was written") {
					t.Errorf("round %d: the refused backport said %q", round, errs[i].String())
				}
			default:
				t.Errorf("round %d: backport %d exit %d: %s", round, i, c, errs[i].String())
			}
		}
		if len(got) != ok || ok == 0 {
			t.Errorf("round %d: exits %v but new patches %v", round, codes, got)
		}
		for _, n := range got {
			b, _ := os.ReadFile(filepath.Join(p.root, "patches/app", n))
			if !bytes.Contains(b, []byte("+extra ")) {
				t.Errorf("round %d: %s is not a whole patch", round, n)
			}
		}
		if l := tempLeftovers(p.root); len(l) > 0 {
			t.Errorf("round %d: left over: %v", round, l)
		}
	}
	t.Logf("%d of 5 rounds refused one backport", refused)
}

// TestKilledBackport kills backport with SIGKILL on the write of its
// temporary file (before the commit point) and on the rename of the new
// patch (after it), timed with inotify. The next patchkit run completes
// or undoes it: the patch is there whole or not at all, and no temporary
// file or journal stays; a backport run again then lands it once.
func TestKilledBackport(t *testing.T) {
	for _, at := range []string{"written", "moved"} {
		t.Run(at, func(t *testing.T) {
			caught := 0
			for try := 0; try < 5 && caught == 0; try++ {
				p, ids := backportProject(t, 1)
				w := watch(t, unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE, filepath.Join(p.root, "patches/app"))
				cmd := p.cmd("backport", "app", ids[0])
				cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				deadline := time.After(hangGuard)
			loop:
				for {
					select {
					case ev, ok := <-w.events:
						if !ok {
							break loop
						}
						name := ev[strings.Index(ev, " ")+1:]
						tmp := strings.Contains(name, ".tmp-")
						if (at == "written" && strings.HasPrefix(ev, "written") && tmp) || (at == "moved" && strings.HasPrefix(ev, "moved") && !tmp) {
							cmd.Process.Signal(syscall.SIGKILL)
							break loop
						}
					case <-deadline:
						t.Fatal("no event")
					}
				}
				err := cmd.Wait()
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
					continue // it finished first: try again
				}
				_ = err
				caught++
				// Any patchkit run recovers the journal first.
				if r := p.run(t, "apply", "app", "--check"); r.code != 0 && r.code != 1 {
					t.Fatalf("the run after the kill: exit %d\n%s", r.code, r.stderr)
				}
				got := newPatches(t, p)
				if len(got) > 1 {
					t.Fatalf("after the kill and recovery: %v", got)
				}
				if at == "moved" && len(got) != 1 {
					t.Errorf("a kill after the commit point lost the patch: %v", got)
				}
				if len(got) == 1 {
					if b, _ := os.ReadFile(filepath.Join(p.root, "patches/app", got[0])); !bytes.Contains(b, []byte("+extra a.txt")) {
						t.Errorf("%s is not a whole patch", got[0])
					}
				}
				if l := tempLeftovers(p.root); len(l) > 0 {
					t.Errorf("left over after recovery: %v", l)
				}
				if len(got) == 0 {
					if r := p.run(t, "backport", "app", ids[0]); r.code != 0 {
						t.Errorf("backport after the undone kill: exit %d\n%s", r.code, r.stderr)
					}
					if got := newPatches(t, p); len(got) != 1 {
						t.Errorf("after a second backport: %v", got)
					}
				}
			}
			if caught == 0 {
				t.Fatalf("no kill landed at %q in 5 tries", at)
			}
		})
	}
}
