package apply

import (
	"bytes"
	"path"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/patchkit/patchkit/internal/series"
)

// parsePatchForTest builds a series.Patch from raw patch text as the series
// package does, so these tests do not depend on it: gitdiff parses the file
// diffs and HunkLine maps each text fragment to the line of its "@@" header.
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
	p := &series.Patch{
		Name:     path.Base(file),
		Path:     file,
		Raw:      raw,
		Files:    files,
		HunkLine: map[*gitdiff.TextFragment]int{},
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
