package apply

import (
	"bytes"
	"fmt"
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

// fragment is one text hunk, with its lines in this direction.
type fragment struct {
	oldPos, oldLines int64
	newPos, newLines int64
	lines            []fragLine
	trailing         int // context lines after the last change
	headerLine       int // 1-based line of the "@@" header in the patch, 0 if unknown
	header           string
}

// fragLine is one line of a hunk. op is already swapped in reverse.
type fragLine struct {
	op     gitdiff.LineOp
	origOp gitdiff.LineOp
	text   string // with its newline unless the patch marks none
	line   int    // 1-based line in the patch file, 0 if unknown
}

// filePatches converts the file diffs of p into the order git apply checks
// them: the patch's order, reversed when applying in reverse.
func filePatches(p *series.Patch, reverse bool) []*filePatch {
	lines := splitRawLines(p.Raw)
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
		if fp.headerLine > 0 && fp.headerLine <= len(lines) && !strings.HasPrefix(lines[fp.headerLine-1], "diff --git ") {
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
				if stripped, ok := stripComponents(*name, strip); ok {
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

func newFragment(p *series.Patch, tf *gitdiff.TextFragment, raw []string, reverse bool) *fragment {
	fr := &fragment{
		oldPos: tf.OldPosition, oldLines: tf.OldLines,
		newPos: tf.NewPosition, newLines: tf.NewLines,
		headerLine: p.HunkLine[tf],
	}
	if fr.headerLine > 0 && fr.headerLine <= len(raw) {
		fr.header = strings.TrimRight(raw[fr.headerLine-1], "\r\n")
	}
	if !strings.HasPrefix(fr.header, "@@ -") {
		fr.header = tf.Header()
	}
	fr.lines = make([]fragLine, len(tf.Lines))
	line, markers := 0, 0
	if fr.headerLine > 0 {
		line = fr.headerLine + 1
	}
	for k, l := range tf.Lines {
		fl := fragLine{op: l.Op, origOp: l.Op, text: l.Line}
		if line > 0 {
			fl.line = line + k + markers
		}
		if l.NoEOL() {
			markers++
		}
		if reverse {
			switch l.Op {
			case gitdiff.OpAdd:
				fl.op = gitdiff.OpDelete
			case gitdiff.OpDelete:
				fl.op = gitdiff.OpAdd
			}
		}
		fr.lines[k] = fl
	}
	for i := len(fr.lines) - 1; i >= 0 && fr.lines[i].op == gitdiff.OpContext; i-- {
		fr.trailing++
	}
	if fr.trailing == len(fr.lines) {
		// A hunk without changes; git refuses it when parsing.
		fr.trailing = 0
	}
	if reverse {
		fr.oldPos, fr.newPos = fr.newPos, fr.oldPos
		fr.oldLines, fr.newLines = fr.newLines, fr.oldLines
	}
	return fr
}

// splitRawLines splits a patch into its lines, each with its newline.
func splitRawLines(raw []byte) []string {
	if len(raw) == 0 {
		return nil
	}
	s := string(raw)
	out := make([]string, 0, bytes.Count(raw, []byte{'\n'})+1)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// guessStrip is git's guess_p_value for one name of a traditional diff: 0
// when the name has no directory, else unknown (-1).
func guessStrip(name string) int {
	if name == "" || strings.Contains(name, "/") {
		return -1
	}
	return 0
}

// stripComponents removes n leading directories from name, as git's -p does;
// ok is false when name has fewer.
func stripComponents(name string, n int) (string, bool) {
	for ; n > 0; n-- {
		i := strings.IndexByte(name, '/')
		if i < 0 {
			return "", false
		}
		name = name[i+1:]
	}
	return name, name != ""
}
