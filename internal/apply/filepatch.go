package apply

import (
	"bytes"
	"fmt"
	"iter"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/patchkit/patchkit/internal/series"
)

// git file mode bits.
const (
	modeTypeMask = 0o170000
	modeSymlink  = 0o120000
	modeGitlink  = 0o160000
	modeRegular  = 0o100644
)

// filePatch is one file diff of a patch as git apply sees it (its struct
// patch): names and modes already swapped when applying in reverse, and the
// verdict once checked.
type filePatch struct {
	index            int // position in series.Patch.Files
	oldName, newName string
	isNew, isDelete  bool
	isRename, isCopy bool
	oldMode, newMode uint32
	oldOID, newOID   string
	isBinary         bool
	binary           *gitdiff.BinaryFragment // the fragment for this direction, or nil
	hasBinaryData    bool                    // the patch carried binary data at all
	frags            []*fragment
	headerLine       int // line of the file's "diff --git" header, 0 if unknown
	traditional      bool
	corrupt          string

	// Set while checking.
	crAtEOL bool   // the diff has CRLF old lines: git then allows CR at EOL
	result  []byte // the file's content after the patch
	applied bool
}

// name is the path messages use for the file diff.
func (fp *filePatch) name() string {
	if fp.newName != "" {
		return fp.newName
	}
	return fp.oldName
}

// mayBeNew reports whether git cannot tell if the file diff creates its
// file: a traditional diff, neither from /dev/null nor to it, with one hunk
// that only adds lines.
func (fp *filePatch) mayBeNew() bool {
	return fp.traditional && !fp.isNew && !fp.isDelete && !fp.isRename && !fp.isCopy &&
		len(fp.frags) == 1 && fp.frags[0].oldLines == 0
}

// fragment is one text hunk, in this direction. Its lines are those
// go-gitdiff parsed, read through all: a hunk of a large patch is not
// copied.
type fragment struct {
	oldPos, oldLines int64
	newPos, newLines int64
	src              []gitdiff.Line // the hunk's lines, in the patch's direction
	reverse          bool           // swap the ops of src
	trailing         int            // context lines after the last change
	headerLine       int            // 1-based line of the "@@" header in the patch, 0 if unknown
	header           string
}

// fragLine is one line of a hunk. op is already swapped in reverse.
type fragLine struct {
	op     gitdiff.LineOp
	origOp gitdiff.LineOp
	text   string // with its newline unless the patch marks none
	line   int    // 1-based line in the patch file, 0 if unknown
}

// all yields the lines of the hunk in order, in this direction, each with
// its line in the patch file: a "\ No newline at end of file" marker takes
// a line of its own.
func (fr *fragment) all() iter.Seq[fragLine] {
	return func(yield func(fragLine) bool) {
		markers := 0
		for k, l := range fr.src {
			fl := fragLine{op: l.Op, origOp: l.Op, text: l.Line}
			if fr.headerLine > 0 {
				fl.line = fr.headerLine + 1 + k + markers
			}
			if l.NoEOL() {
				markers++
			}
			if fr.reverse {
				switch l.Op {
				case gitdiff.OpAdd:
					fl.op = gitdiff.OpDelete
				case gitdiff.OpDelete:
					fl.op = gitdiff.OpAdd
				}
			}
			if !yield(fl) {
				return
			}
		}
	}
}

// counts returns the number of preimage (context and removed) and postimage
// (context and added) lines of the hunk.
func (fr *fragment) counts() (pre, post int) {
	for l := range fr.all() {
		switch l.op {
		case gitdiff.OpContext:
			pre++
			post++
		case gitdiff.OpDelete:
			pre++
		case gitdiff.OpAdd:
			post++
		}
	}
	return pre, post
}

