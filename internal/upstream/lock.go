package upstream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// fileLock is an flock(2) on a lock file. Locks taken through separate opens
// exclude each other even within one process, so goroutines are covered too.
type fileLock struct {
	f       *os.File
	readers string // the readers lock path this lock counts in openReaders, or ""
}

// lockFile takes a shared (unix.LOCK_SH) or exclusive (unix.LOCK_EX) lock on
// path, creating the file, and waits for it until ctx is done. It waits in a
// blocking flock(2), so a waiter shows in /proc/locks ("->"), and gives up
// the wait when ctx is done (the abandoned flock releases on its return).
func lockFile(ctx context.Context, path string, how int) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening lock %s: %w", path, err)
	}
	err = unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
	if err == nil {
		return &fileLock{f: f}, nil
	}
	if !errors.Is(err, unix.EWOULDBLOCK) {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	done := make(chan error, 1)
	go func() {
		for {
			err := unix.Flock(int(f.Fd()), how)
			if !errors.Is(err, unix.EINTR) {
				done <- err
				return
			}
		}
	}()
	select {
	case err := <-done:
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		return &fileLock{f: f}, nil
	case <-ctx.Done():
		f.Close()
		return nil, fmt.Errorf("waiting for lock %s: %w", path, ctx.Err())
	}
}

// unlock releases the lock. Closing the file releases it too.
func (l *fileLock) unlock() {
	if l == nil {
		return
	}
	unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	l.f.Close()
}

// The locks of a cache, always taken in this order:
//
//   - <key>.readers.lock: every open Cache holds it shared from Open to Close,
//     so that whatever it reads stays in place; a repair, which replaces the
//     cache directory, holds it exclusive, and so waits until no process
//     reads the cache.
//   - <key>.lock: shared for a moment to read refs; exclusive to fetch (which
//     only adds files), to clear what killed runs left, and to repair.
//
// Nobody waits for the readers lock while holding <key>.lock, so the two
// cannot deadlock.

// openReaders counts, per readers lock, the Caches of this process that hold
// it shared: a repair in this process must not wait for its own readers.
var openReaders = struct {
	sync.Mutex
	n map[string]int
}{n: map[string]int{}}

// lockReaders takes the readers lock of c shared.
func (c *Cache) lockReaders(ctx context.Context) (*fileLock, error) {
	lk, err := lockFile(ctx, c.readersLockPath(), unix.LOCK_SH)
	if err != nil {
		return nil, err
	}
	openReaders.Lock()
	openReaders.n[c.readersLockPath()]++
	openReaders.Unlock()
	lk.readers = c.readersLockPath()
	return lk, nil
}

// lockWriters takes the readers lock of c exclusive, once no other Cache of
// this process holds it.
func (c *Cache) lockWriters(ctx context.Context) (*fileLock, error) {
	openReaders.Lock()
	n := openReaders.n[c.readersLockPath()]
	openReaders.Unlock()
	if n > 0 {
		return nil, fmt.Errorf("the cache %s is still open in this process (%d), so it cannot be replaced now", c.Path(), n)
	}
	return lockFile(ctx, c.readersLockPath(), unix.LOCK_EX)
}

// release unlocks a lock taken by lockReaders or lockFile. It is safe on nil.
func (l *fileLock) release() {
	if l == nil {
		return
	}
	if l.readers != "" {
		openReaders.Lock()
		openReaders.n[l.readers]--
		openReaders.Unlock()
		l.readers = ""
	}
	l.unlock()
}
