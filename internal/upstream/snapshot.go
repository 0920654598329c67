package upstream

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/patchkit/patchkit/internal/tree"
)

// Snapshot is the tree of one commit, read lazily from the object store of
// the cache without a checkout. It is safe for concurrent use.
type Snapshot struct {
	commit plumbing.Hash
	root   plumbing.Hash
	c      *Cache      // turns read errors into cache faults
	mu     *sync.Mutex // the cache's: serializes use of the object store
	st     storer.EncodedObjectStorer
	// dirs holds the entries of each directory read so far, by path ("" is the root).
	dirs map[string]map[string]object.TreeEntry
}

var (
	_ tree.Source = (*Snapshot)(nil)
	_ tree.Walker = (*Snapshot)(nil)
)

// Source returns the tree of commit (a commit id, or any ref Resolve takes).
func (c *Cache) Source(commit string) (*Snapshot, error) {
	id, err := c.Resolve(commit)
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{commit: plumbing.NewHash(id), c: c, mu: &c.mu, dirs: map[string]map[string]object.TreeEntry{}}
	err = c.withStore(func(s *store) error {
		cm, err := readCommit(s.st, snap.commit)
		if err != nil {
			return c.objectFault(fmt.Errorf("reading commit %s: %w", id, err))
		}
		snap.root = cm.TreeHash
		snap.st = s.st
		return nil
	})
	if err != nil {
		return nil, c.errorf("reading the tree of %s in %s: %w", id, c.redacted, err)
	}
	return snap, nil
}

// Commit is the commit id whose tree the snapshot holds.
func (s *Snapshot) Commit() string { return s.commit.String() }

// Read implements tree.Source. A submodule is a tree.Gitlink whose Data is
// the hex id of its commit; a symlink's Data is its target.
func (s *Snapshot) Read(p string) (*tree.File, bool, error) {
	e, ok, err := s.entry(p)
	if err != nil || !ok || e.Mode == filemode.Dir {
		return nil, false, s.c.objectFault(err)
	}
	f, err := s.file(e, true)
	if err != nil {
		return nil, false, s.c.objectFault(fmt.Errorf("reading %s at %s: %w", p, s.commit, err))
	}
	return f, true, nil
}

// Entry returns the tree entry at p (a file, symlink, submodule or
// directory); ok is false when nothing is there, which includes a path whose
// leading directory is a file and paths that are not clean relative paths.
func (s *Snapshot) Entry(p string) (object.TreeEntry, bool, error) {
	e, ok, err := s.entry(p)
	if err != nil || !ok {
		return object.TreeEntry{}, false, s.c.objectFault(err)
	}
	return *e, true, nil
}

// IsDir implements tree.Source. The root ("" or ".") is a directory.
func (s *Snapshot) IsDir(p string) (bool, error) {
	if p == "" || p == "." {
		return true, nil
	}
	e, ok, err := s.entry(p)
	if err != nil || !ok {
		return false, s.c.objectFault(err)
	}
	return e.Mode == filemode.Dir, nil
}

// Walk implements tree.Walker: every file, symlink and submodule, in git's
// tree order. fn may call Read.
func (s *Snapshot) Walk(fn func(p string, f *tree.File) error) error {
	return s.c.objectFault(s.walk("", s.root, fn))
}

func (s *Snapshot) walk(prefix string, h plumbing.Hash, fn func(string, *tree.File) error) error {
	s.mu.Lock()
	t, err := readTree(s.st, h)
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("reading tree %s of %s at %s: %w", h, dirName(prefix), s.commit, err)
	}
	for _, e := range t.Entries {
		p := e.Name
		if prefix != "" {
			p = prefix + "/" + e.Name
		}
		if e.Mode == filemode.Dir {
			if err := s.walk(p, e.Hash, fn); err != nil {
				return err
			}
			continue
		}
		f, err := s.file(&e, false)
		if err != nil {
			return fmt.Errorf("reading %s at %s: %w", p, s.commit, err)
		}
		if err := fn(p, f); err != nil {
			return err
		}
	}
	return nil
}

func dirName(p string) string {
	if p == "" {
		return "the root"
	}
	return p
}

