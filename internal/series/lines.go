package series

import (
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// SplitKeep splits s into lines that keep their "\n"; the last may lack it.
// Stages that cut a patch's text into pieces (a hunk, a file diff) use it
// with HunkEnd, so that every piece is counted the same way.
func SplitKeep(s string) []string {
	if s == "" {
		return nil
	}
	out := strings.SplitAfter(s, "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// CountHunkLine counts one line of a hunk against its "@@" line's lengths,
// by the line's first byte, as git and go-gitdiff read it: a context line
// (' ', or a blank line, whose space an editor ate) adds one to both old
// and new, a removed line ('-') to old, an added one ('+') to new. Any
// other byte (a "\ No newline at end of file" marker, a line that is no
// hunk's) counts nothing and reports false. It is the one hunk counter:
// Parse, recount, HunkEnd and chart's GNU patch reading (which first turns
// the lines GNU patch takes for context into ' ') count with it.
func CountHunkLine[N int | int64](op byte, old, new *N) bool {
	switch op {
	case ' ', '\n':
		*old++
		*new++
	case '-':
		*old++
	case '+':
		*new++
	default:
		return false
	}
	return true
}

// HunkEnd returns the index after the last line of the hunk tf whose "@@"
// line is lines[h-1] (h is 1-based, as Patch.HunkLine gives it), counting
// its lines as Parse does (CountHunkLine) and taking a "\ No newline at end
// of file" marker after it with it.
func HunkEnd(lines []string, h int, tf *gitdiff.TextFragment) int {
	i := h
	var oldN, newN int64
	for (oldN < tf.OldLines || newN < tf.NewLines) && i < len(lines) {
		CountHunkLine(lines[i][0], &oldN, &newN)
		i++
	}
	if i < len(lines) && len(lines[i]) >= 12 && strings.HasPrefix(lines[i], `\ `) {
		i++
	}
	return i
}
