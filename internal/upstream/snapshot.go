package upstream

import (
	"context"
	"errors"
	"fmt"
	"sort"
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
	repo   string // the store's directory, whose packs Walk reads
	pool   *blobPool
	walked packStats // what the last Walk's packSet did (for tests)
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
	snap := &Snapshot{commit: plumbing.NewHash(id), c: c, mu: &c.mu, dirs: map[string]map[string]object.TreeEntry{}, pool: &blobPool{}}
	err = c.withStore(func(s *store) error {
		cm, err := readCommit(s.st, snap.commit)
		if err != nil {
			return c.objectFault(fmt.Errorf("reading commit %s: %w", id, err))
		}
		snap.root = cm.TreeHash
		snap.st, snap.repo = s.st, s.path
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

// Walk implements tree.Walker: every file, symlink and submodule, in no
// particular order: first those the packs do not hold or the memo has,
// then the packed blobs in the order their delta chains give. fn may call
// Read.
//
// The packed blobs are read through a packSet (see packSet.forest): each
// object of their delta chains is decoded once, only the chain at hand is
// held, and each blob is hashed once. Blobs no pack holds (loose
// objects), and every blob when the packs cannot be opened, are read
// through go-git as Read does.
func (s *Snapshot) Walk(fn func(p string, f *tree.File) error) error {
	var ps *packSet
	if s.repo != "" {
		ps, _ = openPacks(s.repo)
	}
	if ps != nil {
		defer func() {
			s.mu.Lock()
			s.walked = ps.stats
			s.mu.Unlock()
			ps.close()
		}()
		ps.pool = s.pool
	}
	var files []walkEntry
	if err := s.collect(ps, "", s.root, &files); err != nil {
		return s.c.objectFault(err)
	}
	byNode := map[*packNode][]int{}
	if ps != nil {
		ps.nodes = map[packKey]*packNode{} // the trees' chains are done with
		for i := range files {
			e := &files[i]
			if !e.blob() || s.memoed(e) {
				continue
			}
			if k, ok := ps.locate(e.e.Hash); ok {
				if err := ps.plan(k); err != nil {
					return s.c.objectFault(fmt.Errorf("reading %s at %s: %w", e.p, s.commit, &objectError{e.e.Hash, err}))
				}
				n := ps.nodes[k]
				n.want, n.id = true, e.e.Hash
				byNode[n] = append(byNode[n], i)
				e.packed = true
			}
		}
	}
	for i := range files {
		if e := &files[i]; !e.packed {
			if err := s.walkFile(e, fn); err != nil {
				return err
			}
		}
	}
	if len(byNode) == 0 {
		return nil
	}
	bad, err := ps.forest(func(n *packNode, data []byte, reusable bool) error {
		if n.otype != plumbing.BlobObject {
			return &objectError{n.id, plumbing.ErrObjectNotFound}
		}
		for _, i := range byNode[n] {
			e := &files[i]
			mode, err := fileMode(e.e.Mode)
			if err != nil {
				return fmt.Errorf("reading %s at %s: %w", e.p, s.commit, err)
			}
			f := &tree.File{Mode: mode, Data: data}
			if reusable && len(byNode[n]) == 1 {
				s.pool.own(f)
			}
			e.packed = false // done
			if err := fn(e.p, f); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errTooLarge) {
		// An object too large to read whole: go-git reads the rest.
		for i := range files {
			if e := &files[i]; e.packed {
				if err := s.walkFile(e, fn); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err != nil && bad != nil {
		p := "an object"
		if is := byNode[bad]; len(is) > 0 {
			p = files[is[0]].p
		}
		return s.c.objectFault(fmt.Errorf("reading %s at %s: %w", p, s.commit, &objectError{bad.id, err}))
	}
	var oe *objectError
	if errors.As(err, &oe) {
		return s.c.objectFault(err)
	}
	return err
}

// memoed reports whether the memo holds e's blob (Read verified it).
func (s *Snapshot) memoed(e *walkEntry) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.c.memo.blobs[e.e.Hash]
	return ok
}

// walkFile reads e through the memo or go-git and gives it to fn.
func (s *Snapshot) walkFile(e *walkEntry, fn func(p string, f *tree.File) error) error {
	s.mu.Lock()
	data, ok := s.c.memo.blobs[e.e.Hash]
	s.mu.Unlock()
	if ok && e.blob() {
		mode, err := fileMode(e.e.Mode)
		if err != nil {
			return s.c.objectFault(fmt.Errorf("reading %s at %s: %w", e.p, s.commit, err))
		}
		return fn(e.p, &tree.File{Mode: mode, Data: data})
	}
	f, err := s.file(&e.e, false)
	if err != nil {
		return s.c.objectFault(fmt.Errorf("reading %s at %s: %w", e.p, s.commit, err))
	}
	return fn(e.p, f)
}

// walkEntry is one file of a walk: its path and tree entry, and whether
// the walk reads its blob from the packs (until it has).
type walkEntry struct {
	p      string
	e      object.TreeEntry
	packed bool
}

// blob reports whether the entry's content is a blob to read.
func (w *walkEntry) blob() bool { return w.e.Mode != filemode.Submodule }

// collect appends the files of tree h (at prefix) to files, in git's tree
// order.
func (s *Snapshot) collect(ps *packSet, prefix string, h plumbing.Hash, files *[]walkEntry) error {
	t, err := s.walkTree(ps, h)
	if err != nil {
		return fmt.Errorf("reading tree %s of %s at %s: %w", h, dirName(prefix), s.commit, err)
	}
	for _, e := range t.Entries {
		p := e.Name
		if prefix != "" {
			p = prefix + "/" + e.Name
		}
		if e.Mode == filemode.Dir {
			if err := s.collect(ps, p, e.Hash, files); err != nil {
				return err
			}
			continue
		}
		*files = append(*files, walkEntry{p: p, e: e})
	}
	return nil
}

// walkTree reads and verifies tree h through ps when a pack holds it,
// through go-git otherwise.
func (s *Snapshot) walkTree(ps *packSet, h plumbing.Hash) (*object.Tree, error) {
	s.mu.Lock()
	entries, ok := s.c.memo.trees[h]
	s.mu.Unlock()
	if ok {
		return memoTree(h, entries), nil
	}
	if ps != nil {
		if k, ok := ps.locate(h); ok {
			err := ps.plan(k)
			var typ plumbing.ObjectType
			var data []byte
			if err == nil {
				typ, data, _, err = ps.read(k, h)
			}
			if errors.Is(err, errTooLarge) {
				s.mu.Lock()
				defer s.mu.Unlock()
				return readTree(s.st, h)
			}
			if err == nil && typ != plumbing.TreeObject {
				err = plumbing.ErrObjectNotFound
			}
			if err != nil {
				return nil, &objectError{h, err}
			}
			t, err := object.DecodeTree(s.st, verified(plumbing.TreeObject, h, data))
			if err != nil {
				return nil, &objectError{h, err}
			}
			return t, nil
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return readTree(s.st, h)
}

// memoTree is a tree of the memo (verified when read) with its entries in
// git's order: by name, a directory's name as if it ended in a slash.
func memoTree(h plumbing.Hash, entries map[string]object.TreeEntry) *object.Tree {
	t := &object.Tree{Hash: h, Entries: make([]object.TreeEntry, 0, len(entries))}
	for _, e := range entries {
		t.Entries = append(t.Entries, e)
	}
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(t.Entries, func(i, j int) bool { return key(t.Entries[i]) < key(t.Entries[j]) })
	return t
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
	if e.Mode == filemode.Submodule {
		return &tree.File{Mode: tree.Gitlink, Data: []byte(e.Hash.String())}, nil
	}
	mode, err := fileMode(e.Mode)
	if err != nil {
		return nil, err
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

// fileMode is the tree.Mode of a file, symlink or submodule entry.
func fileMode(m filemode.FileMode) (tree.Mode, error) {
	switch m {
	case filemode.Regular, filemode.Deprecated:
		return tree.Regular, nil
	case filemode.Executable:
		return tree.Executable, nil
	case filemode.Symlink:
		return tree.Symlink, nil
	case filemode.Submodule:
		return tree.Gitlink, nil
	}
	return 0, fmt.Errorf("unsupported file mode %s", m)
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

// ctxWalker walks snap until ctx is done, and gives its files back.
type ctxWalker struct {
	ctx  context.Context
	snap *Snapshot
}

func (w ctxWalker) Walk(fn func(string, *tree.File) error) error {
	return w.snap.Walk(func(p string, f *tree.File) error {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		return fn(p, f)
	})
}

func (w ctxWalker) Recycle(f *tree.File) { w.snap.Recycle(f) }

// Materialize writes the full tree of commit into dir, atomically: the tree is
// built next to dir and renamed into place when complete, replacing dir.
func (c *Cache) Materialize(ctx context.Context, commit, dir string) error {
	snap, err := c.Source(commit)
	if err != nil {
		return err
	}
	w := ctxWalker{ctx, snap}
	if err := tree.WriteAtomic(dir, w, nil); err != nil {
		return c.errorf("materializing %s of %s into %s: %w", snap.Commit(), c.redacted, dir, err)
	}
	return nil
}
