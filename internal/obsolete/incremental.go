package obsolete

import (
	"bytes"
	"context"
	"encoding/gob"
	"io"
	"slices"
	"strings"

	"github.com/patchkit/patchkit/internal/tree"
	"github.com/patchkit/patchkit/internal/upstream"
)

// The history memo grows with upstream. Its two questions (the range's
// commits, and the diffs of those that touch the series' paths) are each
// kept in one entry per pin (and per set of paths), keyed by everything but
// the tips: the entry records the tips it answers for. A run whose tips
// are those of the entry reads it; a run whose tips moved on asks git only
// about the commits the old tips do not reach (`^old` for each old tip) and
// appends them; a run with no entry, or whose history was rewritten (a
// commit of the old range that the new tips no longer reach), asks git
// about the whole range. The answer is the same as a whole walk's: a commit
// the new tips reach is either reachable from an old tip (and then in the
// old range, when the pin does not reach it) or one of the new commits.

// historyWork counts what the history questions cost git; a test seam.
type historyWork struct {
	// Listed counts the commits `git rev-list` printed, Logged those `git
	// log -p` printed (the ones that touch the series' paths).
	Listed, Logged int
	// FullWalks counts the questions asked over the whole range, Steps
	// those asked over the new commits only.
	FullWalks, Steps int
	// Quiet counts the steps of the diffs' question answered without git:
	// no commit git log would be asked about touches the series' paths
	// (see history.quiet).
	Quiet int
}

// withHistoryWork makes Check count its history questions into w; a test
// seam.
func withHistoryWork(w *historyWork) Option { return func(o *options) { o.work = w } }

func (w *historyWork) countQuiet() {
	if w != nil {
		w.Quiet++
	}
}

func (w *historyWork) count(full bool, listed, logged int) {
	if w == nil {
		return
	}
	if full {
		w.FullWalks++
	} else {
		w.Steps++
	}
	w.Listed += listed
	w.Logged += logged
}

// rangeState is the memo entry of the range question: git's answer (one
// line of `rev-list --parents` per commit, oldest first) for Tips, as git
// printed it: reading it back is a split, and a step appends to it.
type rangeState struct {
	Tips []string
	Out  []byte
}

// logState is the memo entry of the patch-ids' question: what `git log -p`
// said of the commits that touch the paths in the range of Tips.
type logState struct {
	Tips    []string
	Entries []logEntry
}

// readStep decodes the entry at key into v.
func readStep(g gitRunner, key string, v any) bool {
	data, ok := readMemo(g.memoPath(key))
	if !ok || gob.NewDecoder(bytes.NewReader(data)).Decode(v) != nil {
		return false
	}
	touchMemo(g.memoPath(key))
	return true
}

// writeStep records v at key.
func writeStep(g gitRunner, key string, v any) {
	var data bytes.Buffer
	if gob.NewEncoder(&data).Encode(v) == nil {
		writeMemo(g.memoPath(key), data.Bytes())
	}
}

// revs is the --stdin input naming the commits reachable from tips and from
// none of not.
func revs(tips []string, not ...[]string) []byte {
	var b bytes.Buffer
	for _, t := range tips {
		b.WriteString(t + "\n")
	}
	for _, n := range not {
		for _, x := range n {
			b.WriteString("^" + x + "\n")
		}
	}
	return b.Bytes()
}

var rangeArgs = []string{"rev-list", "--topo-order", "--reverse", "--parents", "--stdin"}

