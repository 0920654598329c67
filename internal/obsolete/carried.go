package obsolete

import (
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/patchkit/patchkit/internal/tree"
)

// Line evidence: whether a hunk's change is in a file even though the hunk
// no longer reverse-applies (upstream edited lines near it). Lines are
// compared with surrounding whitespace trimmed, blank lines left out.
//
// A hunk is cut into change groups (a run of removed and added lines between
// context lines). A group is carried by a file when, for some amount of the
// group's own context (0 to 3 lines on each side, nearest first), the
// group's post-image (that context, then its added lines) is in the file as
// consecutive lines, was not in the file at the pin (so a `}` or `return err`
// cannot match by chance), and its removed lines are not next to it. A group
// that only removes lines is carried when the context on every side the hunk
// has some closes up over the gap the same way, or when its significant
// removed lines (those the patch removes every copy of) are gone from the
// whole file, none of them edited into a new line (editOf), while the
// nearest context on one side (up to 3 lines) is still there: upstream
// edited the other side. A hunk is carried when every group is.

// maxContext is the most context lines a group's post-image is given per side.
const maxContext = 3

// group is one change group of a hunk, its lines trimmed, blanks dropped.
type group struct {
	before, removed, added, after []string
}

// lineText trims a diff line for comparison.
func lineText(s string) string { return strings.TrimSpace(s) }

// groupsOf cuts a text fragment into change groups: runs of context lines
// and runs of changed lines alternate, and each changed run takes the
// context runs on either side.
func groupsOf(tf *gitdiff.TextFragment) []group {
	type run struct {
		context        bool
		text, add, del []string
	}
	var runs []run
	for _, l := range tf.Lines {
		isCtx := l.Op == gitdiff.OpContext
		if len(runs) == 0 || runs[len(runs)-1].context != isCtx {
			runs = append(runs, run{context: isCtx})
		}
		r := &runs[len(runs)-1]
		s := lineText(l.Line)
		switch {
		case s == "":
		case isCtx:
			r.text = append(r.text, s)
		case l.Op == gitdiff.OpAdd:
			r.add = append(r.add, s)
		default:
			r.del = append(r.del, s)
		}
	}
	var out []group
	for k, r := range runs {
		if r.context {
			continue
		}
		g := group{removed: r.del, added: r.add}
		if k > 0 {
			g.before = runs[k-1].text
		}
		if k+1 < len(runs) {
			g.after = runs[k+1].text
		}
		out = append(out, g)
	}
	return out
}

// lines is a file's trimmed non-blank lines, indexed by text.
type lines struct {
	text []string
	at   map[string][]int
}

func newLines(data []byte) *lines {
	l := &lines{at: map[string][]int{}}
	for _, s := range strings.Split(string(data), "\n") {
		if s = lineText(s); s != "" {
			l.at[s] = append(l.at[s], len(l.text))
			l.text = append(l.text, s)
		}
	}
	return l
}

// find returns the positions where seq starts in l.
func (l *lines) find(seq []string) []int {
	if l == nil || len(seq) == 0 {
		return nil
	}
	var out []int
	for _, k := range l.at[seq[0]] {
		if k+len(seq) > len(l.text) {
			break
		}
		ok := true
		for j := 1; j < len(seq); j++ {
			if l.text[k+j] != seq[j] {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, k)
		}
	}
	return out
}

// has reports whether seq is in l as consecutive lines.
func (l *lines) has(seq []string) bool { return len(l.find(seq)) > 0 }

// near reports whether seq is in l within dist lines of [from, to).
func (l *lines) near(seq []string, from, to, dist int) bool {
	for _, k := range l.find(seq) {
		if k+len(seq) > from-dist && k < to+dist {
			return true
		}
	}
	return false
}

// carried reports whether g's change is in cur, the file as the ref has it;
// pin is the file at the pin (nil when it did not exist).
func (g group) carried(cur, pin *lines) bool {
	if cur == nil || len(g.added) == 0 && len(g.removed) == 0 {
		return false
	}
	return g.postImageIn(cur, pin) || len(g.added) == 0 && g.goneFromPlace(cur, pin)
}

// postImageIn reports whether g's post-image, with some of its context, is
// in cur and was not in pin, its removed lines not next to it.
func (g group) postImageIn(cur, pin *lines) bool {
	for nb := 0; nb <= min(maxContext, len(g.before)); nb++ {
		for na := 0; na <= min(maxContext, len(g.after)); na++ {
			if len(g.added) == 0 && (nb == 0 && len(g.before) > 0 || na == 0 && len(g.after) > 0 || nb+na == 0) {
				continue
			}
			post := append(append(append([]string(nil), g.before[len(g.before)-nb:]...), g.added...), g.after[:na]...)
			if pin.has(post) {
				continue
			}
			for _, k := range cur.find(post) {
				if len(g.removed) > 0 && cur.near(g.removed, k, k+len(post), len(g.removed)+maxContext) {
					continue
				}
				return true
			}
		}
	}
	return false
}

// goneFromPlace reports whether a group that only removes lines is gone from
// cur: its significant removed lines are nowhere in cur, and the context on
// one side of it is.
func (g group) goneFromPlace(cur, pin *lines) bool {
	if pin == nil {
		return false
	}
	count := map[string]int{}
	for _, s := range g.removed {
		count[s]++
	}
	sig := 0
	for s, n := range count {
		if k := len(pin.at[s]); k == 0 || k > n {
			continue
		}
		if len(cur.at[s]) > 0 || cur.editOf(s, pin) {
			return false
		}
		sig++
	}
	if sig == 0 {
		return false
	}
	before := g.before[max(0, len(g.before)-maxContext):]
	after := g.after[:min(maxContext, len(g.after))]
	return len(before) > 0 && cur.has(before) || len(after) > 0 && cur.has(after)
}

// editOf reports whether l has a line that pin lacks and that is an edit of
// s: a long line whose start and end it keeps, with at least 3/4 of s in
// them (a call given another argument). Such a removed line was edited
// upstream, not removed.
func (l *lines) editOf(s string, pin *lines) bool {
	if len(s) < 24 {
		return false
	}
	for _, t := range l.text {
		if pin != nil && len(pin.at[t]) > 0 {
			continue
		}
		p := 0
		for p < len(s) && p < len(t) && s[p] == t[p] {
			p++
		}
		q := 0
		for q < len(s)-p && q < len(t)-p && s[len(s)-1-q] == t[len(t)-1-q] {
			q++
		}
		if 4*(p+q) >= 3*len(s) {
			return true
		}
	}
	return false
}

// hunkCarried reports whether every change group of tf is carried by cur.
func hunkCarried(tf *gitdiff.TextFragment, cur, pin *lines) bool {
	gs := groupsOf(tf)
	if len(gs) == 0 {
		return false
	}
	for _, g := range gs {
		if !g.carried(cur, pin) {
			return false
		}
	}
	return true
}

// readLines reads the first of names that src has as a regular file.
func readLines(src tree.Source, names []string) (*lines, error) {
	for _, n := range names {
		f, ok, err := src.Read(n)
		if err != nil {
			return nil, err
		}
		if !ok || f.Mode == tree.Symlink || f.Mode == tree.Gitlink {
			continue
		}
		return newLines(f.Data), nil
	}
	return nil, nil
}
