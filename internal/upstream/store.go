package upstream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"golang.org/x/sys/unix"
)

// store is an open bare repository.
type store struct {
	path string
	st   *filesystem.Storage
	repo *git.Repository
	// packs lists the pack files when the store last (re)started indexing
	// them (see reindexIfChanged).
	packs string
}

func openStore(path string) (*store, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", path)
	}
	// Keep pack files open: reading a tree of thousands of blobs would
	// otherwise reopen the pack for every object.
	st := filesystem.NewStorageWithOptions(bufferedIdx{osfs.New(path)}, cache.NewObjectLRUDefault(), filesystem.Options{KeepDescriptors: true})
	repo, err := git.Open(st, nil)
	if err != nil {
		st.Close()
		return nil, err
	}
	return &store{path: path, st: st, repo: repo, packs: packNames(path)}, nil
}

func (s *store) close() error { return s.st.Close() }

// check is the integrity check of a cache: HEAD resolves to a commit whose
// tree is present (or is unborn, in a cache that holds refs or is partial),
// every ref points at an object that is present, and every shallow commit
// is present.
func (s *store) check() error {
	unborn, err := s.checkHead()
	if err != nil {
		return err
	}
	refs, err := s.st.IterReferences()
	if err != nil {
		return fmt.Errorf("listing refs: %w", err)
	}
	seen := map[plumbing.Hash]bool{}
	present, done := s.presence()
	defer done()
	err = refs.ForEach(func(r *plumbing.Reference) error {
		if r.Type() != plumbing.HashReference || seen[r.Hash()] {
			return nil
		}
		seen[r.Hash()] = true
		if err := present(r.Hash()); err != nil {
			return fmt.Errorf("ref %s points at %s: %w", r.Name(), r.Hash(), err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if unborn && len(seen) == 0 && !isPartial(s.path) {
		// A complete cache with no ref and no HEAD is a clone that never
		// finished, or a cache whose refs are lost.
		return errors.New("HEAD is unborn and the cache holds no ref")
	}
	shallow, err := s.st.Shallow()
	if err != nil {
		return fmt.Errorf("reading the shallow list: %w", err)
	}
	for _, h := range shallow {
		if err := s.st.HasEncodedObject(h); err != nil {
			return fmt.Errorf("shallow commit %s: %w", h, err)
		}
	}
	return nil
}

// presence returns a check of whether object h is in s, for many objects
// (every ref's): an object a pack index lists is present, with no need to
// read it (go-git would inflate each of an upstream's hundreds of tags);
// what no index lists is looked for as go-git does (has). The indexes are
// read on the first call; done releases them.
func (s *store) presence() (present func(h plumbing.Hash) error, done func()) {
	var packs *packSet
	opened := false
	present = func(h plumbing.Hash) error {
		if !opened {
			packs, _ = openPacks(s.path)
			opened = true
		}
		if _, ok := packs.locate(h); ok {
			return nil
		}
		return s.has(h)
	}
	return present, func() {
		if packs != nil {
			packs.close()
		}
	}
}

// has reports whether object h is present. Once the pack indexes are
// loaded (checkHead read a commit) go-git looks in the packs first, where a
// fetched cache keeps every object; HasEncodedObject would first look for a
// loose object file, a path walk and a failed open for each of an upstream's
// hundreds of tags. The objects that refs point at are commits and tags,
// small to read.
func (s *store) has(h plumbing.Hash) error {
	hasReads.Add(1)
	_, err := s.st.EncodedObject(plumbing.AnyObject, h)
	return err
}

// hasReads counts the objects has read (for tests).
var hasReads atomic.Int64

// checkHead checks that HEAD resolves to a commit whose tree is present.
// HEAD itself must be there. A HEAD naming a branch the cache does not
// have is unborn (the answer is true), which git fsck takes as no damage:
// the upstream advertises no HEAD (a mirror holding only tags, a default
// branch deleted), so the cache's HEAD keeps the name it was made with, or
// a partial cache, which fetches only the refs asked for, has not fetched
// the branch yet. Resolving HEAD then finds nothing (ErrRefNotFound);
// check asks that such a cache hold refs, or be partial.
func (s *store) checkHead() (unborn bool, err error) {
	sym, err := s.st.Reference(plumbing.HEAD)
	if err != nil {
		return false, fmt.Errorf("reading HEAD: %w", err)
	}
	head, err := s.repo.Reference(plumbing.HEAD, true)
	if errors.Is(err, plumbing.ErrReferenceNotFound) && sym.Type() == plumbing.SymbolicReference {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("resolving HEAD: %w", err)
	}
	commit, err := object.GetCommit(s.st, head.Hash())
	if err != nil {
		return false, fmt.Errorf("reading HEAD commit %s: %w", head.Hash(), err)
	}
	if err := s.st.HasEncodedObject(commit.TreeHash); err != nil {
		return false, fmt.Errorf("reading tree %s of HEAD: %w", commit.TreeHash, err)
	}
	return false, nil
}

// open merges the cache's packs when they are many and nobody reads it
// (consolidate), takes the readers lock shared and prepares the cache (see
// prepare).
// A damaged cache is repaired online, once no other process reads it, and
// is a *CacheFaultError offline.
func (c *Cache) open(ctx context.Context) error {
	c.consolidate(ctx)
	for attempt := 0; ; attempt++ {
		rl, err := c.lockReaders(ctx)
		if err != nil {
			return err
		}
		s, damage, err := c.prepare(ctx)
		if err == nil && damage == nil {
			c.store, c.readers = s, rl
			return nil
		}
		rl.release()
		if err != nil {
			return err
		}
		if c.opts.offline || attempt > 0 {
			return c.fault("", damage)
		}
		if err := c.repair(ctx, "", false); err != nil {
			return fmt.Errorf("repairing the cache %s, which is damaged (%v): %w", c.Path(), damage, err)
		}
	}
}

// prepare runs under the exclusive lock: it clears what interrupted runs left
// behind, clones a missing cache, and returns the open store of a healthy
// one, or what is wrong with a damaged one (damage).
func (c *Cache) prepare(ctx context.Context) (s *store, damage, err error) {
	lk, err := lockFile(ctx, c.lockPath(), unix.LOCK_EX)
	if err != nil {
		return nil, nil, err
	}
	defer lk.unlock()
	c.removeLeftovers()
	path := c.Path()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		s, damage := c.inspect()
		return s, damage, nil
	}
	if c.opts.offline {
		return nil, nil, fmt.Errorf("%w: nothing cached in %s yet; run once without --offline to fill the cache", ErrOffline, c.dir)
	}
	if err := c.cloneInto(ctx, path); err != nil {
		return nil, nil, err
	}
	if err := os.Remove(c.markerPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("removing %s: %w", c.markerPath(), err)
	}
	s, err = openStore(path)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the fresh clone %s: %w", path, err)
	}
	if err := s.check(); err != nil {
		s.close()
		return nil, nil, fmt.Errorf("checking the fresh clone %s: %w", path, err)
	}
	return s, nil, nil
}

// inspect opens the cache and runs its integrity check; it returns the open
// store, or why the cache is damaged. Call it under the exclusive lock.
func (c *Cache) inspect() (*store, error) {
	if _, err := os.Stat(c.markerPath()); err == nil {
		return nil, errors.New("an interrupted fetch left it half-updated")
	}
	s, err := openStore(c.Path())
	if err != nil {
		return nil, err
	}
	if err := s.check(); err != nil {
		s.close()
		return nil, err
	}
	checkCommitGraph(c.Path())
	return s, nil
}

// Repair replaces the cache with a fresh clone of the upstream, swapped in
// atomically under the exclusive locks once no other process reads the
// cache. Offline, it is a *CacheFaultError. An open Cache stays usable; every
// other Cache of this process on the same upstream must be closed first.
//
// A repair clones rather than fetches: a fetch tells the upstream which
// commits the cache has, so the upstream never sends again an object the
// cache lost.
func (c *Cache) Repair(ctx context.Context) error { return c.repairOpen(ctx, "", true) }

// repairOpen is Repair. Unless force, a cache that another process repaired
// meanwhile (it passes the check and object id reads back intact) is kept.
func (c *Cache) repairOpen(ctx context.Context, id string, force bool) error {
	if c.opts.offline {
		return c.fault(id, errors.New("the cache cannot be repaired offline"))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	open := !c.closed && c.store != nil
	if open {
		c.store.close()
		c.store = nil
		c.readers.release()
		c.readers = nil
	}
	err := c.repair(ctx, id, force)
	if err != nil {
		err = c.errorf("repairing the cache of %s: %w", c.redacted, err)
	}
	if !open {
		return err
	}
	rl, lerr := c.lockReaders(ctx)
	if lerr != nil {
		c.closed = true
		return errors.Join(err, lerr)
	}
	s, oerr := openStore(c.Path())
	if oerr != nil {
		rl.release()
		c.closed = true
		return errors.Join(err, oerr)
	}
	c.store, c.readers = s, rl
	return err
}

// repair takes the readers lock exclusive, then the exclusive lock, and
// clones the cache afresh unless it is healthy now (see repairOpen).
func (c *Cache) repair(ctx context.Context, id string, force bool) error {
	wl, err := c.lockWriters(ctx)
	if err != nil {
		return err
	}
	defer wl.unlock()
	lk, err := lockFile(ctx, c.lockPath(), unix.LOCK_EX)
	if err != nil {
		return err
	}
	defer lk.unlock()
	c.removeLeftovers()
	if !force {
		if s, damage := c.inspect(); damage == nil {
			ok := id == "" || verifyObject(s, id) == nil
			s.close()
			if ok {
				return nil
			}
		}
	}
	if err := c.cloneInto(ctx, c.Path()); err != nil {
		return err
	}
	if err := os.Remove(c.markerPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", c.markerPath(), err)
	}
	return nil
}

// verifyObject reads object id of s in full and checks it.
func verifyObject(s *store, id string) error {
	_, _, err := readVerified(s.st, plumbing.AnyObject, plumbing.NewHash(id))
	return err
}

// removeLeftovers deletes what killed runs left: temporary clones, replaced
// caches, the temporary packs, objects and packed-refs of a fetch, and
// the temporary packs of a merge (consolidate). It
// runs under the exclusive lock, which every clone and fetch holds, so no
// live run is writing them; a replaced cache has no reader left, since
// caches are replaced under the readers lock.
func (c *Cache) removeLeftovers() {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, c.tmpPrefix()) || strings.HasPrefix(n, c.oldPrefix()) {
			os.RemoveAll(filepath.Join(c.dir, n))
		}
	}
	removeMatching(c.Path(), "._packed-refs")
	// git fetch's temporary files, and git repack's (consolidate)
	removeMatching(filepath.Join(c.Path(), "objects", "pack"), "tmp_pack_", "tmp_idx_", "tmp_obj_", "tmp_rev_", "packfile", ".tmp-")
	removeGitLocks(c.Path())
	removeGraphLeftovers(c.Path())
}

// removeGitLocks removes the lock files a killed git fetch leaves (a ref's
// .lock, packed-refs.lock, shallow.lock), which would make every later fetch
// fail.
func removeGitLocks(repo string) {
	for _, n := range []string{"packed-refs.lock", "shallow.lock", "HEAD.lock", "config.lock", "index.lock"} {
		os.Remove(filepath.Join(repo, n))
	}
	filepath.WalkDir(filepath.Join(repo, "refs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".lock") {
			os.Remove(p)
		}
		return nil
	})
}

