package obsolete

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/patchkit/patchkit/internal/tree"
)

// Moved landings: upstream moves code it carries (a refactor that moves a
// function to another file, a test helper deduplicated into a shared file),
// and a landing stays a landing when its lines move, as `git log -S` or
// `git blame -C` would follow them.
//
//   - Against a commit with the patch's patch-id, a hunk that applies again
//     is a revert unless its lines moved (unitMoved): the commit of the ref's
//     history after the patch-id commit that made the hunk apply again (the
//     mover) adds most of the hunk's significant added lines, in another
//     file or another place, and the ref still has them there. A hunk whose
//     significant removed lines are back is a revert all the same.
//   - The line evidence (lineShare, unitKept, landedLines) reads a patch
//     file together with the files upstream moved its lines to (movedTo):
//     a commit of the tree's history that touches the file and whose diff
//     removes at least minMoved of the file's lines and adds the same lines
//     to another file moved them there. One hop: the history read with
//     `git log -p` is that of the series' paths.
//
// The history patchkit reads is limited to the series' paths, so a mover's
// whole diff is read once more with `git diff-tree -p` on the bare cache
// (fullDiff), memoized, at most maxMoveDiffs commits a run and maxDiffBytes
// of diff each: beyond, the commit is taken as moving nothing, which keeps
// the old, safer verdicts.

// ViaMoved (a hunk's Via): the hunk applies again, but only because upstream
// moved its lines elsewhere after the commit with the patch's patch-id landed
// it (unitMoved): that commit still decides.
const ViaMoved = "moved"

// minMoved is the fewest equal significant lines a commit must remove from a
// file and add to another for the lines to count as moved there; minMovedUnit
// the fewest of one hunk's added lines for the hunk's lines to count as moved.
const (
	minMoved     = 3
	minMovedUnit = 2
)

// The bounds of reading movers' diffs.
const (
	maxMoveDiffs = 512
	maxDiffBytes = 8 << 20
)

// commitDiff is what fullDiff keeps of a commit's whole diff: per path, the
// trimmed non-blank lines it adds (by new path) and removes (by old path);
// per line, in how many files it adds or removes it. A line added to or
// removed from more than one file (a licence header, a build tag) tells no
// move.
type commitDiff struct {
	added, removed     map[string]map[string]bool
	addedIn, removedIn map[string]int
}

