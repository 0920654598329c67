package series

import (
	"io"
	"strings"
	"unsafe"
)

// view returns the bytes of b as a string, without copying them. b must not
// change while the string is in use: Parse views a patch's bytes, which a
// Patch never changes (see Patch.Bytes), so the lines of its Files share the
// memory of its bytes instead of holding a second copy of a large patch.
func view(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// lineReader hands go-gitdiff the lines of its segments, in order, as
// substrings of them. go-gitdiff reads through ReadString when its reader
// has one; a bufio.Reader would allocate every line anew. Each segment but
// the last ends with a newline.
type lineReader struct{ segs []string }

// ReadString returns the next line with its newline; io.EOF with the last
// line when it lacks one, or with "" at the end.
func (r *lineReader) ReadString(delim byte) (string, error) {
	for len(r.segs) > 0 && r.segs[0] == "" {
		r.segs = r.segs[1:]
	}
	if len(r.segs) == 0 {
		return "", io.EOF
	}
	s := r.segs[0]
	i := strings.IndexByte(s, delim)
	if i < 0 {
		r.segs = r.segs[1:]
		return s, io.EOF
	}
	r.segs[0] = s[i+1:]
	return s[:i+1], nil
}

// Read lets a lineReader pass as an io.Reader; go-gitdiff reads only
// through ReadString.
func (r *lineReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && len(r.segs) > 0 {
		k := copy(p[n:], r.segs[0])
		r.segs[0] = r.segs[0][k:]
		if r.segs[0] == "" {
			r.segs = r.segs[1:]
		}
		n += k
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// lineTable holds the lines of a text as offsets into it: 4 bytes a line,
// where a []string of them would take 16.
type lineTable struct {
	s     string
	start []int32 // start[i] is the offset of line i; a last entry holds len(s)
}

// newLineTable splits s into lines that keep their "\n"; the last line may
// lack it. s is shorter than 2 GiB (Parse refuses larger patches).
func newLineTable(s string) *lineTable {
	t := &lineTable{s: s, start: make([]int32, 0, strings.Count(s, "\n")+2)}
	for off := 0; off < len(s); {
		t.start = append(t.start, int32(off))
		i := strings.IndexByte(s[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
	}
	t.start = append(t.start, int32(len(s)))
	return t
}

// len is the number of lines.
func (t *lineTable) len() int { return len(t.start) - 1 }

// at returns line i (0-based) with its newline.
func (t *lineTable) at(i int) string { return t.s[t.start[i]:t.start[i+1]] }

// offset returns where line i starts in the text; offset(len()) is its length.
func (t *lineTable) offset(i int) int { return int(t.start[i]) }
