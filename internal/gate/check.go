package gate

import (
	"context"

	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/tree"
)

// Check is `patchkit gate` on a patched tree: the regression test (Run)
// and, when it passed, which patch owns which subtest (Ownership; nil when
// the test failed).
func (g *Gate) Check(ctx context.Context, src Source, changes map[string]*tree.File, patches []*series.Patch) (*Result, *Ownership, error) {
	full, err := g.Run(ctx, src, changes)
	if err != nil {
		return nil, nil, err
	}
	if !full.OK {
		return full, nil, nil
	}
	own, err := g.Ownership(ctx, src, patches, full)
	if err != nil {
		return nil, nil, err
	}
	return full, own, nil
}
