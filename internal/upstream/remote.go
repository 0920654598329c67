package upstream

import (
	"context"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// RemoteTag is a tag the upstream advertises.
type RemoteTag struct {
	Name string // without refs/tags/
	// Target is what the tag points at: the commit of a lightweight tag,
	// the tag object of an annotated one.
	Target string
	// Peeled is what an annotated tag points at in the end (the upstream's
	// peeled value, usually a commit); Target for a lightweight tag.
	Peeled string
}

// RemoteTags lists the upstream's tags, as `git ls-remote --tags` does:
// names and targets, no objects. A cache that listed the upstream's refs
// since it was opened (a clone, a fetch) reuses that listing; otherwise this
// is one round trip. Offline it fails with ErrOffline. The tags come in name
// order.
func (c *Cache) RemoteTags(ctx context.Context) ([]RemoteTag, error) {
	if c.opts.offline {
		return nil, c.errorf("%w: listing the tags of %s needs the network", ErrOffline, c.redacted)
	}
	lk, err := lockFile(ctx, c.lockPath(), unix.LOCK_EX)
	if err != nil {
		return nil, c.errorf("listing the tags of %s: %w", c.redacted, err)
	}
	defer lk.unlock()
	ar := c.lastAdv
	if ar == nil {
		if ar, err = c.advertise(ctx); err != nil {
			return nil, c.errorf("listing the tags of %s: %w", c.redacted, err)
		}
	}
	var tags []RemoteTag
	for n, h := range ar.References {
		name, ok := strings.CutPrefix(n, "refs/tags/")
		if !ok || strings.HasSuffix(n, "^{}") {
			continue
		}
		t := RemoteTag{Name: name, Target: h.String(), Peeled: h.String()}
		if p, ok := ar.Peeled[n]; ok {
			t.Peeled = p.String()
		}
		tags = append(tags, t)
	}
	sort.Slice(tags, func(i, j int) bool { return tags[i].Name < tags[j].Name })
	return tags, nil
}
