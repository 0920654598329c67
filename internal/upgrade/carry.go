package upgrade

import (
	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/obsolete"
	"github.com/patchkit/patchkit/internal/series"
)

// Carry carries p from old (the pin, with the patches before p applied) to
// cur (another upstream ref) as Plan carries a patch that is still needed:
// it applies at cur and is rendered at cur's line numbers, or it is rebased
// by the three-way merge (Merge3), or it conflicts. It returns the fate
// (FateKept, FateRefreshed, FateMerged, FateConflict, or FateDropped when
// the merge leaves nothing to change) and p's text at cur (nil for a
// conflict or a drop). old and cur have p applied afterwards when it
// applied. `patchkit forward` carries an original change to the upstream's
// default branch with it.
func Carry(old, cur *apply.Applier, p *series.Patch) (PatchFate, []byte, error) {
	w := &walker{old: old, cur: cur}
	fate, write, err := w.carry(p, obsolete.Result{Status: obsolete.StatusApplies})
	if err != nil {
		return fate, nil, err
	}
	switch {
	case fate.Fate == FateKept:
		return fate, p.FileBytes(), nil
	case write != nil && !write.Delete:
		return fate, write.Data, nil
	}
	return fate, nil, nil
}
