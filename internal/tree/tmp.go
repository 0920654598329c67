package tree

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// tmpPrefix names the temporary trees WriteAtomic builds beside their target.
const tmpPrefix = ".patchkit-tree-"

// A temporary tree is owned by its lock file: <tmp>.lock, created before the
// tree and held under flock(2) by the writing process until the tree is in
// place. A killed writer's lock is released by the kernel, so the next
// WriteAtomic into the same parent directory finds the lock free and removes
// the tree (and the replaced tree, <tmp>.old). A flock, unlike a recorded
// pid, cannot be fooled by a recycled pid or by a writer on another host
// sharing the directory over a local mount.

// tmpTree is a temporary tree and its held lock.
type tmpTree struct {
	dir  string
	lock *os.File
}

// newTmpTree creates a locked, empty temporary tree in parent.
func newTmpTree(parent string) (*tmpTree, error) {
	var lf *os.File
	for lf == nil {
		f, err := os.CreateTemp(parent, tmpPrefix+"*.lock")
		if err != nil {
			return nil, fmt.Errorf("creating temporary tree: %w", err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			continue // a cleaner took it for a dead writer's and removes it
		}
		// A cleaner may have removed the file between its creation and the
		// lock: then the lock protects nothing, so start again.
		if held, err := f.Stat(); err == nil {
			if named, err := os.Stat(f.Name()); err == nil && os.SameFile(held, named) {
				lf = f
				continue
			}
		}
		f.Close()
	}
	dir := strings.TrimSuffix(lf.Name(), ".lock")
	if err := os.Mkdir(dir, 0o755); err != nil { // git checkout's mode, less the umask
		os.Remove(lf.Name())
		lf.Close()
		return nil, fmt.Errorf("creating temporary tree: %w", err)
	}
	return &tmpTree{dir: dir, lock: lf}, nil
}

// done removes the lock file, then releases it.
func (t *tmpTree) done() {
	os.Remove(t.lock.Name())
	t.lock.Close()
}

// removeStale removes the temporary trees in parent that no live process
// writes: those whose lock file is free, and those without one (left by a
// version that did not lock them). It never waits.
func removeStale(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, tmpPrefix) || strings.HasSuffix(n, ".lock") {
			continue
		}
		base := strings.TrimSuffix(n, ".old")
		lockPath := filepath.Join(parent, base+".lock")
		lf, err := os.OpenFile(lockPath, os.O_RDWR, 0)
		if errors.Is(err, os.ErrNotExist) {
			// A live writer creates its lock before its tree and removes it
			// after: without one, nothing owns the tree.
			os.RemoveAll(filepath.Join(parent, n))
			continue
		}
		if err != nil {
			continue
		}
		if unix.Flock(int(lf.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			os.RemoveAll(filepath.Join(parent, base))
			os.RemoveAll(filepath.Join(parent, base+".old"))
			os.Remove(lockPath)
		}
		lf.Close()
	}
	// Lock files whose tree is gone and whose writer is dead.
	for _, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, tmpPrefix) || !strings.HasSuffix(n, ".lock") {
			continue
		}
		lf, err := os.OpenFile(filepath.Join(parent, n), os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if unix.Flock(int(lf.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			base := filepath.Join(parent, strings.TrimSuffix(n, ".lock"))
			os.RemoveAll(base)
			os.RemoveAll(base + ".old")
			os.Remove(filepath.Join(parent, n))
		}
		lf.Close()
	}
}
