package obsolete

import (
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/patchkit/patchkit/internal/tree"
)

// changedFile is a file diff's significant changed lines (see LineMatch).
type changedFile struct {
	names   []string // where to read the file: its name and -p1 variant
	added   []string
	removed []removedLine
}

// removedLine is a significant removed line with the nearest non-blank
// context lines around it in its hunk, one of which the ref's file must
// still have for the line to count as gone from its place.
type removedLine struct {
	text    string
	context []string
}

// changedFiles returns patch i's significant changed lines per file diff,
// memoized.
func (c *checker) changedFiles(i int) ([]changedFile, error) {
	if cf, ok := c.changed[i]; ok {
		return cf, nil
	}
	var out []changedFile
	for _, f := range c.patches[i].Files {
		if f.IsDelete || f.IsBinary {
			continue
		}
		names := variants(f.NewName)
		if len(names) == 0 {
			continue
		}
		var pin *lines
		if !f.IsNew {
			var err error
			if pin, err = c.pinFile(f); err != nil {
				return nil, err
			}
		}
		if cf := significant(f, pin); len(cf.added)+len(cf.removed) > 0 {
			cf.names = names
			out = append(out, cf)
		}
	}
	c.changed[i] = out
	return out, nil
}

// significant picks f's significant lines against its file at the pin: added
// lines the pin's file lacks; removed lines of which the patch removes every
// copy the pin's file has, and that the patch does not add back.
func significant(f *gitdiff.File, pin *lines) changedFile {
	var cf changedFile
	addedSet, removedCount := map[string]bool{}, map[string]int{}
	// Lines the patch only realigns (removed and added again with other
	// spacing inside, as gofmt does to a block whose longest key changed)
	// are no change of its own.
	addedSquash, removedSquash := map[string]bool{}, map[string]bool{}
	for _, tf := range f.TextFragments {
		for _, g := range groupsOf(tf) {
			for _, s := range g.added {
				addedSet[s] = true
				addedSquash[squashSpace(s)] = true
			}
			for _, s := range g.removed {
				removedCount[s]++
				removedSquash[squashSpace(s)] = true
			}
		}
	}
	for _, tf := range f.TextFragments {
		for _, g := range groupsOf(tf) {
			for _, s := range g.added {
				if removedSquash[squashSpace(s)] {
					continue
				}
				if pin == nil || len(pin.at[s]) == 0 {
					cf.added = append(cf.added, s)
				}
			}
			if pin == nil {
				continue
			}
			var ctx []string
			if n := len(g.before); n > 0 {
				ctx = append(ctx, g.before[n-1])
			}
			if len(g.after) > 0 {
				ctx = append(ctx, g.after[0])
			}
			for _, s := range g.removed {
				if !addedSet[s] && !addedSquash[squashSpace(s)] && len(pin.at[s]) == removedCount[s] {
					cf.removed = append(cf.removed, removedLine{text: s, context: ctx})
				}
			}
		}
	}
	return cf
}

// lineShare counts how many of patch i's significant changed lines are
// upstream in src, the tree of commit at: added lines its file has, removed
// lines its file lacks while it keeps a context line next to them; its file
// read with the files upstream moved its lines to (linesAt).
func (c *checker) lineShare(i int, src tree.Source, at string) (LineMatch, error) {
	files, err := c.changedFiles(i)
	if err != nil {
		return LineMatch{}, err
	}
	var lm LineMatch
	for _, cf := range files {
		cur, err := c.linesAt(src, cf.names, at)
		if err != nil {
			return LineMatch{}, err
		}
		lm.Total += len(cf.added) + len(cf.removed)
		lm.Removed += len(cf.removed)
		if cur == nil {
			continue
		}
		for _, l := range cf.added {
			if len(cur.at[l]) > 0 {
				lm.Present++
			}
		}
		for _, r := range cf.removed {
			if len(cur.at[r.text]) > 0 {
				continue
			}
			anchored := len(r.context) == 0
			for _, cx := range r.context {
				anchored = anchored || len(cur.at[cx]) > 0
			}
			if anchored {
				lm.Present++
				lm.Gone++
			}
		}
	}
	return lm, nil
}

// squashSpace is s with each run of spaces and tabs inside it made one
// space: a line and its realigned copy squash alike.
func squashSpace(s string) string { return strings.Join(strings.Fields(s), " ") }