// fullDiff reads commit cm's whole diff against its first parent, memoized;
// nil when cm has no parent in the cache (a root or a shallow boundary, which
// git would diff against the empty tree), when the diff is too big, or when
// the run has read maxMoveDiffs diffs already.
func (c *checker) fullDiff(cm *commit) (*commitDiff, error) {
	if d, ok := c.diffs[cm.id]; ok {
		return d, nil
	}
	if cm.parent == "" || cm.merge || c.git.cache == nil || len(c.diffs) >= maxMoveDiffs {
		return nil, nil
	}
	var d *commitDiff
	err := c.git.run(c.ctx, nil, func(r io.Reader) error {
		var err error
		d, err = readDiff(io.LimitReader(r, maxDiffBytes+1))
		if _, cerr := io.Copy(io.Discard, r); err == nil {
			err = cerr
		}
		return err
	}, "diff-tree", "-p", "-r", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv", cm.parent, cm.id)
	if err != nil {
		return nil, fmt.Errorf("reading the diff of %s: %w", cm.id, err)
	}
	c.diffs[cm.id] = d
	return d, nil
}

// readDiff reads a `git diff-tree -p` output; nil when it is longer than
// maxDiffBytes.
func readDiff(r io.Reader) (*commitDiff, error) {
	d := &commitDiff{added: map[string]map[string]bool{}, removed: map[string]map[string]bool{},
		addedIn: map[string]int{}, removedIn: map[string]int{}}
	var oldPath, newPath string
	oldLeft, newLeft, n := 0, 0, 0
	note := func(m map[string]map[string]bool, in map[string]int, path, s string) {
		if s = lineText(s); s == "" || path == "" {
			return
		}
		if m[path] == nil {
			m[path] = map[string]bool{}
		}
		if !m[path][s] {
			m[path][s] = true
			in[s]++
		}
	}
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadString('\n')
		n += len(line)
		if n > maxDiffBytes {
			return nil, nil
		}
		s := strings.TrimRight(line, "\r\n")
		switch {
		case oldLeft > 0 || newLeft > 0:
			switch {
			case strings.HasPrefix(s, "+"):
				note(d.added, d.addedIn, newPath, s[1:])
				newLeft--
			case strings.HasPrefix(s, "-"):
				note(d.removed, d.removedIn, oldPath, s[1:])
				oldLeft--
			case strings.HasPrefix(s, "\\"):
			default:
				oldLeft--
				newLeft--
			}
		case strings.HasPrefix(s, "diff --git "):
			oldPath, newPath = "", ""
		case strings.HasPrefix(s, "--- "):
			oldPath = diffPath(s[4:], "a/")
		case strings.HasPrefix(s, "+++ "):
			newPath = diffPath(s[4:], "b/")
		case strings.HasPrefix(s, "@@ -"):
			oldLeft, newLeft = hunkCounts(s)
		}
		if err == io.EOF {
			return d, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// diffPath reads the path of a ---/+++ line after its marker: "" for
// /dev/null.
func diffPath(s, prefix string) string {
	s = strings.TrimSuffix(s, "\t")
	if strings.HasPrefix(s, `"`) {
		if u, err := strconv.Unquote(s); err == nil {
			s = u
		}
	}
	p, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return ""
	}
	return p
}

// hunkCounts reads the old and new line counts of a "@@ -a,b +c,d @@" line.
func hunkCounts(s string) (int, int) {
	var rr rangeReader
	rr.line([]byte(s))
	return rr.oldLeft, rr.newLeft
}

// movedTo returns, for the tree of commit at, where the commits it reaches
// moved lines of path to (see the top of this file), memoized: per file, the
// lines moved there, less those the file had at the pin (a revert that puts
// lines back where they were moves nothing of a patch's). None when at is not
// in the range. A commit that reverts another (history.reverts) moves
// nothing.
func (c *checker) movedTo(path, at string) (map[string]map[string]bool, error) {
	key := path + "\x00" + at
	if ts, ok := c.moved[key]; ok {
		return ts, nil
	}
	var out map[string]map[string]bool
	if _, ok := c.h.index[at]; ok {
		reach := c.h.reachable(at)
		for _, idx := range c.h.relevant {
			cm := c.h.commits[idx]
			if !reach.has(idx) || !cm.paths[path] || len(cm.paths) < 2 || removedCount(cm.changed[path]) < minMoved || c.isRevert(idx) {
				continue
			}
			d, err := c.fullDiff(cm)
			if err != nil {
				return nil, err
			}
			if d == nil {
				continue
			}
			gone := d.removed[path]
			for q, add := range d.added {
				if q == path || len(add) < minMoved {
					continue
				}
				var pin *lines
				if pin, err = readLines(c.pin, []string{q}); err != nil {
					return nil, err
				}
				moved := map[string]bool{}
				for s := range gone {
					if add[s] && d.addedIn[s] == 1 && d.removedIn[s] == 1 && (pin == nil || len(pin.at[s]) == 0) {
						moved[s] = true
					}
				}
				if len(moved) < minMoved {
					continue
				}
				if out == nil {
					out = map[string]map[string]bool{}
				}
				if out[q] == nil {
					out[q] = moved
					continue
				}
				for s := range moved {
					out[q][s] = true
				}
			}
		}
	}
	c.moved[key] = out
	return out, nil
}

// isRevert reports whether range commit idx reverts a relevant commit.
func (c *checker) isRevert(idx int) bool {
	if v, ok := c.revert[idx]; ok {
		return v
	}
	if c.revert == nil {
		c.revert = map[int]bool{}
		for _, i := range c.h.relevant {
			for _, r := range c.h.reverts(i) {
				c.revert[r] = true
			}
		}
	}
	return c.revert[idx]
}

// removedCount counts the lines that ranges remove.
func removedCount(rs []lineRange) int {
	n := 0
	for _, r := range rs {
		n += r.To - r.From
	}
	return n
}

// linesAt reads the first of names that src has, together with the lines
// the commits of commit at's history moved from it to other files and that
// those files in src still have (movedTo); at "" reads the file alone. nil
// when none of them is there.
func (c *checker) linesAt(src tree.Source, names []string, at string) (*lines, error) {
	cur, err := readLines(src, names)
	if err != nil || at == "" {
		return cur, err
	}
	for _, n := range names {
		ts, err := c.movedTo(n, at)
		if err != nil {
			return nil, err
		}
		for t, moved := range ts {
			o, err := readLines(src, []string{t})
			if err != nil {
				return nil, err
			}
			if o == nil {
				continue
			}
			c.movesUsed = true
			cur = cur.join(o, moved)
		}
	}
	return cur, nil
}

// join returns l's lines followed by those of o that keep has (l may be
// nil).
func (l *lines) join(o *lines, keep map[string]bool) *lines {
	out := &lines{at: map[string][]int{}}
	add := func(s string) {
		out.at[s] = append(out.at[s], len(out.text))
		out.text = append(out.text, s)
	}
	if l != nil {
		for _, s := range l.text {
			add(s)
		}
	}
	for _, s := range o.text {
		if keep[s] {
			add(s)
		}
	}
	return out
}

type moveKey struct {
	patch, unit int
	hit, ref    string
}

// unitMoved reports whether unit k of patch i, which applies again at ref
// though hit, a commit with the patch's patch-id, landed it, applies because
// upstream moved its lines: the last commit of ref's history after hit that
// touches the unit's file and at which the unit turned to apply (the mover)
// adds at least half (and minMovedUnit) of the unit's significant added lines
// to one file (another, or the same one elsewhere), and ref's tree has most
// of them there still. Memoized.
func (c *checker) unitMoved(i, k int, ref Ref, hit *commit) (bool, error) {
	key := moveKey{i, k, hit.id, ref.Commit}
	if v, ok := c.moves[key]; ok {
		return v, nil
	}
	v, err := c.unitMovedAt(i, k, ref, hit)
	if err != nil {
		return false, err
	}
	c.moves[key] = v
	return v, nil
}

func (c *checker) unitMovedAt(i, k int, ref Ref, hit *commit) (bool, error) {
	u := c.unitsOf(i)[k]
	if len(u.patch.Files) != 1 {
		return false, nil
	}
	f := u.patch.Files[0]
	if f.IsBinary || f.IsDelete || len(f.TextFragments) == 0 {
		return false, nil
	}
	var pin *lines
	if !f.IsNew {
		var err error
		if pin, err = c.pinFile(f); err != nil {
			return false, err
		}
	}
	added := significant(f, pin).added
	if len(added) < minMovedUnit {
		return false, nil
	}
	hitIdx, ok := c.h.index[hit.id]
	if !ok {
		return false, nil
	}
	paths := map[string]bool{}
	for _, n := range unitPaths(u) {
		paths[n] = true
	}
	prev, err := c.unitState(i, k, hit.id)
	if err != nil {
		return false, err
	}
	reach := c.h.reachable(ref.Commit)
	var mover *commit
	for _, idx := range c.h.relevant {
		if idx <= hitIdx || !reach.has(idx) {
			continue
		}
		cm := c.h.commits[idx]
		if !touches(cm, paths) || !c.h.reachable(cm.id).has(hitIdx) {
			continue
		}
		s, err := c.unitState(i, k, cm.id)
		if err != nil {
			return false, err
		}
		if s.state == unitApplies && prev.state != unitApplies {
			mover = cm
		}
		prev = s
	}
	if mover == nil {
		return false, nil
	}
	d, err := c.fullDiff(mover)
	if err != nil || d == nil {
		return false, err
	}
	snap, err := c.cache.Source(ref.Commit)
	if err != nil {
		return false, err
	}
	for q, add := range d.added {
		var there []string
		for _, s := range added {
			if add[s] {
				there = append(there, s)
			}
		}
		if len(there) < minMovedUnit || 2*len(there) <= len(added) {
			continue
		}
		cur, err := readLines(snap, []string{q})
		if err != nil {
			return false, err
		}
		still := 0
		for _, s := range there {
			if cur != nil && len(cur.at[s]) > 0 {
				still++
			}
		}
		if 2*still > len(added) {
			return true, nil
		}
	}
	return false, nil
}

// idHolds reports whether hit, a commit of ref with patch i's patch-id,
// still decides for the patch whose hunks are hunks (on the ref's tree snap,
// with the earlier patches): no hunk was reverted since. A hunk that applies
// again was reverted unless it creates a file (moved or dropped by a rework
// as likely), or its lines moved (unitMoved) and none of its removed lines is
// back; a hunk in conflict was reverted when its own lines are not kept and
// one of its removed lines is back (added lines gone were edited or moved).
func (c *checker) idHolds(i int, ref Ref, hit *commit, hunks []Hunk, snap tree.Source) (bool, error) {
	us := c.unitsOf(i)
	for k, h := range hunks {
		switch h.Status {
		case StatusPresent:
		case StatusApplies:
			if createsFile(us[k]) {
				continue
			}
			back, err := c.unitRestored(us[k], snap)
			if err != nil || back {
				return false, err
			}
			moved, err := c.unitMoved(i, k, ref, hit)
			if err != nil || !moved {
				return false, err
			}
		default:
			kept, err := c.unitKept(us[k], snap, ref.Commit)
			if err != nil {
				return false, err
			}
			if kept {
				continue
			}
			back, err := c.unitRestored(us[k], snap)
			if err != nil || back {
				return false, err
			}
		}
	}
	return true, nil
}

// hasAdded reports whether unit u has significant added lines (against its
// file at the pin).
func (c *checker) hasAdded(u unit) bool {
	if len(u.patch.Files) != 1 {
		return false
	}
	f := u.patch.Files[0]
	if f.IsDelete || f.IsBinary || len(f.TextFragments) == 0 {
		return false
	}
	var pin *lines
	if !f.IsNew {
		var err error
		if pin, err = c.pinFile(f); err != nil {
			return false
		}
	}
	return len(significant(f, pin).added) > 0
}
