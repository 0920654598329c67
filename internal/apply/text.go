package apply

import (
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// imgLine is one line of a file being patched (git's struct line): its bytes
// with the newline, unless it is an incomplete last line.
type imgLine struct {
	s       string
	hash    uint32
	patched bool // written by an earlier hunk; later hunks may not match it
}

// hashLine is git's hash_line: a hash of the line's non-whitespace bytes,
// kept to 24 bits as git keeps it.
func hashLine(s string) uint32 {
	var h uint32
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isSpace(c) {
			h = h*3 + uint32(c)
		}
	}
	return h & 0xffffff
}

// splitLines splits content into lines, each with its newline, the last one
// possibly without.
func splitLines(data string) []imgLine {
	if data == "" {
		return nil
	}
	out := make([]imgLine, 0, strings.Count(data, "\n")+1)
	for len(data) > 0 {
		i := strings.IndexByte(data, '\n')
		var s string
		if i < 0 {
			s, data = data, ""
		} else {
			s, data = data[:i+1], data[i+1:]
		}
		out = append(out, imgLine{s: s, hash: hashLine(s)})
	}
	return out
}

// image is a file being patched: its lines in a gap buffer, so that hunks
// applied from top to bottom cost time linear in the file, not quadratic.
type image struct {
	buf    []imgLine
	gs, ge int // the gap is buf[gs:ge]
}

func newImage(lines []imgLine) *image {
	return &image{buf: lines, gs: len(lines), ge: len(lines)}
}

// n is the number of lines.
func (im *image) n() int { return len(im.buf) - (im.ge - im.gs) }

// at returns line i (0-based).
func (im *image) at(i int) *imgLine {
	if i >= im.gs {
		i += im.ge - im.gs
	}
	return &im.buf[i]
}

// moveGap puts the gap just before line pos.
func (im *image) moveGap(pos int) {
	switch {
	case pos < im.gs:
		k := im.gs - pos
		copy(im.buf[im.ge-k:im.ge], im.buf[pos:im.gs])
		im.gs, im.ge = pos, im.ge-k
	case pos > im.gs:
		k := pos - im.gs
		copy(im.buf[im.gs:im.gs+k], im.buf[im.ge:im.ge+k])
		im.gs, im.ge = pos, im.ge+k
	}
}

// replace replaces the del lines from pos with ins.
func (im *image) replace(pos, del int, ins []imgLine) {
	im.moveGap(pos)
	im.ge += del
	if gap := im.ge - im.gs; gap < len(ins) {
		tail := len(im.buf) - im.ge
		size := 2*len(im.buf) + len(ins)
		nb := make([]imgLine, size)
		copy(nb, im.buf[:im.gs])
		copy(nb[size-tail:], im.buf[im.ge:])
		im.buf, im.ge = nb, size-tail
	}
	copy(im.buf[im.gs:], ins)
	im.gs += len(ins)
}

// bytes returns the file's content.
func (im *image) bytes() []byte {
	size := 0
	for i := range im.buf[:im.gs] {
		size += len(im.buf[i].s)
	}
	for i := range im.buf[im.ge:] {
		size += len(im.buf[im.ge+i].s)
	}
	out := make([]byte, 0, size)
	for _, l := range im.buf[:im.gs] {
		out = append(out, l.s...)
	}
	for _, l := range im.buf[im.ge:] {
		out = append(out, l.s...)
	}
	return out
}

// hunk is a fragment prepared for matching: its preimage (context and
// removed lines) and postimage (context and added lines).
type hunk struct {
	pre, post []imgLine
	// blankAtEOF counts the added blank lines at the end of the hunk, and
	// blankLine is the patch line of the first of them.
	blankAtEOF, blankLine int
}

func prepareHunk(fr *fragment) hunk {
	var h hunk
	nPre, nPost := fr.counts()
	h.pre = make([]imgLine, 0, nPre)
	h.post = make([]imgLine, 0, nPost)
	for l := range fr.all() {
		il := imgLine{s: l.text, hash: hashLine(l.text)}
		switch l.op {
		case gitdiff.OpContext:
			h.pre = append(h.pre, il)
			h.post = append(h.post, il)
		case gitdiff.OpDelete:
			h.pre = append(h.pre, il)
		case gitdiff.OpAdd:
			h.post = append(h.post, il)
		}
	}
	h.blankAtEOF, h.blankLine = blankTail(fr)
	return h
}

// blankTail counts the blank lines the hunk adds at its end (blank context
// lines between them do not stop the count) and returns the patch line of
// the first of them.
func blankTail(fr *fragment) (n, line int) {
	for l := range fr.all() {
		switch {
		case l.op == gitdiff.OpAdd && isBlank(l.text):
			if n == 0 {
				line = l.line
			}
			n++
		case l.op == gitdiff.OpContext && l.text != "" && isBlank(l.text):
		default:
			n = 0
		}
	}
	return n, line
}

