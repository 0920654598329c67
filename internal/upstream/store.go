package upstream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// store is an open bare repository.
type store struct {
	path string
	st   *filesystem.Storage
	repo *git.Repository
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
	st := filesystem.NewStorageWithOptions(osfs.New(path), cache.NewObjectLRUDefault(), filesystem.Options{KeepDescriptors: true})
	repo, err := git.Open(st, nil)
	if err != nil {
		st.Close()
		return nil, err
	}
	return &store{path: path, st: st, repo: repo}, nil
}

func (s *store) close() error { return s.st.Close() }

// check is the integrity check of a cache: HEAD resolves to a commit whose
// tree is present, every ref points at an object that is present, and every
// shallow commit is present.
func (s *store) check() error {
	head, err := s.repo.Reference(plumbing.HEAD, true)
	if err != nil {
		return fmt.Errorf("resolving HEAD: %w", err)
	}
	commit, err := object.GetCommit(s.st, head.Hash())
	if err != nil {
		return fmt.Errorf("reading HEAD commit %s: %w", head.Hash(), err)
	}
	if err := s.st.HasEncodedObject(commit.TreeHash); err != nil {
		return fmt.Errorf("reading tree %s of HEAD: %w", commit.TreeHash, err)
	}
	refs, err := s.st.IterReferences()
	if err != nil {
		return fmt.Errorf("listing refs: %w", err)
	}
	err = refs.ForEach(func(r *plumbing.Reference) error {
		if r.Type() != plumbing.HashReference {
			return nil
		}
		if err := s.st.HasEncodedObject(r.Hash()); err != nil {
			return fmt.Errorf("ref %s points at %s: %w", r.Name(), r.Hash(), err)
		}
		return nil
	})
	if err != nil {
		return err
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

// prepare runs under the exclusive lock: it clears what interrupted runs left
// behind, checks the cache, and clones it afresh when it is missing or broken.
func (c *Cache) prepare(ctx context.Context) error {
	c.removeLeftovers()
	path := c.Path()
	var damage string
	if _, err := os.Stat(c.markerPath()); err == nil {
		damage = "was left half-updated by an interrupted fetch"
	} else if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		damage = ""
	} else if s, err := openStore(path); err != nil {
		damage = fmt.Sprintf("is damaged (%v)", err)
	} else if err := s.check(); err != nil {
		s.close()
		damage = fmt.Sprintf("is damaged (%v)", err)
	} else {
		c.store = s
		return nil
	}
	exists := damage != ""
	if c.opts.offline {
		if exists {
			return fmt.Errorf("%w: the cache %s %s; run once without --offline to repair it", ErrOffline, path, damage)
		}
		return fmt.Errorf("%w: nothing cached in %s yet; run once without --offline to fill the cache", ErrOffline, c.dir)
	}
	if err := c.cloneInto(ctx, path); err != nil {
		if exists {
			return fmt.Errorf("repairing the cache %s, which %s: %w", path, damage, err)
		}
		return err
	}
	if err := os.Remove(c.markerPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", c.markerPath(), err)
	}
	s, err := openStore(path)
	if err != nil {
		return fmt.Errorf("opening the fresh clone %s: %w", path, err)
	}
	if err := s.check(); err != nil {
		s.close()
		return fmt.Errorf("checking the fresh clone %s: %w", path, err)
	}
	c.store = s
	return nil
}

// removeLeftovers deletes temporary clones and replaced caches of killed runs.
// It runs under the exclusive lock, so no live run is using them.
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
	ferr := c.fetchInto(ctx, s, nil, nil)
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
