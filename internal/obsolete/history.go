package obsolete

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/upstream"
)

// history is the upstream history between the pin and the scanned refs: every
// commit reachable from one of the refs and not from the pin (the range), as
// one `git rev-list` gives it, and the patch-ids of the commits in the range
// that touch a path of the series, computed once from one `git log -p`.
type history struct {
	// commits are the range, oldest first (git's topological order, reversed).
	commits []*commit
	index   map[string]int
	// byPatchID lists the relevant commits of each patch-id, oldest first.
	byPatchID map[string][]int
	// relevant are the indexes of the commits that touch a path of the
	// series, oldest first.
	relevant []int
	// reach caches, per ref commit, the set of range commits it reaches.
	reach map[string]bitset
}

// commit is one commit of the range.
type commit struct {
	id      string
	parents []int // parents inside the range
	// parent is the first parent's id ("" for a root commit).
	parent string
	// onPin: the pin is a parent of the commit.
	onPin bool
	// merge: the commit has more than one parent.
	merge bool
	// Set for relevant commits only.
	relevant bool
	subject  string
	patchID  string
	// revertID is the patch-id of the commit's diff reversed: a commit
	// with it as its patch-id undoes this one (series.RevertPatchID).
	revertID string
	paths    map[string]bool
	// changed are, per path it modifies, the line ranges of the parent's
	// file that its diff changes (see logEntry.Changed).
	changed map[string][]lineRange
}

// lineRange is a range of a file's lines, 1-based, to exclusive: lines it
// removes, or (From == To) the place before line From where it adds lines.
type lineRange struct{ From, To int }

type bitset []uint64

func newBitset(n int) bitset              { return make(bitset, (n+63)/64) }
func (b bitset) set(i int)                { b[i/64] |= 1 << (uint(i) % 64) }
func (b bitset) has(i int) bool           { return b[i/64]&(1<<(uint(i)%64)) != 0 }
func (h *history) inRange(id string) bool { _, ok := h.index[id]; return ok }

// or adds the members of c, a set of the same size, to b.
func (b bitset) or(c bitset) {
	for i := range b {
		b[i] |= c[i]
	}
}

// gitRunner runs git on the bare cache. stdin may be nil; out receives stdout.
type gitRunner struct {
	bin    string // the git executable
	gitDir string
	cache  *upstream.Cache // gitDir's cache: git's complaints of damage become its faults
	work   *historyWork    // counts the history questions' work; nil: not counted
	ident  *gitIdent       // bin's identity, found once for every copy; nil: found per memo key
}

// run runs git with args through the cache's one runner (upstream's
// Cache.Git), feeding stdin, and passes its stdout to consume.
func (g gitRunner) run(ctx context.Context, stdin []byte, consume func(io.Reader) error, args ...string) error {
	_, err := g.cache.Git(ctx, upstream.GitRun{Args: args, Stdin: stdin, Stdout: consume, Bin: g.bin})
	return gitError(err)
}

// gitError says why obsolete-check needs git when it is missing.
func gitError(err error) error {
	if errors.Is(err, upstream.ErrNoGit) {
		return fmt.Errorf("obsolete-check needs the git CLI to compute the patch-ids of upstream commits: %w", err)
	}
	return err
}

// loadRange lists the range: commits reachable from tips and not from pin,
// with their parents. The git CLI stops at shallow boundaries by itself.
func loadRange(ctx context.Context, g gitRunner, pin string, tips []string) (*history, error) {
	h := &history{index: map[string]int{}, byPatchID: map[string][]int{}, reach: map[string]bitset{}}
	if len(tips) == 0 {
		return h, nil
	}
	lines, err := rangeLines(ctx, g, pin, tips)
	if err != nil {
		return nil, fmt.Errorf("listing upstream commits after the pin: %w", err)
	}
	h.commits = make([]*commit, len(lines))
	for i, f := range lines {
		h.commits[i] = &commit{id: f[0]}
		h.index[f[0]] = i
	}
	for i, f := range lines {
		if len(f) > 1 {
			h.commits[i].parent = f[1]
		}
		h.commits[i].merge = len(f) > 2
		for _, p := range f[1:] {
			if p == pin {
				h.commits[i].onPin = true
			}
			if j, ok := h.index[p]; ok {
				h.commits[i].parents = append(h.commits[i].parents, j)
			}
		}
	}
	return h, nil
}

// commitMark starts a commit in the log output: git never starts a diff line
// with a control character.
const commitMark = '\x01'

