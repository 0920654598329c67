package obsolete

import (
	"fmt"
	"sort"
	"strings"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/tree"
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
// ref: the non-merge commit after which the predicate turned true and
// stayed true, along ref's first parents and into the branches they merged
// (history.turnedOn), as `git log --no-merges` would name it. nil when none
// is found (or the pin already had it).
func (c *checker) introducer(i int, ref Ref, kind string) (*commit, error) {
	// The predicate only looks at the patch's files: commits whose entries
	// there are equal share its value.
	byState := map[string]bool{}
	at := func(id string, eval func() (bool, error)) (bool, error) {
		key, err := c.pathsState(id, i)
		if err != nil {
			return false, err
		}
		if v, ok := byState[key]; ok {
			return v, nil
		}
		v, err := eval()
		if err != nil {
			return false, err
		}
		byState[key] = v
		return v, nil
	}
	base, err := at(c.pinCommit, func() (bool, error) { return c.predicateIn(i, kind, c.pin, c.pinCommit) })
	if err != nil {
		return nil, err
	}
	found, err := c.h.turnedOn(ref.Commit, base, func(idx int) (bool, error) {
		return at(c.h.commits[idx].id, func() (bool, error) { return c.predicate(predKey{patch: i, commit: idx, kind: kind}) })
	}, func(idx int) bool {
		cm := c.h.commits[idx]
		return cm.merge || touches(cm, c.patchPaths[i])
	})
	if err != nil || found < 0 {
		return nil, err
	}
	return c.h.commits[found], nil
}

// pathsState names the entries of patch i's files (with their variants)
// at commit id (entryAt).
func (c *checker) pathsState(id string, i int) (string, error) {
	paths := make([]string, 0, len(c.patchPaths[i]))
	for p := range c.patchPaths[i] {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		e, err := c.entryAt(id, p)
		if err != nil {
			return "", err
		}
		b.WriteString(p + "\x00" + e + "\n")
	}
	return b.String(), nil
}

// entryAt names the tree entry at path p of commit id, memoized: its mode
// and object id, or "-" when there is none.
func (c *checker) entryAt(id, p string) (string, error) {
	key := removedKey{path: p, ref: id}
	if e, ok := c.entries[key]; ok {
		return e, nil
	}
	src, err := c.cache.Source(id)
	if err != nil {
		return "", err
	}
	e, ok, err := src.Entry(p)
	if err != nil {
		return "", err
	}
	s := "-"
	if ok {
		s = fmt.Sprintf("%o %s", uint32(e.Mode), e.Hash)
	}
	c.entries[key] = s
	return s, nil
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
	v, err := c.predicateIn(k.patch, k.kind, src, c.h.commits[k.commit].id)
	if err != nil {
		return false, err
	}
	c.pred[k] = v
	return v, nil
}

// predicateIn reports whether the predicate kind holds in src for patch i
// alone.
func (c *checker) predicateIn(i int, kind string, src tree.Source, at string) (bool, error) {
	switch kind {
	case predReverse:
		r := apply.New(src, apply.WithReverse(), noWS).Apply(c.patches[i])
		if r.Err != nil {
			return false, r.Err
		}
		return r.Status == apply.StatusApplied, nil
	default:
		lm, err := c.lineShare(i, src, at)
		if err != nil {
			return false, err
		}
		return supersedes(lm), nil
	}
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
		if err := c.markRemoved(&r, i, ref); err != nil {
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
