package obsolete

import (
	"fmt"
	"sort"
	"strings"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/tree"
)

// What upstream carries (DESIGN.md, "Statuses in obsolete-check"): a patch
// that neither applies nor reverse-applies at a ref is judged hunk by hunk
// against the upstream commits that landed its hunks (decide):
//
//   - a commit of the ref with the patch's patch-id decides: present, unless
//     a hunk was reverted since (its removed lines are back, or it applies
//     again and its lines did not move elsewhere, see moves.go; a file the
//     patch creates that is gone, or added lines gone, were moved or edited
//     as likely, and do not end it);
//   - each hunk is carried when it is there (it reverse-applies, or its lines
//     are there in their own context) or when it was there once and upstream
//     only edited the lines around it since (its own added lines are still
//     there, its removed lines still gone), with the commit that landed it:
//     the last commit of the ref's history, oldest first, at which the hunk
//     turned there;
//   - every hunk carried: present (superseded when a hunk landed only by its
//     lines, not verbatim);
//   - some carried, and each other hunk sits in a region that a commit which
//     landed the carried ones rewrote (see rewroteRegion), or that commit
//     brought the hunk's own lines elsewhere (landedLines): superseded,
//     upstream's own way;
//   - some carried, the others applying or conflicting where no landing
//     commit touched: partial;
//   - none carried: the share of changed lines (superseded), else conflict.

// Unit states at a tree.
const (
	unitThere    = "there"
	unitApplies  = "applies"
	unitConflict = "conflict"
)

// unitAt is a unit's state at a commit, and how a unit there was found.
type unitAt struct {
	state, via string
}

type unitKey struct {
	patch, unit int
	commit      string
}

// ViaRewritten (a patch's Via): some hunks are upstream and the commits that
// landed them rewrote the regions of the others: upstream's own way.
const ViaRewritten = "rewritten"

// ViaLanded (a hunk's Via): the hunk was there once, a commit of the ref
// landed it, and upstream edited the lines around it since; its own lines are
// still there.
const ViaLanded = "landed"

// StatusHunkSuperseded (a hunk's Status is superseded): the hunk is not
// upstream, and a commit that landed the patch's other hunks rewrote its
// region.
const StatusHunkSuperseded = StatusSuperseded

// Carrier is an upstream commit that carries some of a patch's hunks at a
// ref.
type Carrier struct {
	Commit  string `json:"commit"`
	Subject string `json:"subject,omitempty"`
	// Hunks are the patch-file lines of the hunks it carries.
	Hunks []int `json:"hunks,omitempty"`
	// Rewrote are the patch-file lines of the hunks whose regions it
	// rewrote its own way.
	Rewrote []int `json:"rewrote,omitempty"`
}

// unitState says how unit k of patch i is at commit id, memoized.
func (c *checker) unitState(i, k int, id string) (unitAt, error) {
	key := unitKey{i, k, id}
	if s, ok := c.ustate[key]; ok {
		return s, nil
	}
	src, err := c.cache.Source(id)
	if err != nil {
		return unitAt{}, err
	}
	s, err := c.unitStateIn(c.unitsOf(i)[k], src)
	if err != nil {
		return unitAt{}, err
	}
	c.ustate[key] = s
	return s, nil
}

// unitStateIn says how unit u is in src: there (reverse-applies, or by its
// lines), applies, or conflict.
func (c *checker) unitStateIn(u unit, src tree.Source) (unitAt, error) {
	r := apply.New(src, apply.WithReverse(), noWS).Apply(u.patch)
	if r.Err != nil {
		return unitAt{}, r.Err
	}
	if r.Status == apply.StatusApplied {
		return unitAt{unitThere, ViaReverseApply}, nil
	}
	f := apply.New(src, noWS).Apply(u.patch)
	if f.Err != nil {
		return unitAt{}, f.Err
	}
	if f.Status == apply.StatusApplied {
		return unitAt{state: unitApplies}, nil
	}
	ok, err := c.unitLines(u, src)
	if err != nil {
		return unitAt{}, err
	}
	if ok {
		return unitAt{unitThere, ViaLines}, nil
	}
	return unitAt{state: unitConflict}, nil
}

