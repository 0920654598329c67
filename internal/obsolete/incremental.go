package obsolete

import (
	"bytes"
	"context"
	"encoding/gob"
	"io"
	"slices"
	"strings"

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
}

// withHistoryWork makes Check count its history questions into w; a test
// seam.
func withHistoryWork(w *historyWork) Option { return func(o *options) { o.work = w } }

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
// the memo's tips do not reach. inRange tells the commits of the tips'
// range: the entry keeps only theirs.
func logEntries(ctx context.Context, g gitRunner, pin string, tips, paths []string, inRange func(string) bool) ([]logEntry, error) {
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
	if have {
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
			if !seen[e.ID] && inRange(e.ID) {
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

func logRun(ctx context.Context, g gitRunner, stdin []byte, args []string) ([]logEntry, error) {
	var entries []logEntry
	err := g.run(ctx, stdin, func(r io.Reader) error {
		var err error
		entries, err = readLog(r)
		return err
	}, args...)
	return entries, err
}