// filePatches converts the file diffs of p into the order git apply checks
// them: the patch's order, reversed when applying in reverse.
func filePatches(p *series.Patch, reverse bool) []*filePatch {
	lines := &lineCursor{raw: p.Bytes()}
	// git apply strips one leading directory from the names of traditional
	// diffs (-p1), unless the first diff whose two names agree shows none.
	strip, known := 1, false
	fps := make([]*filePatch, 0, len(p.Files))
	for i, f := range p.Files {
		if f == nil {
			continue
		}
		fp := &filePatch{
			index:    i,
			oldName:  f.OldName,
			newName:  f.NewName,
			isNew:    f.IsNew,
			isDelete: f.IsDelete,
			isRename: f.IsRename,
			isCopy:   f.IsCopy,
			oldMode:  uint32(f.OldMode),
			newMode:  uint32(f.NewMode),
			oldOID:   f.OldOIDPrefix,
			newOID:   f.NewOIDPrefix,
			isBinary: f.IsBinary,
		}
		fp.headerLine = p.FileLine[f]
		fp.corrupt = headerProblem(f)
		if l, ok := lines.line(fp.headerLine); ok && !strings.HasPrefix(l, "diff --git ") {
			fp.traditional = true
		}
		if fp.traditional && !p.NamesFinal {
			// series rewrote the names for a strip level or a directory
			// when NamesFinal is set; else git's -p1, or its guess.
			if !known {
				o, n := guessStrip(f.OldName), guessStrip(f.NewName)
				if o < 0 {
					o = n
				}
				if o >= 0 && o == n {
					strip, known = o, true
				}
			}
			for _, name := range []*string{&fp.oldName, &fp.newName} {
				if *name == "" {
					continue
				}
				if stripped, ok := series.StripGit(*name, strip); ok {
					*name = stripped
				} else if fp.corrupt == "" {
					fp.corrupt = fmt.Sprintf("unable to find filename in patch: %q has no leading directory to strip", *name)
				}
			}
		}
		if fp.isNew {
			fp.oldName = ""
		}
		if fp.isDelete {
			fp.newName = ""
		}
		fp.hasBinaryData = f.BinaryFragment != nil
		fp.binary = f.BinaryFragment
		for _, tf := range f.TextFragments {
			if tf == nil {
				continue
			}
			fp.frags = append(fp.frags, newFragment(p, tf, lines, reverse))
			if fp.headerLine == 0 {
				if l := p.HunkLine[tf]; l > 0 {
					fp.headerLine = l
				}
			}
		}
		if reverse {
			fp.oldName, fp.newName = fp.newName, fp.oldName
			fp.oldMode, fp.newMode = fp.newMode, fp.oldMode
			fp.isNew, fp.isDelete = fp.isDelete, fp.isNew
			fp.oldOID, fp.newOID = fp.newOID, fp.oldOID
			fp.binary = f.ReverseBinaryFragment
		}
		fps = append(fps, fp)
	}
	if reverse {
		for i, j := 0, len(fps)-1; i < j; i, j = i+1, j-1 {
			fps[i], fps[j] = fps[j], fps[i]
		}
	}
	return fps
}

// headerProblem returns why a file diff's header is inconsistent, as git's
// parser would refuse it, or "".
func headerProblem(f *gitdiff.File) string {
	n := 0
	for _, b := range []bool{f.IsNew, f.IsDelete, f.IsRename, f.IsCopy} {
		if b {
			n++
		}
	}
	switch {
	case n > 1:
		return "inconsistent file header: more than one of new, deleted, rename and copy"
	case f.IsNew && f.NewName == "", f.IsDelete && f.OldName == "",
		!f.IsNew && f.OldName == "", !f.IsDelete && f.NewName == "":
		return "file header lacks filename information"
	case f.IsBinary && len(f.TextFragments) > 0:
		return "binary file diff has text hunks"
	}
	return ""
}

func newFragment(p *series.Patch, tf *gitdiff.TextFragment, raw *lineCursor, reverse bool) *fragment {
	fr := &fragment{
		oldPos: tf.OldPosition, oldLines: tf.OldLines,
		newPos: tf.NewPosition, newLines: tf.NewLines,
		headerLine: p.HunkLine[tf],
		src:        tf.Lines,
		reverse:    reverse,
	}
	if l, ok := raw.line(fr.headerLine); ok {
		fr.header = strings.TrimRight(l, "\r\n")
	}
	if !strings.HasPrefix(fr.header, "@@ -") {
		fr.header = tf.Header()
	}
	for i := len(fr.src) - 1; i >= 0 && fr.src[i].Op == gitdiff.OpContext; i-- {
		fr.trailing++
	}
	if fr.trailing == len(fr.src) {
		// A hunk without changes; git refuses it when parsing.
		fr.trailing = 0
	}
	if reverse {
		fr.oldPos, fr.newPos = fr.newPos, fr.oldPos
		fr.oldLines, fr.newLines = fr.newLines, fr.oldLines
	}
	return fr
}

// lineCursor reads lines of a patch by number, scanning forward from the
// line it read last: filePatches asks for header lines in increasing order,
// so reading them all costs one pass over the patch, and no copy of it.
type lineCursor struct {
	raw []byte
	n   int // the line that starts at off (1-based); 0 before the first read
	off int
}

// line returns line n (1-based) of the patch with its newline; ok is false
// when the patch has no line n.
func (c *lineCursor) line(n int) (string, bool) {
	if n < 1 {
		return "", false
	}
	if c.n == 0 || n < c.n {
		c.n, c.off = 1, 0
	}
	for c.n < n {
		j := bytes.IndexByte(c.raw[c.off:], '\n')
		if j < 0 {
			return "", false
		}
		c.off += j + 1
		c.n++
	}
	if c.off >= len(c.raw) {
		return "", false
	}
	rest := c.raw[c.off:]
	if j := bytes.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j+1]
	}
	return string(rest), true
}

// guessStrip is git's guess_p_value for one name of a traditional diff: 0
// when the name has no directory, else unknown (-1).
func guessStrip(name string) int {
	if name == "" || strings.Contains(name, "/") {
		return -1
	}
	return 0
}