// rangeLines answers the range question for tips (see loadRange), from the
// memo where it can, asking git about what it lacks.
func rangeLines(ctx context.Context, g gitRunner, pin string, tips []string) ([][]string, error) {
	key, keyed := g.memoKey(revs(nil, []string{pin}), rangeArgs)
	var st rangeState
	have := keyed && readStep(g, key, &st)
	if have && slices.Equal(st.Tips, tips) {
		return fields(st.Out), nil
	}
	var out []byte
	var lines [][]string
	if have {
		// git ignores an old tip the cache no longer has
		// (--ignore-missing); its commits then come back as new ones,
		// which step refuses.
		args := append(slices.Clone(rangeArgs), "--ignore-missing")
		fresh, err := g.cache.Git(ctx, upstream.GitRun{Args: args, Stdin: revs(tips, []string{pin}, st.Tips), Bin: g.bin})
		if err != nil {
			return nil, gitError(err)
		}
		freshLines := fields(fresh)
		g.work.count(false, len(freshLines), 0)
		if lines = step(fields(st.Out), freshLines, tips); lines != nil {
			out = append(slices.Clip(st.Out), fresh...)
		}
	}
	if lines == nil {
		var err error
		if out, err = g.cache.Git(ctx, upstream.GitRun{Args: rangeArgs, Stdin: revs(tips, []string{pin}), Bin: g.bin}); err != nil {
			return nil, gitError(err)
		}
		lines = fields(out)
		g.work.count(true, len(lines), 0)
	}
	if keyed {
		writeStep(g, key, rangeState{Tips: tips, Out: out})
	}
	return lines, nil
}

// fields splits git's output into the fields of each non-empty line.
func fields(out []byte) [][]string {
	var lines [][]string
	for len(out) > 0 {
		line, rest, _ := bytes.Cut(out, []byte("\n"))
		out = rest
		if f := strings.Fields(string(line)); len(f) > 0 {
			lines = append(lines, f)
		}
	}
	return lines
}

// step returns the range of the new tips, given the old range and the
// commits the new tips reach and the old ones do not (fresh), when every
// commit of the old range is still in it: the old lines, then the fresh
// ones. Fresh commits never are ancestors of old ones, so the order stays
// topological. It returns nil when the history was rewritten (an old commit
// the new tips no longer reach) or an old tip was missing (a fresh commit
// already in the old range): then only a whole walk answers.
func step(old, fresh [][]string, tips []string) [][]string {
	index := make(map[string]int, len(old))
	for i, f := range old {
		index[f[0]] = i
	}
	for _, f := range fresh {
		if _, ok := index[f[0]]; ok {
			return nil
		}
	}
	// The old commits the new tips reach: those that are tips, or parents
	// of fresh commits, and their ancestors in the old range.
	reached := make([]bool, len(old))
	var stack []int
	push := func(id string) {
		if i, ok := index[id]; ok && !reached[i] {
			reached[i] = true
			stack = append(stack, i)
		}
	}
	for _, t := range tips {
		push(t)
	}
	for _, f := range fresh {
		for _, p := range f[1:] {
			push(p)
		}
	}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, p := range old[i][1:] {
			push(p)
		}
	}
	if slices.Contains(reached, false) {
		return nil
	}
	return append(slices.Clip(old), fresh...)
}

var logArgs = []string{"log", "--no-merges", "--full-diff", "-p", "--full-index", "--binary",
	"--no-textconv", "--no-ext-diff", "--no-color", "--diff-merges=off",
	"--format=%x01%H %s", "--stdin"}

