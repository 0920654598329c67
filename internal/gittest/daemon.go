package gittest

import (
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Daemon serves the repository dir with `git daemon` on loopback until the
// test ends, exporting every repository beside it (dir's parent is the base
// path), and returns dir's git:// URL.
func Daemon(tb testing.TB, dir string) string {
	tb.Helper()
	base := filepath.Dir(dir)
	for attempt := 0; attempt < 5; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		cmd := exec.Command("git", "daemon", "--export-all", "--reuseaddr", "--listen=127.0.0.1",
			fmt.Sprintf("--port=%d", l.Addr().(*net.TCPAddr).Port), "--base-path="+base, base)
		cmd.Env = Env()
		if err := cmd.Start(); err != nil {
			tb.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		tb.Cleanup(func() { cmd.Process.Kill(); <-exited })
		if listening(addr, exited) {
			return fmt.Sprintf("git://%s/%s", addr, filepath.Base(dir))
		}
		// It exited: another process took the port meanwhile.
	}
	tb.Fatalf("git daemon did not start")
	return ""
}

// listening waits until addr accepts connections (true), or exited is
// closed or 10 seconds pass (false).
func listening(addr string, exited <-chan struct{}) bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}
