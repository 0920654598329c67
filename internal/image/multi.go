package image

import (
	"context"
	"fmt"
)

// multi publishes to several publishers in turn.
type multi []Publisher

var _ Publisher = multi(nil)

// Multi returns a publisher that publishes to each of pubs in order and
// returns the first's Published: put the registry first, so the reference
// names it.
func Multi(pubs ...Publisher) Publisher {
	if len(pubs) == 1 {
		return pubs[0]
	}
	return multi(pubs)
}

// Publish implements Publisher.
func (m multi) Publish(ctx context.Context, res *Result, tag string) (*Published, error) {
	var first *Published
	for _, p := range m {
		pub, err := p.Publish(ctx, res, tag)
		if err != nil {
			return nil, err
		}
		if first == nil {
			first = pub
		} else if pub.Digest != first.Digest {
			return nil, fmt.Errorf("published %s as %s but %s as %s", first.Reference, first.Digest, pub.Reference, pub.Digest)
		}
	}
	if first == nil {
		return nil, fmt.Errorf("no publisher")
	}
	return first, nil
}