// file reads the content of a non-directory entry; with memo, through the
// cache's memo of verified blobs.
func (s *Snapshot) file(e *object.TreeEntry, memo bool) (*tree.File, error) {
	var mode tree.Mode
	switch e.Mode {
	case filemode.Regular, filemode.Deprecated:
		mode = tree.Regular
	case filemode.Executable:
		mode = tree.Executable
	case filemode.Symlink:
		mode = tree.Symlink
	case filemode.Submodule:
		return &tree.File{Mode: tree.Gitlink, Data: []byte(e.Hash.String())}, nil
	default:
		return nil, fmt.Errorf("unsupported file mode %s", e.Mode)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if data, ok := s.c.memo.blobs[e.Hash]; ok && memo {
		return &tree.File{Mode: mode, Data: data}, nil
	}
	data, err := readBlob(s.st, e.Hash)
	if err != nil {
		return nil, err
	}
	if memo {
		s.c.memo.addBlob(e.Hash, data)
	}
	return &tree.File{Mode: mode, Data: data}, nil
}

// entry finds the tree entry at p. ok is false when nothing is there, which
// includes paths that are not clean relative paths.
func (s *Snapshot) entry(p string) (*object.TreeEntry, bool, error) {
	if tree.Clean(p) != nil {
		return nil, false, nil
	}
	dir, base := "", p
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		dir, base = p[:i], p[i+1:]
	}
	entries, err := s.dir(dir)
	if err != nil || entries == nil {
		return nil, false, err
	}
	e, ok := entries[base]
	if !ok {
		return nil, false, nil
	}
	return &e, true, nil
}

// dir returns the entries of directory p, or nil when p is not a directory.
func (s *Snapshot) dir(p string) (map[string]object.TreeEntry, error) {
	s.mu.Lock()
	entries, ok := s.dirs[p]
	s.mu.Unlock()
	if ok {
		return entries, nil
	}
	h := s.root
	if p != "" {
		parent, base := "", p
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			parent, base = p[:i], p[i+1:]
		}
		pe, err := s.dir(parent)
		if err != nil || pe == nil {
			return nil, err
		}
		e, ok := pe[base]
		if !ok || e.Mode != filemode.Dir {
			return nil, nil
		}
		h = e.Hash
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if entries, ok := s.c.memo.trees[h]; ok {
		s.dirs[p] = entries
		return entries, nil
	}
	t, err := readTree(s.st, h)
	if err != nil {
		return nil, fmt.Errorf("reading tree %s of %s at %s: %w", h, dirName(p), s.commit, err)
	}
	entries = make(map[string]object.TreeEntry, len(t.Entries))
	for _, e := range t.Entries {
		entries[e.Name] = e
	}
	s.dirs[p] = entries
	s.c.memo.addTree(h, entries)
	return entries, nil
}

// objectMemo keeps the trees and blobs that Snapshots read and verified, by
// object id, for the other Snapshots of the cache: refs of one upstream
// share most of them (obsolete-check reads the same few files at each of
// dozens of refs). Objects are immutable and named by their content, so an
// entry stays right whatever happens to the store; the memo holds at most
// memoBytes of blob content and memoTrees trees. Guarded by Cache.mu; the maps and slices it
// hands out are never modified.
type objectMemo struct {
	blobs     map[plumbing.Hash][]byte
	trees     map[plumbing.Hash]map[string]object.TreeEntry
	blobBytes int
}

// memoBytes bounds the blob content an objectMemo holds, memoTrees the
// number of its trees.
const (
	memoBytes = 64 << 20
	memoTrees = 1 << 16
)

func (m *objectMemo) addBlob(h plumbing.Hash, data []byte) {
	if m.blobBytes+len(data) > memoBytes {
		return
	}
	if m.blobs == nil {
		m.blobs = map[plumbing.Hash][]byte{}
	}
	m.blobs[h] = data
	m.blobBytes += len(data)
}

func (m *objectMemo) addTree(h plumbing.Hash, entries map[string]object.TreeEntry) {
	if len(m.trees) >= memoTrees {
		return
	}
	if m.trees == nil {
		m.trees = map[plumbing.Hash]map[string]object.TreeEntry{}
	}
	m.trees[h] = entries
}

// walkerFunc adapts a function to tree.Walker.
type walkerFunc func(fn func(string, *tree.File) error) error

func (w walkerFunc) Walk(fn func(string, *tree.File) error) error { return w(fn) }

// Materialize writes the full tree of commit into dir, atomically: the tree is
// built next to dir and renamed into place when complete, replacing dir.
func (c *Cache) Materialize(ctx context.Context, commit, dir string) error {
	snap, err := c.Source(commit)
	if err != nil {
		return err
	}
	w := walkerFunc(func(fn func(string, *tree.File) error) error {
		return snap.Walk(func(p string, f *tree.File) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return fn(p, f)
		})
	})
	if err := tree.WriteAtomic(dir, w, nil); err != nil {
		return c.errorf("materializing %s of %s into %s: %w", snap.Commit(), c.redacted, dir, err)
	}
	return nil
}