// unitLanding returns the commit that landed unit k of patch i in ref: among
// the range commits that ref reaches and that touch the unit's file, oldest
// first, the last at which the unit turned there (from the pin's state
// onwards), and how it was there then. nil when it never turned there.
func (c *checker) unitLanding(i, k int, ref Ref) (*commit, unitAt, error) {
	u := c.unitsOf(i)[k]
	paths := map[string]bool{}
	for _, n := range unitPaths(u) {
		paths[n] = true
	}
	prev, err := c.unitState(i, k, c.pinCommit)
	if err != nil {
		return nil, unitAt{}, err
	}
	reach := c.h.reachable(ref.Commit)
	var found *commit
	var how unitAt
	for _, idx := range c.h.relevant {
		if !reach.has(idx) {
			continue
		}
		cm := c.h.commits[idx]
		if !touches(cm, paths) {
			continue
		}
		s, err := c.unitState(i, k, cm.id)
		if err != nil {
			return nil, unitAt{}, err
		}
		if s.state == unitThere && prev.state != unitThere {
			found, how = cm, s
		}
		prev = s
	}
	return found, how, nil
}

// unitPaths are the names (with -p1 variants) a unit's file diff touches.
func unitPaths(u unit) []string {
	var out []string
	for _, f := range u.patch.Files {
		out = append(out, variants(f.OldName)...)
		out = append(out, variants(f.NewName)...)
	}
	return out
}

// unitFileIn reads unit u's file in src (nil when absent), with the lines
// that the history of commit at moved from it to other files (linesAt; at
// "": none), and its significant lines against the pin.
func (c *checker) unitFileIn(u unit, src tree.Source, at string) (*lines, changedFile, error) {
	if len(u.patch.Files) != 1 {
		return nil, changedFile{}, nil
	}
	f := u.patch.Files[0]
	if f.IsDelete || f.IsBinary || len(f.TextFragments) == 0 {
		return nil, changedFile{}, nil
	}
	var pin *lines
	if !f.IsNew {
		var err error
		if pin, err = c.pinFile(f); err != nil {
			return nil, changedFile{}, err
		}
	}
	cur, err := c.linesAt(src, variants(f.NewName), at)
	if err != nil {
		return nil, changedFile{}, err
	}
	return cur, significant(f, pin), nil
}

// unitKept reports whether unit u's own change is still in src, the tree of
// commit at, though the unit is not there in its context: at least half of
// its significant added lines are there (in its file, or where upstream moved
// them) and none of its significant removed lines is back (a unit
// that only removes: every one of them is still gone). A unit without
// significant lines is kept: only applying again would tell it was reverted.
func (c *checker) unitKept(u unit, src tree.Source, at string) (bool, error) {
	if !c.hasAdded(u) {
		// Only added lines are followed where they moved: a unit that
		// only removes is told by its own file.
		at = ""
	}
	cur, cf, err := c.unitFileIn(u, src, at)
	if err != nil || cur == nil {
		return false, err
	}
	if len(cf.added) == 0 && len(cf.removed) == 0 {
		// Nothing to tell by: only applying again says it was reverted.
		return true, nil
	}
	for _, r := range cf.removed {
		if len(cur.at[r.text]) > 0 {
			return false, nil
		}
	}
	if len(cf.added) == 0 {
		return len(cf.removed) > 0, nil
	}
	n := 0
	for _, s := range cf.added {
		if len(cur.at[s]) > 0 {
			n++
		}
	}
	return 2*n >= len(cf.added), nil
}

// createsFile reports whether unit u creates a file (a whole new file diff).
func createsFile(u unit) bool {
	return len(u.patch.Files) == 1 && u.patch.Files[0].IsNew
}

