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

// HunkEnd returns the index after the last line of the hunk tf whose "@@"
// line is lines[h-1] (h is 1-based, as Patch.HunkLine gives it), counting
// its lines as go-gitdiff does (a blank or "\r" line is context) and taking
// a "\ No newline at end of file" marker after it with it.
func HunkEnd(lines []string, h int, tf *gitdiff.TextFragment) int {
	i := h
	oldN, newN := tf.OldLines, tf.NewLines
	for (oldN > 0 || newN > 0) && i < len(lines) {
		switch lines[i][0] {
		case ' ', '\n', '\r':
			oldN--
			newN--
		case '-':
			oldN--
		case '+':
			newN--
		}
		i++
	}
	if i < len(lines) && len(lines[i]) >= 12 && strings.HasPrefix(lines[i], `\ `) {
		i++
	}
	return i
}
