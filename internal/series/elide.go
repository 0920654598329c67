package series

import (
	"fmt"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// elideMin is the number of lines from which a hunk that only adds lines is
// elided (see elision). Tests lower it to elide every such hunk.
var elideMin = 1024

// elision lets go-gitdiff read a large patch without growing a slice line
// by line: each hunk that only adds lines (a new file's, typically) and has
// at least elideMin of them is shown to go-gitdiff as a stub, its "@@" line
// counting one added line and its last line as that line. locate then gives
// the hunk its lines back, in a slice of their exact size whose texts are
// views of the patch's bytes. go-gitdiff parses the stub as it would the
// hunk: every line of it starts with '+', so none is a file header and none
// can be a parse error. (An error elsewhere may name a stub's "@@" line,
// so parseDiff parses a refused diff again without stubs.)
type elision struct {
	hunks []elidedHunk
	at    map[int]*elidedHunk // by the index of the "@@" line in lines
}

// elidedHunk is one elided hunk: line header is its "@@" line and the n
// lines after it are its lines.
type elidedHunk struct {
	header, n int
	stub      string // the "@@" line go-gitdiff reads instead
	restored  bool
}

// planElision finds the hunks of the diff (lines from start on) to elide.
func planElision(lines *lineTable, start int) *elision {
	e := &elision{at: map[int]*elidedHunk{}}
	for i := start; i < lines.len(); i++ {
		r, ok := parseFragmentHeader(lines.at(i))
		if !ok || r.oldLines != 0 || r.newLines < int64(elideMin) || r.newLines > int64(lines.len()-1-i) {
			continue
		}
		n := int(r.newLines)
		if !allAdded(lines, i+1, i+1+n) {
			continue
		}
		e.hunks = append(e.hunks, elidedHunk{header: i, n: n, stub: formatFragmentHeader(lines.at(i), r, 0, 1)})
		i += n
	}
	for k := range e.hunks {
		e.at[e.hunks[k].header] = &e.hunks[k]
	}
	return e
}

// allAdded reports whether lines from up to end all start with '+'.
func allAdded(lines *lineTable, from, end int) bool {
	for i := from; i < end; i++ {
		if lines.at(i)[0] != '+' {
			return false
		}
	}
	return true
}

// input returns what go-gitdiff reads: lines from start on, each elided
// hunk shown as its stub.
func (e *elision) input(lines *lineTable, start int) *lineReader {
	r := &lineReader{}
	from := lines.offset(start) // the byte where the next segment starts
	for _, h := range e.hunks {
		r.segs = append(r.segs, lines.s[from:lines.offset(h.header)], h.stub, lines.at(h.header+h.n))
		from = lines.offset(h.header + h.n + 1)
	}
	r.segs = append(r.segs, lines.s[from:])
	return r
}

// parseDiff parses the diff, lines from start on, with go-gitdiff, eliding
// the hunks planElision finds. The elision it returns is for locate to
// undo. A diff go-gitdiff refuses is parsed again as it is, so that the
// error names what go-gitdiff read.
func parseDiff(lines *lineTable, start int) ([]*gitdiff.File, *elision, error) {
	el := planElision(lines, start)
	files, _, err := gitdiff.Parse(el.input(lines, start))
	if err != nil && len(el.hunks) > 0 {
		el = &elision{}
		files, _, err = gitdiff.Parse(el.input(lines, start))
	}
	return files, el, err
}

// restore gives frag, go-gitdiff's fragment for the hunk whose "@@" line is
// lines[header], its elided lines back.
func (e *elision) restore(frag *gitdiff.TextFragment, lines *lineTable, header int) error {
	h := e.at[header]
	if h == nil {
		return nil
	}
	if frag.OldLines != 0 || frag.NewLines != 1 || len(frag.Lines) != 1 || frag.Lines[0].Op != gitdiff.OpAdd || h.restored {
		return fmt.Errorf("elided hunk at line %d: go-gitdiff did not parse its stub as one added line", header+1)
	}
	out := make([]gitdiff.Line, h.n)
	for i := range h.n - 1 {
		out[i] = gitdiff.Line{Op: gitdiff.OpAdd, Line: lines.at(header + 1 + i)[1:]}
	}
	out[h.n-1] = frag.Lines[0] // go-gitdiff read it, "\ No newline" included
	frag.Lines = out
	frag.NewLines = int64(h.n)
	frag.LinesAdded = int64(h.n)
	h.restored = true
	return nil
}

// check reports an elided hunk that no fragment took back.
func (e *elision) check() error {
	for _, h := range e.hunks {
		if !h.restored {
			return fmt.Errorf("elided hunk at line %d: go-gitdiff parsed no fragment there", h.header+1)
		}
	}
	return nil
}
