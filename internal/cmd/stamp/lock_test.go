package stamp

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/patchkit/patchkit/internal/txn"
)

// stampWaiting starts `patchkit stamp` while the test holds the
// repository lock (as any writing patchkit command would) and returns
// once the process says it waits for it.
func stampWaiting(t *testing.T, root string) (*exec.Cmd, chan error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "a", "--digest", digestN(1))
	cmd.Env = append(os.Environ(), childRoot+"="+root)
	cmd.Stdout, cmd.Stderr = new(bytes.Buffer), w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); r.Close() }()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "waiting for the repository lock") {
			go func() {
				for sc.Scan() {
				}
			}()
			return cmd, exited
		}
		t.Logf("stamp: %s", sc.Text())
	}
	t.Fatalf("the stamp ended without waiting for the repository lock: %v", <-exited)
	return nil, nil
}

// TestStampWaitsForTheRepositoryLock: while another patchkit holds the
// repository lock, stamp says it waits and writes nothing; it stamps once
// the lock is free. SIGTERM or SIGINT while it waits ends it non-zero,
// with nothing written, even after the lock is free.
func TestStampWaitsForTheRepositoryLock(t *testing.T) {
	orig := []byte("a:\n  tag: old\n")
	setup := func(t *testing.T) (string, string, *txn.Lock) {
		root := unitRoot(t, map[string]string{"a": "  - {file: shared/values.yaml, key: .a.tag}\n"})
		path := filepath.Join(root, "shared", "values.yaml")
		os.WriteFile(path, orig, 0o644)
		lk, err := txn.Acquire(context.Background(), root, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		return root, path, lk
	}
	t.Run("waits, then stamps", func(t *testing.T) {
		root, path, lk := setup(t)
		_, exited := stampWaiting(t, root)
		if got, _ := os.ReadFile(path); !bytes.Equal(got, orig) {
			t.Errorf("the values file was written while the lock was held:\n%s", got)
		}
		lk.Release()
		if err := <-exited; err != nil {
			t.Fatalf("stamp after the lock was freed: %v", err)
		}
		if got, _ := os.ReadFile(path); string(got) != "a:\n  tag: v1.0.0@"+digestN(1)+"\n" {
			t.Errorf("values.yaml after the wait =\n%s", got)
		}
	})
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			root, path, lk := setup(t)
			cmd, exited := stampWaiting(t, root)
			cmd.Process.Signal(sig)
			err := <-exited // ends while the lock is still held, or the test hangs
			lk.Release()
			if err == nil || cmd.ProcessState.ExitCode() != 2 {
				t.Errorf("stamp after %v = %v, want exit 2", sig, err)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, orig) {
				t.Errorf("the values file was written after %v:\n%s", sig, got)
			}
			if _, err := os.Stat(filepath.Join(root, "shared", ".patchkit-stamps.json")); !os.IsNotExist(err) {
				t.Errorf("a stamp record was written after %v", sig)
			}
		})
	}
}
