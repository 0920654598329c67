package obsolete

import (
	"strings"

	"github.com/patchkit/patchkit/internal/series"
)

// unit is the smallest part of a patch that is tested on its own: one hunk of
// a plain text modification, or a whole file diff (a created, deleted,
// renamed, copied or binary file, or a mode change).
type unit struct {
	patch *series.Patch // a patch of this unit alone
	path  string
	hunk  string // the "@@ ... @@" line, "" for a whole file diff
	line  int    // the line of the hunk (or of the file diff) in the patch file
}

// splitUnits cuts p into units, each a patch of its own built from p's lines:
// the file diff's header lines, then the hunk's lines. It returns nil when p
// has no unit, or when a unit does not parse (then p is only tested whole).
// A patch of one unit gives that unit, so that its one hunk is judged by its
// lines too.
func splitUnits(p *series.Patch) []unit {
	lines := series.SplitKeep(string(p.Bytes()))
	type span struct{ from, to int } // 0-based, to exclusive
	var units []unit
	pos := p.Header.Lines
	for k, f := range p.Files {
		for pos < len(lines) && !isFileStart(lines, pos) {
			pos++
		}
		if pos == len(lines) {
			return nil
		}
		start := pos
		pos++
		var frags []span
		for _, tf := range f.TextFragments {
			h := p.HunkLine[tf]
			if h <= pos-1 || h > len(lines) {
				return nil
			}
			fr := span{h - 1, series.HunkEnd(lines, h, tf)}
			frags = append(frags, fr)
			pos = fr.to
		}
		end := pos
		if len(frags) == 0 {
			// A file diff without hunks ends where the next one starts.
			for end < len(lines) && !isFileStart(lines, end) {
				end++
			}
			if k+1 == len(p.Files) {
				end = len(lines)
			}
		}
		name := f.NewName
		if name == "" {
			name = f.OldName
		}
		whole := f.IsNew || f.IsDelete || f.IsRename || f.IsCopy || f.IsBinary ||
			len(frags) == 0 || (f.OldMode != 0 && f.NewMode != 0 && f.OldMode != f.NewMode)
		if whole {
			units = append(units, unit{path: name, line: start + 1, patch: subPatch(p, lines[start:end])})
			continue
		}
		head := lines[start:frags[0].from]
		for _, fr := range frags {
			text := append(append([]string(nil), head...), lines[fr.from:fr.to]...)
			units = append(units, unit{
				path:  name,
				hunk:  strings.TrimRight(lines[fr.from], "\r\n"),
				line:  fr.from + 1,
				patch: subPatch(p, text),
			})
		}
	}
	if len(units) == 0 {
		return nil
	}
	for _, u := range units {
		if u.patch == nil {
			return nil
		}
	}
	return units
}

// subPatch parses lines as a patch of p's file; nil if it does not parse.
func subPatch(p *series.Patch, lines []string) *series.Patch {
	sp, err := series.Parse(p.Path, []byte(strings.Join(lines, "")))
	if err != nil {
		return nil
	}
	return sp
}

// isFileStart reports whether line i starts a file diff, as git apply finds
// one: "diff --git ", or "--- ", "+++ ", "@@ -".
func isFileStart(lines []string, i int) bool {
	if strings.HasPrefix(lines[i], "diff --git ") {
		return true
	}
	return i+2 < len(lines) && strings.HasPrefix(lines[i], "--- ") &&
		strings.HasPrefix(lines[i+1], "+++ ") && strings.HasPrefix(lines[i+2], "@@ -")
}