// removeMatching removes the files of dir whose names start with a prefix.
func removeMatching(dir string, prefixes ...string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		for _, p := range prefixes {
			if strings.HasPrefix(e.Name(), p) && !e.IsDir() {
				os.Remove(filepath.Join(dir, e.Name()))
				break
			}
		}
	}
}

// cloneInto clones the upstream into a temporary directory next to path and
// renames it into place once complete, replacing whatever was at path.
func (c *Cache) cloneInto(ctx context.Context, path string) (err error) {
	tmp, err := os.MkdirTemp(c.dir, c.tmpPrefix())
	if err != nil {
		return fmt.Errorf("creating a temporary clone: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	repo, err := git.PlainInit(tmp, true)
	if err != nil {
		return fmt.Errorf("initializing %s: %w", tmp, err)
	}
	cfg, err := repo.Config()
	if err != nil {
		return fmt.Errorf("reading config of %s: %w", tmp, err)
	}
	// Only the redacted URL is written down: credentials never reach the disk.
	cfg.Raw.Section("patchkit").SetOption("url", c.redacted)
	if err := repo.SetConfig(cfg); err != nil {
		return fmt.Errorf("writing config of %s: %w", tmp, err)
	}
	s, err := openStore(tmp)
	if err != nil {
		return fmt.Errorf("opening %s: %w", tmp, err)
	}
	var ferr error
	if c.opts.shallow {
		// Nothing is fetched yet: Ensure fetches each ref it is asked for,
		// with a depth, using the advertisement the clone read (the
		// upstream is there, HEAD follows its default branch).
		if ferr = markPartial(tmp); ferr == nil {
			ferr = c.fetchInto(ctx, s, fetchReq{depth: 1, narrow: true})
		}
	} else {
		ferr = c.fetchInto(ctx, s, fetchReq{})
	}
	if cerr := s.close(); ferr == nil {
		ferr = cerr
	}
	if ferr != nil {
		return fmt.Errorf("cloning: %w", ferr)
	}
	old := ""
	if _, err := os.Lstat(path); err == nil {
		old = filepath.Join(c.dir, c.oldPrefix()+filepath.Base(tmp)[len(c.tmpPrefix()):])
		if err := os.Rename(path, old); err != nil {
			return fmt.Errorf("moving the damaged cache aside: %w", err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		if old != "" {
			os.Rename(old, path)
		}
		return fmt.Errorf("moving the clone into %s: %w", path, err)
	}
	if old != "" {
		os.RemoveAll(old)
	}
	return nil
}