// findPos is git's find_pos: the line where pre matches, looking first at
// line, then alternately one line further and one line back, or -1.
func findPos(im *image, pre []imgLine, line int, matchBeginning, matchEnd bool) int {
	return findPosWith(im, len(pre), line, matchBeginning, matchEnd, func(cur int) bool {
		return matchAt(im, pre, cur, matchBeginning, matchEnd)
	})
}

// matchAt is git's match_fragment without whitespace fuzz: pre matches the
// lines from cur byte for byte, none of them written by an earlier hunk.
func matchAt(im *image, pre []imgLine, cur int, matchBeginning, matchEnd bool) bool {
	nr := im.n()
	if len(pre)+cur > nr {
		return false
	}
	if matchEnd && len(pre)+cur != nr {
		return false
	}
	if matchBeginning && cur != 0 {
		return false
	}
	for i := range pre {
		l := im.at(cur + i)
		if l.patched || l.hash != pre[i].hash {
			return false
		}
	}
	// Compare the preimage's bytes with the file's from cur on, as git's
	// memcmp does: a last preimage line without newline matches the start
	// of a line that has one.
	j, off := cur, 0
	for _, p := range pre {
		s := p.s
		for len(s) > 0 {
			if j >= nr {
				return false
			}
			t := im.at(j).s[off:]
			k := min(len(s), len(t))
			if s[:k] != t[:k] {
				return false
			}
			s = s[k:]
			off += k
			if off == len(im.at(j).s) {
				j, off = j+1, 0
			}
		}
	}
	if matchEnd {
		for off == 0 && j < nr && im.at(j).s == "" {
			j++
		}
		return off == 0 && j == nr
	}
	return true
}

// applyHunk applies one fragment to im as git's apply_one_fragment does. It
// returns the line where it applied and the line it was expected at, or
// applied < 0 when the preimage is nowhere. eofLine is the patch line of a
// new blank line at the end of the file (0 if none).
func applyHunk(im *image, fr *fragment) (applied, expected, eofLine int) {
	h := prepareHunk(fr)
	matchBeginning := fr.oldPos == 0 || fr.oldPos == 1
	matchEnd := fr.trailing == 0
	pos := hunkStart(im.n(), fr)
	applied = findPos(im, h.pre, pos, matchBeginning, matchEnd)
	if applied < 0 {
		return -1, pos, 0
	}
	if h.blankAtEOF > 0 && len(h.pre)+applied >= im.n() {
		eofLine = blankEOFLine(h.blankLine)
	}
	for i := range h.post {
		h.post[i].patched = true
	}
	im.replace(applied, len(h.pre), h.post)
	return applied, pos, eofLine
}

// hunkStart is the line where git looks for a hunk first, in a file of n
// lines.
func hunkStart(n int, fr *fragment) int {
	switch {
	case fr.newPos == 0:
		return 0
	case fr.newPos-1 <= int64(n):
		return int(fr.newPos - 1)
	}
	return n
}

// blankEOFLine is the line a new blank line at the end of the file is
// reported on: -1 when the patch line is unknown.
func blankEOFLine(line int) int {
	if line == 0 {
		return -1
	}
	return line
}

// fillEmpty applies a hunk without preimage lines to an empty file, as
// applyHunk would, without an image: the result is the hunk's added lines,
// built in one buffer of their size. A large new file then costs its size
// once, not a line table and copies besides.
func fillEmpty(fr *fragment) (out []byte, expected, eofLine int) {
	size := 0
	for l := range fr.all() {
		if l.op == gitdiff.OpAdd {
			size += len(l.text)
		}
	}
	out = make([]byte, 0, size)
	for l := range fr.all() {
		if l.op == gitdiff.OpAdd {
			out = append(out, l.text...)
		}
	}
	if n, line := blankTail(fr); n > 0 {
		eofLine = blankEOFLine(line)
	}
	return out, hunkStart(0, fr), eofLine
}

