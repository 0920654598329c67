package apply

import (
	"fmt"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// nearMatch finds where the tree's lines look most like a hunk's preimage:
// the window of len(pre) lines with the most lines equal to the preimage line
// at the same place, nearest to expect (0-based) among equals. It runs in time
// linear in the file plus the number of equal line pairs.
func nearMatch(lines []imgLine, pre []string, expect int) (start, equal int) {
	n, m := len(lines), len(pre)
	if m == 0 || n == 0 {
		return clamp(expect, 0, max(n-m, 0)), 0
	}
	at := map[string][]int{}
	for i, s := range pre {
		at[s] = append(at[s], i)
	}
	// A window start w ranges over [-(m-1), n-1]; score[w+m-1] counts its
	// equal lines.
	score := make([]int, n+m)
	for j := range lines {
		for _, i := range at[lines[j].s] {
			score[j-i+m-1]++
		}
	}
	best, bestDist := -1, 0
	for k, s := range score {
		if s == 0 {
			continue
		}
		w := k - (m - 1)
		d := w - expect
		if d < 0 {
			d = -d
		}
		if best < 0 || s > score[best] || s == score[best] && d < bestDist {
			best, bestDist = k, d
		}
	}
	if best < 0 {
		return clamp(expect, 0, max(n-m, 0)), 0
	}
	return max(best-(m-1), 0), score[best]
}

func clamp(v, lo, hi int) int {
	return max(lo, min(v, hi))
}

// displayLine renders a file or patch line for a message: without its newline.
func displayLine(s string) string {
	return strings.TrimSuffix(s, "\n")
}

// conflictProblem describes a hunk that applies nowhere in the file whose
// lines (before this file diff's hunks) are orig.
func conflictProblem(file string, fp *filePatch, nth int, fr *fragment, orig []imgLine) Problem {
	var pre []string
	var expected []string
	for l := range fr.all() {
		if l.op != gitdiff.OpAdd {
			pre = append(pre, l.text)
			expected = append(expected, displayLine(l.text))
		}
	}
	expect := 0
	if fr.oldPos > 0 && fr.oldPos-1 < int64(len(orig)) {
		expect = int(fr.oldPos - 1)
	} else if fr.oldPos > 0 {
		expect = len(orig)
	}
	start, equal := nearMatch(orig, pre, expect)
	var actual []string
	for i := start; i < len(orig) && i < start+len(pre); i++ {
		actual = append(actual, displayLine(orig[i].s))
	}
	var msg string
	switch {
	case len(orig) == 0:
		msg = fmt.Sprintf("hunk #%d does not apply: %s is empty", nth, fp.name())
	case equal == len(pre) && (fr.oldPos <= 1 || fr.trailing == 0):
		where := "start"
		if fr.oldPos > 1 {
			where = "end"
		}
		msg = fmt.Sprintf("hunk #%d does not apply: its lines are at line %d of %s, but a hunk at the %s of the file must match there",
			nth, start+1, fp.name(), where)
	case equal == len(pre):
		msg = fmt.Sprintf("hunk #%d does not apply: its lines at line %d of %s overlap an earlier hunk",
			nth, start+1, fp.name())
	case equal == 0:
		msg = fmt.Sprintf("hunk #%d does not apply: none of its %d context and removed lines is in %s",
			nth, len(pre), fp.name())
	default:
		msg = fmt.Sprintf("hunk #%d does not apply: its context and removed lines are not in %s; best match at line %d (%d of %d lines equal)",
			nth, fp.name(), start+1, equal, len(pre))
	}
	nearLine := 0
	if len(orig) > 0 {
		nearLine = start + 1
	}
	kind := KindConflict
	if f, at := fuzzMatch(orig, fr, expect); f > 0 {
		kind = KindFuzz
		msg = fmt.Sprintf("hunk #%d of %s applies only with fuzz %d (GNU patch, at line %d); git apply rejects it: refresh the patch",
			nth, fp.name(), f, at+1)
		// Show the place GNU patch applies it at.
		nearLine, actual = at+1, nil
		for i := at; i < len(orig) && i < at+len(pre); i++ {
			actual = append(actual, displayLine(orig[i].s))
		}
	}
	return Problem{
		Kind:     kind,
		File:     file,
		Line:     fr.headerLine,
		Path:     fp.name(),
		Message:  msg,
		Hunk:     fr.header,
		Expected: expected,
		Actual:   actual,
		NearLine: nearLine,
	}
}

// MaxFuzz is the largest fuzz factor fuzzMatch tries: GNU patch's default.
const MaxFuzz = 2

// fuzzMatch tells whether a hunk that does not apply would apply with GNU
// patch's fuzz: ignoring up to f (1..MaxFuzz) of its leading and of its
// trailing context lines, its remaining context and removed lines match the
// file somewhere. It returns the smallest such f and the 0-based line where
// GNU patch applies the hunk (the start of its preimage, ignored lines
// included), or 0 when none does. Like GNU patch, it looks at the hunk's own
// place (expect, 0-based) first, then one line after, one before, two after,
// and so on. A hunk without context has no fuzz to give.
func fuzzMatch(orig []imgLine, fr *fragment, expect int) (fuzz, at int) {
	var pre []string
	lead, trail, seenChange := 0, 0, false
	for l := range fr.all() {
		switch {
		case l.op == gitdiff.OpContext:
			pre = append(pre, l.text)
			if seenChange {
				trail++
			} else {
				lead++
			}
		case l.op == gitdiff.OpDelete:
			pre = append(pre, l.text)
			seenChange, trail = true, 0
		default:
			seenChange, trail = true, 0
		}
	}
	for f := 1; f <= MaxFuzz; f++ {
		dl, dt := min(f, lead), min(f, trail)
		if dl == 0 && dt == 0 {
			continue
		}
		kept := pre[dl : len(pre)-dt]
		if len(kept) == 0 {
			continue
		}
		matches := func(start int) bool {
			i := start + dl
			if i < 0 || i+len(kept) > len(orig) {
				return false
			}
			for k, s := range kept {
				if orig[i+k].s != s {
					return false
				}
			}
			return true
		}
		for off := 0; off <= len(orig)+len(pre); off++ {
			if matches(expect + off) {
				return f, max(expect+off, 0)
			}
			if off > 0 && matches(expect-off) {
				return f, max(expect-off, 0)
			}
		}
	}
	return 0, 0
}