// loadPatchIDs reads the diffs of the range commits that touch paths, with
// one `git log -p`, and records their patch-ids (git patch-id --stable, as
// series.PatchID computes it), subjects and touched paths. Merges are left
// out: git shows no diff for them.
func (h *history) loadPatchIDs(ctx context.Context, g gitRunner, pin string, tips, paths []string) error {
	if len(tips) == 0 || len(paths) == 0 || len(h.commits) == 0 {
		return nil
	}
	entries, err := logEntries(ctx, g, pin, tips, paths, h)
	if err != nil {
		return fmt.Errorf("reading the diffs of upstream commits after the pin: %w", err)
	}
	for _, e := range entries {
		i, ok := h.index[e.ID]
		if !ok {
			continue
		}
		c := h.commits[i]
		c.relevant = true
		c.subject = e.Subject
		c.patchID = e.PatchID
		c.revertID = e.RevertID
		c.paths = map[string]bool{}
		for _, p := range e.Paths {
			c.paths[p] = true
		}
		c.changed = e.Changed
	}
	for i, c := range h.commits {
		if !c.relevant {
			continue
		}
		h.relevant = append(h.relevant, i)
		if c.patchID != "" {
			h.byPatchID[c.patchID] = append(h.byPatchID[c.patchID], i)
		}
	}
	return nil
}

// logEntry is what loadPatchIDs keeps of one commit of `git log -p`.
type logEntry struct {
	ID, Subject string
	PatchID     string // "" when the diff has none
	RevertID    string // the patch-id of the diff reversed; "" when none
	Paths       []string
	// Changed are, per old path of a modified file, the line ranges of the
	// parent's file that the diff removes lines from or adds lines at.
	Changed map[string][]lineRange
}

