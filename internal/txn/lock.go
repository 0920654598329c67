package txn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Names of the lock and the journal in the repository's git directory. A
// root without a .git keeps them at the root, hidden.
const (
	lockName    = "patchkit.lock"
	journalName = "patchkit-journal.json"
)

// stateDir is where root's lock and journal live: its git directory (.git,
// or the directory a .git file names, as in a worktree), else root itself
// (the names then start with a dot).
func stateDir(root string) (dir, prefix string) {
	g := filepath.Join(root, ".git")
	st, err := os.Stat(g)
	switch {
	case err == nil && st.IsDir():
		return g, ""
	case err == nil && st.Mode().IsRegular():
		if b, err := os.ReadFile(g); err == nil {
			if rest, ok := bytes.CutPrefix(b, []byte("gitdir:")); ok {
				d := strings.TrimSpace(string(rest))
				if !filepath.IsAbs(d) {
					d = filepath.Join(root, d)
				}
				if st, err := os.Stat(d); err == nil && st.IsDir() {
					return d, ""
				}
			}
		}
	}
	return root, "."
}

// LockPath is the file whose flock is root's repository lock.
func LockPath(root string) string {
	d, p := stateDir(root)
	return filepath.Join(d, p+lockName)
}

// JournalPath is where root's journal is while a write set is applied.
func JournalPath(root string) string {
	d, p := stateDir(root)
	return filepath.Join(d, p+journalName)
}

// Lock is the held repository lock.
type Lock struct{ f *os.File }

// pollInterval is how often Acquire retries a held lock.
const pollInterval = 20 * time.Millisecond

// DefaultLockTimeout is how long Acquire waits for a held lock when the
// caller sets no time (--lock-timeout).
const DefaultLockTimeout = 2 * time.Minute

// LockTimeoutError is a lock still held by another process after the wait.
type LockTimeoutError struct {
	Path   string        // the lock file
	Holder string        // "pid 1234 (patchkit refresh coredns)", or "" when unknown
	After  time.Duration // the wait
}

func (e *LockTimeoutError) Error() string {
	holder, end := "another process", "end it"
	if e.Holder != "" {
		holder = e.Holder
		if pid, _, ok := strings.Cut(strings.TrimPrefix(e.Holder, "pid "), " "); ok {
			end = "end it (a stopped job: fg, or kill " + pid + ")"
		}
	}
	return fmt.Sprintf("the repository lock %s is held by %s: still held after %s (--lock-timeout): let it finish or %s, then run this again", e.Path, holder, e.After, end)
}

// Acquire takes root's repository lock: an exclusive flock on LockPath,
// which every writing command holds while it checks and writes its files.
// While another process holds it, Acquire calls waiting once with the
// holder (Holder's words, "" when unknown) and retries for timeout (0:
// DefaultLockTimeout), then fails with a *LockTimeoutError; it gives up at
// once when ctx ends (SIGINT and SIGTERM end it: a cancelled command
// writes nothing).
func Acquire(ctx context.Context, root string, waiting func(holder string), timeout time.Duration) (*Lock, error) {
	path := LockPath(root)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the repository lock: %w", err)
	}
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	told := false
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return &Lock{f: f}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if !told && waiting != nil {
			waiting(holderOf(f))
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the repository lock %s: %w", path, context.Cause(ctx))
		case <-deadline.C:
			holder := holderOf(f)
			f.Close()
			return nil, &LockTimeoutError{Path: path, Holder: holder, After: timeout}
		case <-time.After(pollInterval):
		}
	}
}

// holderOf names the process that holds the flock on f, from /proc/locks
// and /proc/PID/cmdline: "pid 1234 (patchkit refresh coredns)". It is ""
// where /proc does not say (another system, another pid namespace).
func holderOf(f *os.File) string {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return ""
	}
	locks, err := os.ReadFile("/proc/locks")
	if err != nil {
		return ""
	}
	// "1: FLOCK  ADVISORY  WRITE 1234 08:01:123456 0 EOF"; the device
	// is major:minor in hex.
	id := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	for _, line := range strings.Split(string(locks), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 6 || fields[1] != "FLOCK" || fields[5] != id {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil || pid == os.Getpid() {
			continue
		}
		return fmt.Sprintf("pid %d (%s)", pid, commandOf(pid))
	}
	return ""
}

// commandOf is pid's command line, printable, at most 200 bytes; "?" when
// unknown.
func commandOf(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(b) == 0 {
		return "?"
	}
	s := strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, string(b)))
	if args := strings.Fields(s); len(args) > 0 {
		args[0] = filepath.Base(args[0])
		s = strings.Join(args, " ")
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// Release drops the lock.
func (l *Lock) Release() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
