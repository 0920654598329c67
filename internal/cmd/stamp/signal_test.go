package stamp

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSignalWhileWaitingForTheLock: a stamp waiting for a values file's
// lock (the test holds it) gets SIGTERM or SIGINT: it exits non-zero
// without writing, even once the lock is free.
func TestSignalWhileWaitingForTheLock(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			root := unitRoot(t, map[string]string{"a": "  - {file: shared/values.yaml, key: .a.tag}\n"})
			path := filepath.Join(root, "shared", "values.yaml")
			orig := []byte("a:\n  tag: old\n")
			os.WriteFile(path, orig, 0o644)
			held, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer held.Close()
			if err := unix.Flock(int(held.Fd()), unix.LOCK_EX); err != nil {
				t.Fatal(err)
			}
			// The stamp opens the file twice: to read it, then to lock it.
			in, err := unix.InotifyInit1(unix.IN_CLOEXEC)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(in)
			if _, err := unix.InotifyAddWatch(in, path, unix.IN_OPEN|unix.IN_CLOSE_NOWRITE); err != nil {
				t.Fatal(err)
			}
			cmd := stampProcess(t, root, "a", digestN(1))
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			opened := make(chan struct{})
			go func() {
				// open (read), close, open (lock): identical events in a row
				// are merged by inotify, so the close tells the opens apart.
				buf := make([]byte, 4096)
				closed := false
				for {
					n, err := unix.Read(in, buf)
					if err != nil {
						return
					}
					for off := 0; off+unix.SizeofInotifyEvent <= n; off += unix.SizeofInotifyEvent {
						mask := binary.NativeEndian.Uint32(buf[off+4:]) // a watched file's events carry no name
						if mask&unix.IN_CLOSE_NOWRITE != 0 {
							closed = true
						} else if mask&unix.IN_OPEN != 0 && closed {
							close(opened)
							return
						}
					}
				}
			}()
			select {
			case <-opened:
			case err := <-exited:
				t.Fatalf("the stamp ended before it waited for the lock: %v\n%s", err, cmd.Stderr)
			}
			cmd.Process.Signal(sig)
			// A stamp that honours the signal ends while the lock is still
			// held; one that ignores it is let through after the guard (it
			// only bounds a hung test) and then writes.
			err = nil
			select {
			case err = <-exited:
			case <-time.After(time.Minute):
				held.Close()
				err = <-exited
				t.Errorf("the stamp did not end on %v while it waited for the lock", sig)
			}
			if err == nil {
				t.Errorf("the stamp exited 0 after %v; stderr: %s", sig, cmd.Stderr)
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