// logEntries answers the patch-ids' question for tips and paths (see
// loadPatchIDs), from the memo where it can, asking git about the commits
// the memo's tips do not reach, unless h tells that git would print none
// of them (history.quiet). h's range holds the tips' range: the entry
// keeps only its commits.
func logEntries(ctx context.Context, g gitRunner, pin string, tips, paths []string, h *history) ([]logEntry, error) {
	pathsIn := func(stdin []byte) []byte {
		b := bytes.NewBuffer(stdin)
		b.WriteString("--\n")
		for _, p := range paths {
			b.WriteString(p + "\n")
		}
		return b.Bytes()
	}
	key, keyed := g.memoKey(pathsIn(revs(nil, []string{pin})), logArgs)
	var st logState
	have := keyed && readStep(g, key, &st)
	if have && slices.Equal(st.Tips, tips) {
		return st.Entries, nil
	}
	var entries []logEntry
	if have && h.quiet(g.cache, pin, tips, st.Tips, paths) {
		// git log would print nothing: the old entries of commits still
		// in the range stand.
		g.work.countQuiet()
		for _, e := range st.Entries {
			if h.inRange(e.ID) {
				entries = append(entries, e)
			}
		}
	} else if have {
		// Every commit of the new range is in the old one or reached by
		// none of the old tips (a missing old tip, which git ignores,
		// only adds commits here). Old entries of commits no longer in
		// the range are dropped.
		args := append(slices.Clone(logArgs), "--ignore-missing")
		fresh, err := logRun(ctx, g, pathsIn(revs(tips, []string{pin}, st.Tips)), args)
		if err != nil {
			return nil, err
		}
		g.work.count(false, 0, len(fresh))
		seen := map[string]bool{}
		for _, e := range fresh {
			seen[e.ID] = true
		}
		for _, e := range st.Entries {
			if !seen[e.ID] && h.inRange(e.ID) {
				entries = append(entries, e)
			}
		}
		entries = append(entries, fresh...)
	} else {
		var err error
		if entries, err = logRun(ctx, g, pathsIn(revs(tips, []string{pin})), logArgs); err != nil {
			return nil, err
		}
		g.work.count(true, 0, len(entries))
	}
	if keyed {
		writeStep(g, key, logState{Tips: tips, Entries: entries})
	}
	return entries, nil
}

// quietMax bounds the commits history.quiet compares in the cache: more
// are git log's to read.
const quietMax = 64

// quiet reports whether `git log --no-merges -- paths` over the commits
// tips reach and old and the pin do not would print nothing, from the
// range alone: git log shows a commit only when it is no merge and its
// tree differs from its parent's at one of paths (a literal pathspec: the
// path, or a directory's whole tree), so when none of those commits is
// such a one, it shows none, whatever its history simplification follows.
//
// The commits are found in the range's graph: those a tip reaches, less
// those an old tip in the range reaches (an old tip out of the range
// excludes nothing here, so the set is at most larger than git's, never
// smaller). A tip that is neither in the range nor the pin, a commit with
// no parent (a root, or a shallow boundary, which git diffs against the
// empty tree), a path that is not clean, more than quietMax commits, or a
// tree that cannot be read answers false: git is asked. The trees are read
// through the cache's verified object reader.
func (h *history) quiet(c *upstream.Cache, pin string, tips, old, paths []string) bool {
	for _, p := range paths {
		if tree.Clean(p) != nil {
			return false
		}
	}
	asked, known := newBitset(len(h.commits)), newBitset(len(h.commits))
	for _, t := range tips {
		if _, ok := h.index[t]; !ok && t != pin {
			return false
		}
		asked.or(h.reachable(t))
	}
	for _, t := range old {
		known.or(h.reachable(t))
	}
	var todo []*commit
	for i, cm := range h.commits {
		if asked.has(i) && !known.has(i) && !cm.merge {
			todo = append(todo, cm)
		}
	}
	if len(todo) > quietMax {
		return false
	}
	for _, cm := range todo {
		if cm.parent == "" {
			return false
		}
		if same, err := sameAt(c, cm.id, cm.parent, paths); err != nil || !same {
			return false
		}
	}
	return true
}

// sameAt reports whether commits a and b have the same entry (mode and
// object) at each of paths, or none at both.
func sameAt(c *upstream.Cache, a, b string, paths []string) (bool, error) {
	sa, err := c.Source(a)
	if err != nil {
		return false, err
	}
	sb, err := c.Source(b)
	if err != nil {
		return false, err
	}
	for _, p := range paths {
		ea, oka, err := sa.Entry(p)
		if err != nil {
			return false, err
		}
		eb, okb, err := sb.Entry(p)
		if err != nil {
			return false, err
		}
		if oka != okb || oka && (ea.Mode != eb.Mode || ea.Hash != eb.Hash) {
			return false, nil
		}
	}
	return true, nil
}

func logRun(ctx context.Context, g gitRunner, stdin []byte, args []string) ([]logEntry, error) {
	var entries []logEntry
	err := g.run(ctx, stdin, func(r io.Reader) error {
		var err error
		entries, err = readLog(r)
		return err
	}, args...)
	return entries, err
}
