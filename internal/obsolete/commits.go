package obsolete

import (
	"github.com/patchkit/patchkit/internal/apply"
)

// Predicates for introducer: what must hold at a commit's tree.
const (
	predReverse = "reverse" // the patch reverse-applies
	predLines   = "lines"   // SupersededShare of its changed lines are upstream
)

type predKey struct {
	patch, commit int
	kind          string
}

// introducer finds the upstream commit that brought patch i's change into
// ref: among the range commits that ref reaches and that touch the patch's
// files, oldest first, the last one at which the predicate turned true
// (and stayed true). nil when none is found.
func (c *checker) introducer(i int, ref Ref, kind string) (*commit, error) {
	reach := c.h.reachable(ref.Commit)
	var found *commit
	prev := false
	for _, idx := range c.h.relevant {
		if !reach.has(idx) {
			continue
		}
		cm := c.h.commits[idx]
		if !touches(cm, c.patchPaths[i]) {
			continue
		}
		ok, err := c.predicate(predKey{patch: i, commit: idx, kind: kind})
		if err != nil {
			return nil, err
		}
		if ok && !prev {
			found = cm
		}
		prev = ok
	}
	if !prev {
		return nil, nil
	}
	return found, nil
}

func touches(cm *commit, paths map[string]bool) bool {
	for p := range cm.paths {
		if paths[p] {
			return true
		}
	}
	return false
}

// predicate reports, memoized, whether k holds at the tree of commit
// k.commit, for patch k.patch alone.
func (c *checker) predicate(k predKey) (bool, error) {
	if v, ok := c.pred[k]; ok {
		return v, nil
	}
	src, err := c.cache.Source(c.h.commits[k.commit].id)
	if err != nil {
		return false, err
	}
	var v bool
	switch k.kind {
	case predReverse:
		r := apply.New(src, apply.WithReverse(), noWS).Apply(c.patches[k.patch])
		if r.Err != nil {
			return false, r.Err
		}
		v = r.Status == apply.StatusApplied
	default:
		lm, err := c.lineShare(k.patch, src, c.h.commits[k.commit].id)
		if err != nil {
			return false, err
		}
		v = supersedes(lm)
	}
	c.pred[k] = v
	return v, nil
}

// result adds the commit evidence of ref to a verdict: for a patch that
// reverse-applies, the commit that brought it; for one that neither applies
// nor reverse-applies, what upstream carries decides (see decide).
func (c *checker) result(ref Ref, i int, v verdict, hit *commit) (Result, error) {
	r := Result{
		Ref: ref.Name, Status: v.status, Via: v.via,
		Offsets: v.offsets, Hunks: append([]Hunk(nil), v.hunks...), AddedLines: v.lines, Conflict: v.conflict,
	}
	switch {
	case v.status == StatusApplies:
	case v.status == StatusPresent && v.via == ViaReverseApply:
		cm, err := c.presentBy(i, ref, hit)
		if err != nil {
			return Result{}, err
		}
		if cm != nil {
			r.Commit, r.Subject = cm.id, cm.subject
			r.Commits = []Carrier{{Commit: cm.id, Subject: cm.subject}}
		}
	default:
		if err := c.decide(&r, i, ref, v, hit); err != nil {
			return Result{}, err
		}
	}
	if r.Status == StatusConflict {
		r.Offsets = nil
	}
	r.Evidence = evidence(r, hit != nil)
	return r, nil
}

// presentBy names the commit that brought a present patch: the patch-id
// commit, else the one after which it reverse-applies, else the one after
// which its changed lines are there.
func (c *checker) presentBy(i int, ref Ref, hit *commit) (*commit, error) {
	if hit != nil {
		return hit, nil
	}
	cm, err := c.introducer(i, ref, predReverse)
	if cm != nil || err != nil {
		return cm, err
	}
	files, err := c.changedFiles(i)
	if err != nil || len(files) == 0 {
		return nil, err
	}
	return c.introducer(i, ref, predLines)
}
