package txn

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// holdEnv makes the test binary, re-executed, a process that takes the
// repository lock of the root it names, says "held" and sleeps (TestMain).
const holdEnv = "PATCHKIT_TEST_TXN_HOLD_ROOT"

func TestMain(m *testing.M) {
	if root := os.Getenv(holdEnv); root != "" {
		if _, err := Acquire(context.Background(), root, nil, 0); err != nil {
			fmt.Println("error:", err)
			os.Exit(3)
		}
		fmt.Println("held")
		time.Sleep(time.Hour)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// holder starts a second process that holds root's repository lock and
// stops it (SIGSTOP, as a suspended terminal job or a frozen CI step is).
func holder(t *testing.T, root string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+root)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "held" {
		t.Fatalf("the holder said %q, want held", line)
	}
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// TestLockTimeout: a lock that a stopped process holds is waited for the
// timeout, then refused naming the lock file, the holder's pid and its
// command; nothing is written. The wait was endless.
func TestLockTimeout(t *testing.T) {
	root := repo(t, nil)
	h := holder(t, root)
	var told string
	s := New(root)
	s.Create("x", []byte("x"))
	done := make(chan error, 1)
	go func() {
		_, err := s.Commit(context.Background(), Options{Waiting: func(who string) { told = who }, LockTimeout: 200 * time.Millisecond})
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute): // a bound on a hang, not a timing assertion
		t.Fatal("Commit() still waits for the lock a minute later")
	}
	var lt *LockTimeoutError
	if !errors.As(err, &lt) {
		t.Fatalf("Commit() under a stopped holder = %v, want a LockTimeoutError", err)
	}
	pid := fmt.Sprintf("pid %d (%s ", h.Process.Pid, filepath.Base(os.Args[0]))
	for _, want := range []string{LockPath(root), pid, "200ms", "--lock-timeout", fmt.Sprintf("kill %d", h.Process.Pid)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Commit() error = %q, want %q in it", err, want)
		}
	}
	if !strings.HasPrefix(told, pid) {
		t.Errorf("Waiting() was told %q, want the holder %q...", told, pid)
	}
	if read(t, root, "x") != "<absent>" {
		t.Error("x was written without the lock")
	}
}
