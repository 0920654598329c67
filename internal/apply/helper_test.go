package apply

import (
	"bytes"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/patchkit/patchkit/internal/series"
)

// parsePatchForTest builds a series.Patch from raw patch text as the series
// package does, without Parse's checks, so these tests reach apply with any
// patch: gitdiff parses the file diffs and HunkLine maps each text fragment
// to the line of its "@@" header.
func parsePatchForTest(tb testing.TB, file string, raw []byte) *series.Patch {
	tb.Helper()
	p, err := parsePatch(file, raw)
	if err != nil {
		tb.Fatalf("parsing %s: %v\n%s", file, err, raw)
	}
	return p
}

// parsePatch is parsePatchForTest without a testing.TB, for the fuzz target.
func parsePatch(file string, raw []byte) (*series.Patch, error) {
	files, _, err := gitdiff.Parse(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	p := series.Unchecked(file, raw, files)
	lines := strings.SplitAfter(string(raw), "\n")
	for k, h := range fileHeaders(lines, files) {
		if h.line > 0 {
			p.FileLine[files[k]] = h.line
		}
	}
	var frags []*gitdiff.TextFragment
	for _, f := range files {
		frags = append(frags, f.TextFragments...)
	}
	inDiff := false
	next := 0
	for i, l := range strings.SplitAfter(string(raw), "\n") {
		if strings.HasPrefix(l, "diff --git ") || strings.HasPrefix(l, "--- ") {
			inDiff = true
		}
		if inDiff && strings.HasPrefix(l, "@@ -") && next < len(frags) {
			p.HunkLine[frags[next]] = i + 1
			next++
		}
	}
	return p, nil
}

// fileHeader is where a file diff starts in the patch, and whether it is a
// git diff ("diff --git") or a traditional unified diff ("---", "+++").
type fileHeader struct {
	line int // 1-based, 0 if unknown
	git  bool
}

func isTraditionalHeader(lines []string, i int) bool {
	return i+2 < len(lines) && strings.HasPrefix(lines[i], "--- ") &&
		strings.HasPrefix(lines[i+1], "+++ ") && strings.HasPrefix(lines[i+2], "@@ -")
}

// fileHeaders finds the header of each file diff, as series.Parse does, walking the patch as
// go-gitdiff parsed it: hunks are skipped by their line counts (series.HunkEnd,
// the count Parse makes), so that a removed line "-- x" is not taken for a header.
func fileHeaders(lines []string, files []*gitdiff.File) []fileHeader {
	out := make([]fileHeader, len(files))
	pos := 0
	for k, f := range files {
		for pos < len(lines) && !strings.HasPrefix(lines[pos], "diff --git ") && !isTraditionalHeader(lines, pos) {
			pos++
		}
		if pos == len(lines) || f == nil {
			return out
		}
		out[k] = fileHeader{line: pos + 1, git: strings.HasPrefix(lines[pos], "diff --git ")}
		if out[k].git {
			pos++
		} else {
			pos += 2
		}
		for _, frag := range f.TextFragments {
			for pos < len(lines) && !strings.HasPrefix(lines[pos], "@@ -") {
				pos++
			}
			if pos == len(lines) || frag == nil {
				return out
			}
			pos = series.HunkEnd(lines, pos+1, frag)
		}
	}
	return out
}