// readLog reads the output of loadPatchIDs' `git log -p`: each commit's id,
// subject, patch-id and the paths its diff names.
func readLog(r io.Reader) ([]logEntry, error) {
	var entries []logEntry
	var cur *logEntry
	var paths map[string]bool
	var buf bytes.Buffer
	var ranges rangeReader
	flush := func() {
		if cur == nil {
			return
		}
		if id, err := series.PatchID(buf.Bytes()); err == nil {
			cur.PatchID = id
		}
		if id, err := series.RevertPatchID(buf.Bytes()); err == nil {
			cur.RevertID = id
		}
		for p := range paths {
			cur.Paths = append(cur.Paths, p)
		}
		sort.Strings(cur.Paths)
		cur.Changed = ranges.done()
		entries = append(entries, *cur)
		buf.Reset()
		cur = nil
	}
	br := bufio.NewReaderSize(r, 256<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if line[0] == commitMark {
				flush()
				head := strings.TrimRight(string(line[1:]), "\n")
				id, subject, _ := strings.Cut(head, " ")
				cur = &logEntry{ID: id, Subject: subject}
				paths = map[string]bool{}
			} else if cur != nil {
				buf.Write(line)
				if !ranges.line(line) {
					notePaths(paths, line)
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	flush()
	return entries, nil
}

// rangeReader collects, from one commit's diff, the line ranges of each
// modified file that the diff changes (removed lines, and the places where it
// adds lines), in the parent's numbering.
type rangeReader struct {
	path         string // the old path of the file diff being read; "" for none
	old, oldLeft int    // the next old line, and how many old lines the hunk has left
	newLeft      int
	out          map[string][]lineRange
}

// line reads one diff line; it reports whether the line was a hunk's body
// line (so no header).
func (rr *rangeReader) line(b []byte) bool {
	s := strings.TrimRight(string(b), "\r\n")
	if rr.oldLeft > 0 || rr.newLeft > 0 {
		switch {
		case strings.HasPrefix(s, "-"):
			rr.add(rr.old, rr.old+1)
			rr.old++
			rr.oldLeft--
		case strings.HasPrefix(s, "+"):
			rr.add(rr.old, rr.old)
			rr.newLeft--
		case strings.HasPrefix(s, "\\"):
		default:
			rr.old++
			rr.oldLeft--
			rr.newLeft--
		}
		return true
	}
	switch {
	case strings.HasPrefix(s, "diff --git "):
		rr.path = ""
	case strings.HasPrefix(s, "--- a/"):
		rr.path = strings.TrimSuffix(s[len("--- a/"):], "\t")
	case strings.HasPrefix(s, `--- "a/`):
		if u, err := strconv.Unquote(strings.TrimSuffix(s[4:], "\t")); err == nil {
			rr.path = u[2:]
		}
	case strings.HasPrefix(s, "--- "):
		rr.path = ""
	case strings.HasPrefix(s, "@@ -"):
		var a, b, c, d int
		if n, _ := fmt.Sscanf(s, "@@ -%d,%d +%d,%d @@", &a, &b, &c, &d); n == 4 {
		} else if n, _ := fmt.Sscanf(s, "@@ -%d +%d,%d @@", &a, &c, &d); n == 3 {
			b = 1
		} else if n, _ := fmt.Sscanf(s, "@@ -%d,%d +%d @@", &a, &b, &c); n == 3 {
			d = 1
		} else if n, _ := fmt.Sscanf(s, "@@ -%d +%d @@", &a, &c); n == 2 {
			b, d = 1, 1
		} else {
			return false
		}
		rr.old, rr.oldLeft, rr.newLeft = a, b, d
		if b == 0 {
			// A hunk that only adds counts its old start as the line
			// before the place.
			rr.old = a + 1
		}
	}
	return false
}

func (rr *rangeReader) add(from, to int) {
	if rr.path == "" {
		return
	}
	if rr.out == nil {
		rr.out = map[string][]lineRange{}
	}
	rs := rr.out[rr.path]
	if n := len(rs); n > 0 && rs[n-1].To >= from {
		rs[n-1].To = max(rs[n-1].To, to)
		rr.out[rr.path] = rs
		return
	}
	rr.out[rr.path] = append(rs, lineRange{from, to})
}

// done returns the ranges read and starts over.
func (rr *rangeReader) done() map[string][]lineRange {
	out := rr.out
	*rr = rangeReader{}
	return out
}

// notePaths records the paths a diff header line names.
func notePaths(paths map[string]bool, line []byte) {
	s := strings.TrimRight(string(line), "\r\n")
	switch {
	case strings.HasPrefix(s, "diff --git "):
		for _, n := range diffGitNames(s[len("diff --git "):]) {
			paths[n] = true
		}
	case strings.HasPrefix(s, "--- a/"), strings.HasPrefix(s, "+++ b/"):
		// git ends a name with a space in it with a tab.
		paths[strings.TrimSuffix(s[len("--- a/"):], "\t")] = true
	case strings.HasPrefix(s, `--- "a/`), strings.HasPrefix(s, `+++ "b/`):
		if u, err := strconv.Unquote(strings.TrimSuffix(s[4:], "\t")); err == nil {
			paths[u[2:]] = true
		}
	default:
		for _, pre := range []string{"rename from ", "rename to ", "copy from ", "copy to "} {
			if rest, ok := strings.CutPrefix(s, pre); ok {
				if strings.HasPrefix(rest, `"`) {
					if u, err := strconv.Unquote(rest); err == nil {
						rest = u
					}
				}
				paths[rest] = true
			}
		}
	}
}

// diffGitNames reads the two names of a "diff --git a/X b/Y" line (without
// its prefix). Unquoted names with spaces are only read when both are equal.
func diffGitNames(s string) []string {
	if strings.HasPrefix(s, `"`) {
		var out []string
		for s != "" {
			s = strings.TrimLeft(s, " ")
			var tok string
			if strings.HasPrefix(s, `"`) {
				q, err := strconv.QuotedPrefix(s)
				if err != nil {
					return out
				}
				tok, _ = strconv.Unquote(q)
				s = s[len(q):]
			} else {
				tok, s, _ = strings.Cut(s, " ")
			}
			if len(tok) > 2 {
				out = append(out, tok[2:])
			}
		}
		return out
	}
	if (len(s)-1)%2 == 0 {
		half := (len(s) - 1) / 2
		a, b := s[:half], s[half+1:]
		if len(a) > 2 && len(b) > 2 && a[2:] == b[2:] {
			return []string{a[2:]}
		}
	}
	if a, b, ok := strings.Cut(s, " "); ok && len(a) > 2 && len(b) > 2 {
		return []string{a[2:], b[2:]}
	}
	return nil
}

// reachable returns the range commits that tip reaches (none when tip is not
// in the range: the pin reaches it).
func (h *history) reachable(tip string) bitset {
	if b, ok := h.reach[tip]; ok {
		return b
	}
	b := newBitset(len(h.commits))
	if start, ok := h.index[tip]; ok {
		stack := []int{start}
		b.set(start)
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, p := range h.commits[i].parents {
				if !b.has(p) {
					b.set(p)
					stack = append(stack, p)
				}
			}
		}
	}
	h.reach[tip] = b
	return b
}

// containsPin reports whether tip has the pin in its history: a commit of the
// range that tip reaches has the pin as a parent.
func (h *history) containsPin(tip string) bool {
	reach := h.reachable(tip)
	for i, c := range h.commits {
		if c.onPin && reach.has(i) {
			return true
		}
	}
	return false
}

// patchIDCommit returns the oldest commit with patch-id id that tip reaches
// and the pin does not, or nil.
func (h *history) patchIDCommit(id, tip string) *commit {
	if id == "" {
		return nil
	}
	cands := h.byPatchID[id]
	if len(cands) == 0 {
		return nil
	}
	reach := h.reachable(tip)
	first, lastLand := -1, -1
	for _, i := range cands {
		if reach.has(i) {
			if first < 0 {
				first = i
			}
			lastLand = max(lastLand, i)
		}
	}
	if first < 0 {
		return nil
	}
	// A commit of tip's history that reverts a landing one, after it,
	// undoes it: unless a later one lands the change again, no commit
	// carries it. (h.commits is in topological order, oldest first.)
	lastRevert := -1
	for _, i := range cands {
		if !reach.has(i) {
			continue
		}
		for _, r := range h.reverts(i) {
			if reach.has(r) && h.reachable(h.commits[r].id).has(i) {
				lastRevert = max(lastRevert, r)
			}
		}
	}
	switch {
	case lastRevert > lastLand:
		return nil
	case lastRevert >= 0:
		return h.commits[lastLand]
	}
	return h.commits[first]
}

// reverts are the relevant commits that revert commit i: their diff has
// the patch-id of i's reversed (series.RevertPatchID), or their subject is
// git revert's, `Revert "<i's subject>"` (a squash merge may add " (#N)").
func (h *history) reverts(i int) []int {
	c := h.commits[i]
	var out []int
	if c.revertID != "" {
		out = append(out, h.byPatchID[c.revertID]...)
	}
	if c.subject != "" {
		prefix := `Revert "` + c.subject + `"`
		for _, r := range h.relevant {
			if r != i && strings.HasPrefix(h.commits[r].subject, prefix) && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// turnedOn returns the non-merge commit of tip's history after which holds
// (a property of a commit's tree) turned true and stayed true up to tip, as
// `git log --no-merges -S` names the commit that brought a line: it walks
// tip's first parents, oldest first, for the last commit at which holds
// turned true; when that commit is a merge, the change came from the
// branch it merged, and the walk goes on along that branch's own commits
// (the first parents of the merged parent that the merge's first parent
// does not reach). base is whether holds is true at the pin (the state
// before the range). changes, when not nil, tells the commits whose tree
// holds can differ on from their first parent's (a merge, or a commit that
// touches the files holds reads); at the others holds is not asked. It
// returns -1 when holds is false at tip, when it held from the start of the
// walk, or when only a merge's own resolution made it true.
func (h *history) turnedOn(tip string, base bool, holds func(i int) (bool, error), changes func(i int) bool) (int, error) {
	start, ok := h.index[tip]
	if !ok {
		return -1, nil
	}
	var stop bitset
	for {
		// tip's first-parent chain inside the range, above stop.
		var chain []int
		before := -1 // the commit below the chain, in stop; -1: the pin's side
		for i := start; ; {
			chain = append(chain, i)
			j, ok := h.index[h.commits[i].parent]
			if !ok {
				break
			}
			if stop != nil && stop.has(j) {
				before = j
				break
			}
			i = j
		}
		prev := base
		if before >= 0 {
			var err error
			if prev, err = holds(before); err != nil {
				return -1, err
			}
		}
		found := -1
		for k := len(chain) - 1; k >= 0; k-- {
			if changes != nil && !changes(chain[k]) {
				continue // its first parent's value, prev
			}
			ok, err := holds(chain[k])
			if err != nil {
				return -1, err
			}
			if ok && !prev {
				found = chain[k]
			}
			prev = ok
		}
		if !prev || found < 0 {
			return -1, nil
		}
		c := h.commits[found]
		if !c.merge {
			return found, nil
		}
		// A merge: follow the merged parent that has it.
		first, ok := h.index[c.parent]
		next := -1
		for _, p := range c.parents {
			if ok && p == first {
				continue
			}
			has, err := holds(p)
			if err != nil {
				return -1, err
			}
			if has {
				next = p
				break
			}
		}
		if next < 0 {
			return -1, nil
		}
		if ok {
			stop = h.reachable(h.commits[first].id)
		} else {
			stop = nil
		}
		start = next
	}
}
