package upstream

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"golang.org/x/sys/unix"
)

// Resolve returns the commit id of ref: a tag name (annotated tags peeled to
// their commit), a branch name, HEAD (the default branch), a full refname
// (refs/tags/..., refs/heads/...), a full 40-hex commit id, or an
// abbreviated one (at least 4 hex digits) that names exactly one commit of
// the cache: an ambiguous one wraps ErrAbbreviatedID and lists the
// candidates, an unknown one wraps ErrRefNotFound. Resolve reads the
// cache only; call Ensure first to fetch what is missing. It waits while
// another run fetches into the cache.
func (c *Cache) Resolve(ref string) (string, error) {
	lk, err := lockFile(context.Background(), c.lockPath(), unix.LOCK_SH)
	if err != nil {
		return "", c.errorf("resolving %q in %s: %w", ref, c.redacted, err)
	}
	defer lk.unlock()
	h, err := c.resolve(ref)
	if err != nil {
		return "", c.errorf("%w", err)
	}
	return h.String(), nil
}

// resolve is Resolve without the lock. Its errors name ref and the URL.
func (c *Cache) resolve(ref string) (plumbing.Hash, error) {
	var out plumbing.Hash
	err := c.withStore(func(s *store) error {
		h, err := s.resolve(ref)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			// Another process may have fetched new packs since they were listed.
			s.st.Reindex()
			h, err = s.resolve(ref)
		}
		out = h
		return err
	})
	switch {
	case err == nil:
		return out, nil
	case errors.Is(err, ErrRefNotFound) && ref == "HEAD":
		return out, fmt.Errorf("%w: %s has no HEAD (no default branch): name a tag, branch or commit", ErrRefNotFound, c.redacted)
	case errors.Is(err, ErrRefNotFound):
		return out, fmt.Errorf("%w: %q is not a tag, branch or commit of %s", ErrRefNotFound, ref, c.redacted)
	case errors.Is(err, ErrNotCommit):
		return out, fmt.Errorf("%q in %s: %w", ref, c.redacted, err)
	case errors.Is(err, ErrAbbreviatedID):
		return out, fmt.Errorf("%w: %q names several commits of %s (%s): write more of the id", ErrAbbreviatedID, ref, c.redacted, strings.TrimPrefix(err.Error(), ErrAbbreviatedID.Error()+": "))
	default:
		return out, c.objectFault(fmt.Errorf("resolving %q in %s: %w", ref, c.redacted, err))
	}
}

func (s *store) resolve(ref string) (plumbing.Hash, error) {
	switch {
	case ref == "":
		return plumbing.ZeroHash, errors.New("empty ref")
	case isFullID(ref):
		h := plumbing.NewHash(strings.ToLower(ref))
		c, err := s.peel(h)
		if errors.Is(err, plumbing.ErrObjectNotFound) && s.st.HasEncodedObject(h) != nil {
			// Not an object here, so not a commit of the upstream as far as we know.
			return h, fmt.Errorf("%w (%w)", ErrRefNotFound, plumbing.ErrObjectNotFound)
		}
		return c, err
	}
	var names []plumbing.ReferenceName
	if ref == "HEAD" || strings.HasPrefix(ref, "refs/") {
		names = []plumbing.ReferenceName{plumbing.ReferenceName(ref)}
	} else {
		names = []plumbing.ReferenceName{plumbing.NewTagReferenceName(ref), plumbing.NewBranchReferenceName(ref)}
	}
	for _, n := range names {
		r, err := storer.ResolveReference(s.st, n)
		if errors.Is(err, plumbing.ErrReferenceNotFound) {
			continue
		}
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("reading %s: %w", n, err)
		}
		return s.peel(r.Hash())
	}
	if isAbbreviated(ref) {
		return s.expand(ref)
	}
	return plumbing.ZeroHash, ErrRefNotFound
}

// isAbbreviated reports whether ref may be an abbreviated commit id.
func isAbbreviated(ref string) bool { return isHex(ref) && len(ref) >= 4 && len(ref) < 40 }

// expand resolves an abbreviated commit id: the one commit whose id starts
// with prefix (a tag object is peeled). None wraps ErrRefNotFound; several
// wrap ErrAbbreviatedID, the error's text listing them.
func (s *store) expand(prefix string) (plumbing.Hash, error) {
	prefix = strings.ToLower(prefix)
	raw := make([]byte, len(prefix)/2)
	for i := range raw {
		fmt.Sscanf(prefix[2*i:2*i+2], "%02x", &raw[i])
	}
	hashes, err := s.st.HashesWithPrefix(raw)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("listing objects starting with %s: %w", prefix, err)
	}
	seen := map[plumbing.Hash]bool{}
	var found []plumbing.Hash
	for _, h := range hashes {
		if !strings.HasPrefix(h.String(), prefix) {
			continue
		}
		c, err := s.peel(h)
		if err != nil || seen[c] {
			continue // a tree or a blob is no pin
		}
		seen[c] = true
		found = append(found, c)
	}
	switch len(found) {
	case 0:
		return plumbing.ZeroHash, ErrRefNotFound
	case 1:
		return found[0], nil
	}
	ids := make([]string, len(found))
	for i, h := range found {
		ids[i] = h.String()
	}
	sort.Strings(ids)
	return plumbing.ZeroHash, fmt.Errorf("%w: %s", ErrAbbreviatedID, strings.Join(ids, ", "))
}

// ErrNotCommit is returned for a ref that names a tree or a blob.
var ErrNotCommit = errors.New("not a commit")