// applyHunkGNU applies a fragment that does not match exactly as GNU patch
// would: with -l (loose) its lines match the tree's with whitespace runs
// taken as equal (similar), and with fuzz (`patch -F maxFuzz`) for fuzz 1,
// 2, ... maxFuzz up to fuzz of its leading and of its trailing context lines
// are dropped from the hunk and the rest is looked for from the expected
// line outwards, without the start and end anchors. The tree keeps its own
// lines where the hunk has context, as GNU patch copies them. It returns the
// fuzz used and applyHunk's results, or applied < 0.
func applyHunkGNU(im *image, fr *fragment, maxFuzz int, loose bool) (fuzz, applied, expected, eofLine int) {
	type fl struct {
		op gitdiff.LineOp
		il imgLine
	}
	var ls []fl
	lead, trail, seenChange := 0, 0, false
	for l := range fr.all() {
		ls = append(ls, fl{l.op, imgLine{s: l.text, hash: hashLine(l.text)}})
		switch {
		case l.op == gitdiff.OpContext && seenChange:
			trail++
		case l.op == gitdiff.OpContext:
			lead++
		default:
			seenChange, trail = true, 0
		}
	}
	pos := hunkStart(im.n(), fr)
	h := prepareHunk(fr)
	for f := 0; f <= maxFuzz; f++ {
		dl, dt := min(f, lead), min(f, trail)
		if f == 0 && !loose || f > 0 && dl == 0 && dt == 0 {
			continue
		}
		kept := ls[dl : len(ls)-dt]
		var pre []imgLine
		for _, l := range kept {
			if l.op != gitdiff.OpAdd {
				pre = append(pre, l.il)
			}
		}
		if len(pre) == 0 {
			continue
		}
		matchBeginning := f == 0 && (fr.oldPos == 0 || fr.oldPos == 1)
		matchEnd := f == 0 && fr.trailing == 0
		match := func(cur int) bool {
			if loose {
				return looseAt(im, pre, cur, matchBeginning, matchEnd)
			}
			return matchAt(im, pre, cur, false, false)
		}
		at := findPosWith(im, len(pre), min(pos+dl, im.n()), matchBeginning, matchEnd, match)
		if at < 0 {
			continue
		}
		if h.blankAtEOF > 0 && len(pre)+at >= im.n() {
			eofLine = blankEOFLine(h.blankLine)
		}
		var post []imgLine
		k := at
		for _, l := range kept {
			switch l.op {
			case gitdiff.OpContext:
				post = append(post, *im.at(k))
				k++
			case gitdiff.OpDelete:
				k++
			case gitdiff.OpAdd:
				post = append(post, l.il)
			}
		}
		for i := range post {
			post[i].patched = true
		}
		im.replace(at, len(pre), post)
		return f, at - dl, pos, eofLine
	}
	return 0, -1, pos, 0
}

// findPosWith is findPos with the match at a line given by match, for a
// preimage of n lines.
func findPosWith(im *image, n, line int, matchBeginning, matchEnd bool, match func(cur int) bool) int {
	nr := im.n()
	if matchBeginning {
		line = 0
	} else if matchEnd {
		line = nr - n
	}
	if line < 0 || line > nr {
		line = nr
	}
	back, fwd, cur := line, line, line
	for i := 0; ; i++ {
		if match(cur) {
			return cur
		}
		for {
			if back == 0 && fwd == nr {
				return -1
			}
			if i&1 == 1 {
				if back == 0 {
					i++
					continue
				}
				back--
				cur = back
			} else {
				if fwd == nr {
					i++
					continue
				}
				fwd++
				cur = fwd
			}
			break
		}
	}
}

// looseAt is matchAt with GNU patch's -l: each line of pre is similar to
// the tree's.
func looseAt(im *image, pre []imgLine, cur int, matchBeginning, matchEnd bool) bool {
	nr := im.n()
	if len(pre)+cur > nr || matchEnd && len(pre)+cur != nr || matchBeginning && cur != 0 {
		return false
	}
	for i := range pre {
		l := im.at(cur + i)
		if l.patched || l.hash != pre[i].hash || !similar(pre[i].s, l.s) {
			return false
		}
	}
	return true
}

// similar is GNU patch's similar (-l, --ignore-whitespace): a and b are
// equal but for their trailing newlines and their runs of blanks (spaces
// and tabs), where a run in b must meet a run in a, and a run at the end of
// one may meet the end of the other.
func similar(a, b string) bool {
	a = strings.TrimSuffix(a, "\n")
	b = strings.TrimSuffix(b, "\n")
	blank := func(c byte) bool { return c == ' ' || c == '\t' }
	for {
		if len(b) == 0 || blank(b[0]) {
			for len(b) > 0 && blank(b[0]) {
				b = b[1:]
			}
			if len(a) > 0 {
				if !blank(a[0]) {
					return false
				}
				for len(a) > 0 && blank(a[0]) {
					a = a[1:]
				}
			}
			if len(a) == 0 || len(b) == 0 {
				return len(a) == len(b)
			}
		} else if len(a) == 0 || a[0] != b[0] {
			return false
		} else {
			a, b = a[1:], b[1:]
		}
	}
}
