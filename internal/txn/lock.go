package txn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// Acquire takes root's repository lock: an exclusive flock on LockPath,
// which every writing command holds while it checks and writes its files.
// While another process holds it, Acquire calls waiting once and retries
// until ctx ends (SIGINT and SIGTERM end it: a cancelled command writes
// nothing).
func Acquire(ctx context.Context, root string, waiting func()) (*Lock, error) {
	path := LockPath(root)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the repository lock: %w", err)
	}
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
			waiting()
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the repository lock %s: %w", path, context.Cause(ctx))
		case <-time.After(pollInterval):
		}
	}
}

// Release drops the lock.
func (l *Lock) Release() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