// unitRestored reports whether one of unit u's significant removed lines is
// back in its file in src: the part of a revert that a later edit or move of
// the unit's added lines cannot look like.
func (c *checker) unitRestored(u unit, src tree.Source) (bool, error) {
	cur, cf, err := c.unitFileIn(u, src, "")
	if err != nil || cur == nil {
		return false, err
	}
	for _, r := range cf.removed {
		if len(cur.at[r.text]) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// rewroteRegion reports whether commit cm rewrote the region of unit k of
// patch i: the unit applied at cm's parent and conflicts at cm; or cm's diff
// changes the lines where the unit's context and removed lines are (or match
// best) at cm's parent.
func (c *checker) rewroteRegion(i, k int, cm *commit) (bool, error) {
	if cm.parent == "" {
		return false, nil
	}
	before, err := c.unitState(i, k, cm.parent)
	if err != nil {
		return false, err
	}
	after, err := c.unitState(i, k, cm.id)
	if err != nil {
		return false, err
	}
	if before.state == unitApplies && after.state == unitConflict {
		return true, nil
	}
	u := c.unitsOf(i)[k]
	if u.hunk == "" || len(u.patch.Files) != 1 || len(u.patch.Files[0].TextFragments) != 1 {
		return false, nil
	}
	var changed []lineRange
	for _, n := range unitPaths(u) {
		if rs, ok := cm.changed[n]; ok {
			changed = rs
			break
		}
	}
	if len(changed) == 0 {
		return false, nil
	}
	psrc, err := c.cache.Source(cm.parent)
	if err != nil {
		return false, err
	}
	tf := u.patch.Files[0].TextFragments[0]
	start := 0
	r := apply.New(psrc, noWS).Apply(u.patch)
	switch {
	case r.Err != nil:
		return false, r.Err
	case r.Status == apply.StatusApplied && len(r.Hunks) > 0:
		start = int(tf.OldPosition) + r.Hunks[0].Offset
	case len(r.Errors) > 0 && r.Errors[0].NearLine > 0:
		start = r.Errors[0].NearLine
	default:
		return false, nil
	}
	end := start + int(tf.OldLines)
	for _, rg := range changed {
		if rg.From == rg.To {
			if rg.From > start && rg.From < end {
				return true, nil
			}
			continue
		}
		if rg.From < end && rg.To > start {
			return true, nil
		}
	}
	return false, nil
}

// landedLines reports whether commit cm brought unit k of patch i's own
// lines, elsewhere than in its context: they are mostly there after cm
// (unitKept) and were not at its parent. A unit without significant lines
// cannot tell.
func (c *checker) landedLines(i, k int, cm *commit) (bool, error) {
	if cm.parent == "" {
		return false, nil
	}
	u := c.unitsOf(i)[k]
	src, err := c.cache.Source(cm.id)
	if err != nil {
		return false, err
	}
	cur, cf, err := c.unitFileIn(u, src, cm.id)
	if err != nil || cur == nil || len(cf.added) == 0 {
		return false, err
	}
	after, err := c.unitKept(u, src, cm.id)
	if err != nil || !after {
		return false, err
	}
	psrc, err := c.cache.Source(cm.parent)
	if err != nil {
		return false, err
	}
	before, err := c.unitKept(u, psrc, cm.parent)
	return !before, err
}

// hunkFate is what decide found about one hunk.
type hunkFate struct {
	at      unitAt  // at the ref
	kept    bool    // not there, but its own lines are (unitKept)
	landing *commit // the commit that landed it
	landVia string  // how it was there at landing
	carried bool
	rewrote *commit // the landing commit that rewrote its region
}

// decide gives a patch that neither applies nor reverse-applies at ref its
// status from what upstream carries (see the comment at the top of this
// file). v is the tree's verdict, hit the commit with the patch's patch-id.
func (c *checker) decide(r *Result, i int, ref Ref, v verdict, hit *commit) error {
	us := c.unitsOf(i)
	if us == nil || len(v.hunks) != len(us) {
		if hit != nil {
			setStatus(r, StatusPresent, ViaPatchID, hit)
			r.Commits = []Carrier{{Commit: hit.id, Subject: hit.subject}}
			return nil
		}
		return c.byLines(r, i, ref, v)
	}
	snap, err := c.cache.Source(ref.Commit)
	if err != nil {
		return err
	}
	fates := make([]hunkFate, len(us))
	for k, h := range v.hunks {
		f := &fates[k]
		switch h.Status {
		case StatusPresent:
			f.at = unitAt{unitThere, h.Via}
		case StatusApplies:
			f.at = unitAt{state: unitApplies}
			continue
		default:
			f.at = unitAt{state: unitConflict}
			if f.kept, err = c.unitKept(us[k], snap, ref.Commit); err != nil {
				return err
			}
		}
		var how unitAt
		if f.landing, how, err = c.unitLanding(i, k, ref); err != nil {
			return err
		}
		f.landVia = how.via
	}

	// A commit with the patch's patch-id decides, until a hunk is reverted
	// (idHolds, moves.go).
	holds := false
	if hit != nil {
		if holds, err = c.idHolds(i, ref, hit, v.hunks, snap); err != nil {
			return err
		}
	}
	if holds {
		for k := range fates {
			if fates[k].at.state == unitApplies {
				// A file the patch creates, moved away since: the hunk
				// says so, the patch-id commit still decides. Lines
				// upstream moved elsewhere since (idHolds): present,
				// moved.
				if !createsFile(us[k]) {
					r.Hunks[k].Status, r.Hunks[k].Via, r.Hunks[k].Commit = StatusPresent, ViaMoved, hit.id
					r.Hunks[k].Offset = 0
				}
				continue
			}
			r.Hunks[k].Commit = hit.id
			if fates[k].at.state != unitThere {
				r.Hunks[k].Status, r.Hunks[k].Via = StatusPresent, ViaLanded
			}
		}
		setStatus(r, StatusPresent, ViaPatchID, hit)
		r.Commits = carriers(r.Hunks, c.h)
		return nil
	}

	carried := 0
	for k := range fates {
		f := &fates[k]
		switch {
		case f.at.state == unitThere && (f.landing != nil || f.at.via == ViaReverseApply):
			f.carried = true
		case f.at.state == unitConflict && f.kept && f.landing != nil:
			f.carried = true
		}
		if f.carried {
			carried++
		}
	}
	if carried == 0 {
		for k := range r.Hunks {
			if r.Hunks[k].Status == StatusPresent {
				r.Hunks[k].Status, r.Hunks[k].Via = StatusConflict, ""
			}
		}
		return c.byLines(r, i, ref, v)
	}

	// The commits that landed the carried hunks; the hunks that are not
	// there, in a region one of them rewrote, are upstream's own way.
	var landings []*commit
	seen := map[*commit]bool{}
	for _, f := range fates {
		if f.carried && f.landing != nil && !seen[f.landing] {
			seen[f.landing] = true
			landings = append(landings, f.landing)
		}
	}
	sort.Slice(landings, func(a, b int) bool { return c.h.index[landings[a].id] < c.h.index[landings[b].id] })
	needed, rewritten := 0, 0
	allVerbatim := true
	for k := range fates {
		f := &fates[k]
		h := &r.Hunks[k]
		if f.carried {
			if f.landing != nil {
				h.Commit = f.landing.id
				allVerbatim = allVerbatim && f.landVia == ViaReverseApply
			}
			if f.at.state != unitThere {
				h.Status, h.Via = StatusPresent, ViaLanded
			}
			continue
		}
		if f.at.state == unitApplies {
			needed++
			continue
		}
		h.Status, h.Via = StatusConflict, ""
		for _, l := range landings {
			ok, err := c.rewroteRegion(i, k, l)
			if err == nil && !ok {
				ok, err = c.landedLines(i, k, l)
			}
			if err != nil {
				return err
			}
			if ok {
				f.rewrote = l
				break
			}
		}
		if f.rewrote == nil {
			needed++
			continue
		}
		rewritten++
		h.Status, h.Commit = StatusHunkSuperseded, f.rewrote.id
	}
	r.Commits = carriers(r.Hunks, c.h)
	var main *commit
	if len(r.Commits) > 0 {
		main = c.h.commits[c.h.index[r.Commits[0].Commit]]
	}
	switch {
	case needed == 0 && rewritten == 0:
		// Every hunk is upstream: the last commit that landed one of them
		// completed it.
		var last *commit
		if len(landings) > 0 {
			last = landings[len(landings)-1]
		}
		switch {
		case countHunks(r.Hunks, StatusPresent, ViaReverseApply) == len(r.Hunks):
			setStatus(r, StatusPresent, ViaHunks, last)
		case allVerbatim:
			setStatus(r, StatusPresent, ViaCarried, last)
		default:
			setStatus(r, StatusSuperseded, ViaCarried, last)
		}
		return nil
	case needed == 0:
		lm, err := c.lineShare(i, snap, ref.Commit)
		if err != nil {
			return err
		}
		// DESIGN.md: superseded needs upstream to have added most of the
		// patch's added lines too, not only to have rewritten the regions
		// of the hunks that are not there. Short of that, the hunks it did
		// not take stay needed: partial, the safer advice.
		if mostAdded(lm) {
			setStatus(r, StatusSuperseded, ViaRewritten, main)
			r.AddedLines = &lm
			return nil
		}
		r.AddedLines = &lm
	}
	setStatus(r, StatusPartial, ViaHunks, main)
	r.Conflict = nil
	for k, h := range r.Hunks {
		if h.Status == StatusConflict && v.problems != nil && v.problems[k] != nil {
			pr := *v.problems[k]
			r.Conflict = &pr
			break
		}
	}
	return nil
}

// setStatus sets r's status, via and commit (nil: none); a status other than
// partial and conflict carries no offsets or conflict.
func setStatus(r *Result, status, via string, cm *commit) {
	r.Status, r.Via = status, via
	r.Commit, r.Subject = "", ""
	if cm != nil {
		r.Commit, r.Subject = cm.id, cm.subject
	}
	if status != StatusPartial {
		r.Offsets = nil
	}
	if status != StatusConflict && status != StatusPartial {
		r.Conflict = nil
	}
}

// carriers groups the hunks by the commit named on them: the commit that
// carries the most hunks first, then by age.
func carriers(hs []Hunk, h *history) []Carrier {
	var out []Carrier
	at := map[string]int{}
	for _, hk := range hs {
		if hk.Commit == "" {
			continue
		}
		n, ok := at[hk.Commit]
		if !ok {
			n = len(out)
			at[hk.Commit] = n
			cr := Carrier{Commit: hk.Commit}
			if k, ok := h.index[hk.Commit]; ok {
				cr.Subject = h.commits[k].subject
			}
			out = append(out, cr)
		}
		if hk.Status == StatusHunkSuperseded {
			out[n].Rewrote = append(out[n].Rewrote, hk.Line)
		} else {
			out[n].Hunks = append(out[n].Hunks, hk.Line)
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if len(out[a].Hunks) != len(out[b].Hunks) {
			return len(out[a].Hunks) > len(out[b].Hunks)
		}
		return h.index[out[a].Commit] < h.index[out[b].Commit]
	})
	return out
}

// byLines decides a patch none of whose hunks upstream carries: superseded
// when enough of its changed lines are upstream (with the commit that
// brought them), else conflict.
func (c *checker) byLines(r *Result, i int, ref Ref, v verdict) error {
	if v.status == StatusSuperseded && v.via == ViaAddedLines {
		cm, err := c.introducer(i, ref, predLines)
		if err != nil {
			return err
		}
		if cm != nil {
			setStatus(r, StatusSuperseded, ViaAddedLines, cm)
			r.Commits = []Carrier{{Commit: cm.id, Subject: cm.subject}}
			return nil
		}
	}
	setStatus(r, StatusConflict, ViaApply, nil)
	r.Conflict = v.conflict
	return nil
}

// carrierPhrase names the commits that carry a patch's hunks: `upstream
// commit abc ("subject") carries the hunks at lines 4, 12 and rewrote the
// region of the hunk at line 31`.
func carrierPhrase(cs []Carrier) string {
	var out []string
	for _, cr := range cs {
		s := commitPhrase(Result{Commit: cr.Commit, Subject: cr.Subject})
		var parts []string
		if len(cr.Hunks) > 0 {
			parts = append(parts, "carries "+linesPhrase("hunk", cr.Hunks))
		}
		if len(cr.Rewrote) > 0 {
			parts = append(parts, "rewrote the region of "+linesPhrase("hunk", cr.Rewrote))
		}
		if len(parts) > 0 {
			s += " " + strings.Join(parts, " and ")
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

// linesPhrase says "the hunk at line 4" or "the hunks at lines 4, 12".
func linesPhrase(what string, ls []int) string {
	var ns []string
	for _, l := range ls {
		ns = append(ns, fmt.Sprint(l))
	}
	if len(ls) == 1 {
		return fmt.Sprintf("the %s at line %s", what, ns[0])
	}
	return fmt.Sprintf("the %ss at lines %s", what, strings.Join(ns, ", "))
}

// mostAdded reports whether more than half of the patch's added lines are
// in the tree lm was counted on. A patch that only removes lines has no
// added lines to ask about: the rewritten regions decide alone.
func mostAdded(lm LineMatch) bool {
	added, present := lm.Total-lm.Removed, lm.Present-lm.Gone
	return added == 0 || present*2 > added
}
