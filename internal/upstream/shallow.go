package upstream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// partialName is the file in a cache's bare repository that marks the cache
// partial: patchkit fetched its refs with a depth, so the boundaries in its
// shallow file are patchkit's own and not the end of the upstream's history.
// Without the file, every shallow boundary is the upstream's: the end of
// history. The file is written before the first fetch with a depth and
// removed only after a fetch of the whole history succeeded, so a killed run
// never leaves a partial cache unmarked.
const partialName = "patchkit-shallow"

// WithShallow says that the user of the cache reads only the trees of the
// refs it Ensures (apply, build, gate), not their history. A cache it clones
// is partial: it holds each ensured ref at depth 1 (a commit asked for by id
// at depth 2, so that its diff can be shown), as `git clone --depth 1` would.
// A Cache opened without WithShallow deepens a partial cache to the whole
// history when it opens it (offline, it refuses it), so history walks never
// take patchkit's own boundary for the end of history.
func WithShallow(shallow bool) Option {
	return func(o *options) { o.shallow = shallow }
}

func partialPath(repo string) string { return filepath.Join(repo, partialName) }

// isPartial reports whether the bare repository at repo is partial.
func isPartial(repo string) bool {
	_, err := os.Lstat(partialPath(repo))
	return err == nil
}

// markPartial marks the bare repository at repo partial, durably.
func markPartial(repo string) error {
	p := partialPath(repo)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("marking the cache partial: %w", err)
	}
	_, err = f.WriteString("patchkit fetched this cache with a depth; its shallow boundaries are not the end of history\n")
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("marking the cache partial: %w", err)
	}
	return nil
}

// Partial reports whether the cache holds only some refs at depth 1 (see
// WithShallow) rather than the upstream's history.
func (c *Cache) Partial() bool { return isPartial(c.Path()) }

// Deepen fetches the whole history of a partial cache (see WithShallow), with
// every tag and the default and configured branches, and marks it complete.
// It does nothing for a complete cache. Offline it fails with ErrOffline.
func (c *Cache) Deepen(ctx context.Context) error {
	if !c.Partial() {
		return nil
	}
	if c.opts.offline {
		return c.errorf("%w: the cache of %s holds only the refs a shallow run fetched, not their history; run once without --offline to fetch it", ErrOffline, c.redacted)
	}
	lk, err := lockFile(ctx, c.lockPath(), unix.LOCK_EX)
	if err != nil {
		return c.errorf("fetching the history of %s: %w", c.redacted, err)
	}
	defer lk.unlock()
	if !c.Partial() { // another run deepened it meanwhile
		return c.withStore(func(s *store) error { s.st.Reindex(); return nil })
	}
	if err := c.refresh(ctx, fetchReq{}); err != nil {
		return c.errorf("fetching the history of %s: %w", c.redacted, err)
	}
	return nil
}

// completeAfter removes the partial mark of s after a fetch of the whole
// history: the boundaries left in the shallow file are the upstream's.
func completeAfter(s *store) error {
	if err := os.Remove(partialPath(s.path)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("marking the cache complete: %w", err)
	}
	return nil
}

// Boundary reports whether commit (a full id) is a shallow boundary of the
// cache: present, with its parents missing.
func (c *Cache) Boundary(commit string) bool {
	var found bool
	c.withStore(func(s *store) error {
		list, err := s.st.Shallow()
		if err != nil {
			return err
		}
		for _, h := range list {
			found = found || h.String() == strings.ToLower(commit)
		}
		return nil
	})
	return found
}