// peel follows tag objects from h down to a commit.
func (s *store) peel(h plumbing.Hash) (plumbing.Hash, error) {
	for range 16 {
		obj, err := s.st.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return h, &objectError{h, err}
		}
		switch obj.Type() {
		case plumbing.CommitObject:
			return h, nil
		case plumbing.TagObject:
			tag, err := object.DecodeTag(s.st, obj)
			if err != nil {
				return h, &objectError{h, fmt.Errorf("reading tag: %w", err)}
			}
			h = tag.Target
		default:
			return h, fmt.Errorf("%s is a %s: %w", h, obj.Type(), ErrNotCommit)
		}
	}
	return h, fmt.Errorf("tag chain at %s is too long", h)
}

func isFullID(s string) bool { return len(s) == 40 && isHex(s) }

func isHex(s string) bool {
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
			return false
		}
	}
	return s != ""
}

// Tag is a tag of the upstream, peeled to its commit.
type Tag struct {
	Name   string    // without refs/tags/
	Commit string    // the commit id the tag points at, annotated tags peeled
	Time   time.Time // the commit's committer time
}

// Tags lists the tags of the cache that point at commits, sorted by name
// (Releases orders them as versions). Tags of trees or blobs are left out.
func (c *Cache) Tags() ([]Tag, error) { return c.TagsMatching(nil) }

// TagNames lists the names of the cache's tags, sorted, without reading
// their objects: an upstream's hundreds of tags cost a read of packed-refs.
func (c *Cache) TagNames() ([]string, error) {
	lk, err := lockFile(context.Background(), c.lockPath(), unix.LOCK_SH)
	if err != nil {
		return nil, c.errorf("listing tags of %s: %w", c.redacted, err)
	}
	defer lk.unlock()
	var names []string
	err = c.withStore(func(s *store) error {
		iter, err := s.st.IterReferences()
		if err != nil {
			return err
		}
		return iter.ForEach(func(r *plumbing.Reference) error {
			if r.Name().IsTag() && r.Type() == plumbing.HashReference {
				names = append(names, tagName(r.Name()))
			}
			return nil
		})
	})
	if err != nil {
		return nil, c.errorf("listing tags of %s: %w", c.redacted, err)
	}
	sort.Strings(names)
	return names, nil
}

// tagName is a tag ref's name without refs/tags/: what ReferenceName.Short
// gives for a tag, without its fmt.Sscanf per rule (most of the cost of
// listing an upstream's hundreds of tags).
func tagName(n plumbing.ReferenceName) string {
	return strings.TrimPrefix(string(n), "refs/tags/")
}

// TagsMatching is Tags, reading only the tags for which match (nil: all)
// returns true.
func (c *Cache) TagsMatching(match func(name string) bool) ([]Tag, error) {
	lk, err := lockFile(context.Background(), c.lockPath(), unix.LOCK_SH)
	if err != nil {
		return nil, c.errorf("listing tags of %s: %w", c.redacted, err)
	}
	defer lk.unlock()
	var tags []Tag
	err = c.withStore(func(s *store) error {
		var err error
		tags, err = s.tags(match)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			// Another process may have fetched new packs since they were listed.
			s.st.Reindex()
			tags, err = s.tags(match)
		}
		return err
	})
	if err != nil {
		return nil, c.objectFault(c.errorf("listing tags of %s: %w", c.redacted, err))
	}
	sort.Slice(tags, func(i, j int) bool { return tags[i].Name < tags[j].Name })
	return tags, nil
}

func (s *store) tags(match func(string) bool) ([]Tag, error) {
	iter, err := s.st.IterReferences()
	if err != nil {
		return nil, err
	}
	var tags []Tag
	err = iter.ForEach(func(r *plumbing.Reference) error {
		if !r.Name().IsTag() || r.Type() != plumbing.HashReference {
			return nil
		}
		if match != nil && !match(tagName(r.Name())) {
			return nil
		}
		h, err := s.peel(r.Hash())
		if errors.Is(err, ErrNotCommit) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("tag %s: %w", tagName(r.Name()), err)
		}
		commit, err := readCommit(s.st, h)
		if err != nil {
			return fmt.Errorf("tag %s: reading commit %s: %w", tagName(r.Name()), h, err)
		}
		tags = append(tags, Tag{Name: tagName(r.Name()), Commit: h.String(), Time: commit.Committer.When})
		return nil
	})
	return tags, err
}

// DefaultBranch is the short name of the branch HEAD follows (the upstream's
// default branch), or "" when HEAD is detached, unset or unborn (a branch
// the cache does not have: see checkHead).
func (c *Cache) DefaultBranch() string {
	var name string
	c.withStore(func(s *store) error {
		if ref, err := s.st.Reference(plumbing.HEAD); err == nil && ref.Type() == plumbing.SymbolicReference {
			if _, err := s.st.Reference(ref.Target()); err == nil {
				name = ref.Target().Short()
			}
		}
		return nil
	})
	return name
}

// Commit reads commit id (a full id) from the cache, checking that it reads
// back intact. An id the cache lacks wraps plumbing.ErrObjectNotFound; a
// commit that does not read back intact is a *CacheFaultError.
func (c *Cache) Commit(id string) (*object.Commit, error) {
	h := plumbing.NewHash(id)
	var cm *object.Commit
	err := c.withStore(func(s *store) error {
		if s.st.HasEncodedObject(h) != nil {
			s.st.Reindex()
			if err := s.st.HasEncodedObject(h); err != nil {
				return err
			}
		}
		var err error
		cm, err = readCommit(s.st, h)
		return err
	})
	if err != nil {
		return nil, c.objectFault(c.errorf("reading commit %s of %s: %w", id, c.redacted, err))
	}
	return cm, nil
}
