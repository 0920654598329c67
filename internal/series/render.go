package series

// The canonical text of a patch.
//
// patchkit rewrites a patch (refresh, upgrade) into one text that depends only
// on the file before and after it, so a series stops churning hashes and line
// numbers between contributors:
//
//   - the header, every byte of it, untouched;
//   - per file, in the patch's order: "diff --git a/X b/X", the mode lines
//     git writes ("new file mode", "deleted file mode", "old mode"/"new
//     mode"), "index <12 hex>..<12 hex>[ <mode>]" (the blob ids, abbreviated
//     to 12 hex digits whatever core.abbrev says), "--- a/X", "+++ b/X";
//   - hunks with 3 lines of context at the line numbers of the file the patch
//     applies to, changes closer than 6 lines in one hunk (git's rule), and
//     after the closing "@@" the function context git writes without a diff
//     driver (the last line above the hunk that starts with a letter, "_"
//     or "$", cut to 80 bytes), which reviewers read. A patch that differs
//     from its canonical text only there is canonical as it is (SameBut-
//     FuncContext): its own function names, from whatever diff driver, stay;
//   - no trailer (the "-- \n2.x" signature of git format-patch is dropped).
//
// A file diff the renderer cannot compute from the two files alone (binary,
// rename, copy) is kept verbatim from the original patch.

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/patchkit/patchkit/internal/tree"
)

// Context is the number of context lines of a canonical hunk.
const Context = 3

// AbbrevLen is the length of the abbreviated blob ids on a canonical index line.
const AbbrevLen = 12

// FileChange is one file of a patch for RenderDiff: the file before the patch
// (nil when the patch creates it) and after it (nil when the patch deletes
// it), or, when Verbatim is set, the file diff's text kept as it was.
type FileChange struct {
	Path     string
	Old, New *tree.File
	Verbatim []byte
}

// HeaderBytes returns the header bytes of p: the text before its first file
// diff. The slice shares the Patch's memory and has no spare capacity, so an
// append copies rather than overwriting the diff; it must not be modified.
func (p *Patch) HeaderBytes() []byte {
	n := len(p.raw) - len(p.Diff())
	return p.raw[:n:n]
}

// FileText returns the text of the file diff f of p, from its header line to
// the next file diff (or the end of the patch). Like HeaderBytes, the slice
// shares the Patch's memory, has no spare capacity and must not be modified.
func (p *Patch) FileText(f *gitdiff.File) []byte {
	start := lineOffset(p.raw, p.FileLine[f]-1)
	end := len(p.raw)
	for _, g := range p.Files {
		if l := p.FileLine[g]; l > p.FileLine[f] {
			if o := lineOffset(p.raw, l-1); o < end {
				end = o
			}
		}
	}
	return p.raw[start:end:end]
}

// NeedsVerbatim reports whether the file diff f is kept as written by the
// renderer: binary diffs, renames and copies.
func NeedsVerbatim(f *gitdiff.File) bool {
	return f.IsBinary || f.IsRename || f.IsCopy
}

// Canonical returns p's header followed by RenderDiff(files).
func Canonical(p *Patch, files []FileChange) []byte {
	head := p.HeaderBytes()
	out := make([]byte, 0, len(p.raw))
	out = append(out, head...)
	return append(out, RenderDiff(files)...)
}

// RenderDiff renders the file changes in canonical form (see the top of this
// file). A change with Old and New equal renders as nothing.
func RenderDiff(files []FileChange) []byte {
	var b bytes.Buffer
	for _, fc := range files {
		if fc.Verbatim != nil {
			b.Write(fc.Verbatim)
			continue
		}
		renderFile(&b, fc)
	}
	return b.Bytes()
}

func renderFile(b *bytes.Buffer, fc FileChange) {
	o, n := fc.Old, fc.New
	if o != nil && n != nil && isSymlink(o.Mode) != isSymlink(n.Mode) {
		// A type change is a deletion and a creation, as git shows it.
		renderFile(b, FileChange{Path: fc.Path, Old: o})
		renderFile(b, FileChange{Path: fc.Path, New: n})
		return
	}
	if o == nil && n == nil {
		return
	}
	if o != nil && n != nil && o.Mode == n.Mode && bytes.Equal(o.Data, n.Data) {
		return
	}
	a, bq := quotePath("a/"+fc.Path), quotePath("b/"+fc.Path)
	fmt.Fprintf(b, "diff --git %s %s\n", a, bq)
	var oldData, newData []byte
	switch {
	case o == nil:
		newData = n.Data
		fmt.Fprintf(b, "new file mode %s\n", n.Mode)
		fmt.Fprintf(b, "index %s..%s\n", zeroID(), abbrev(newData))
	case n == nil:
		oldData = o.Data
		fmt.Fprintf(b, "deleted file mode %s\n", o.Mode)
		fmt.Fprintf(b, "index %s..%s\n", abbrev(oldData), zeroID())
	default:
		oldData, newData = o.Data, n.Data
		same := bytes.Equal(oldData, newData)
		if o.Mode != n.Mode {
			fmt.Fprintf(b, "old mode %s\nnew mode %s\n", o.Mode, n.Mode)
			if same {
				return
			}
			fmt.Fprintf(b, "index %s..%s\n", abbrev(oldData), abbrev(newData))
		} else {
			fmt.Fprintf(b, "index %s..%s %s\n", abbrev(oldData), abbrev(newData), o.Mode)
		}
	}
	if len(oldData) == 0 && len(newData) == 0 {
		return
	}
	if isBinary(oldData) || isBinary(newData) {
		fmt.Fprintf(b, "Binary files %s and %s differ\n", orDevNull(o, a), orDevNull(n, bq))
		return
	}
	fmt.Fprintf(b, "--- %s\n+++ %s\n", orDevNull(o, a), orDevNull(n, bq))
	renderHunks(b, splitKeep(oldData), splitKeep(newData))
}

func orDevNull(f *tree.File, name string) string {
	if f == nil {
		return "/dev/null"
	}
	return name
}

func isSymlink(m tree.Mode) bool { return m == tree.Symlink }

// isBinary is git's test: a NUL byte in the first 8000 bytes.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0
}

// BlobID is git's SHA-1 object id of a blob with content data.
func BlobID(data []byte) string {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

func abbrev(data []byte) string { return BlobID(data)[:AbbrevLen] }
func zeroID() string            { return strings.Repeat("0", AbbrevLen) }

// hunk is a range of the edit script: lines a[A0:A1] against b[B0:B1].
type hunk struct{ a0, a1, b0, b1 int }

// renderHunks writes the hunks of the diff from a to b.
func renderHunks(b *bytes.Buffer, a, bl []string) {
	edits := DiffLines(a, bl)
	for _, h := range groupHunks(edits, len(a), len(bl)) {
		fmt.Fprintf(b, "@@ -%s +%s @@%s\n", hunkRange(h.a0, h.a1-h.a0), hunkRange(h.b0, h.b1-h.b0), funcContext(a, h.a0))
		for _, e := range edits {
			switch e.Op {
			case OpEqual:
				lo, hi := max(e.A, h.a0), min(e.A+e.N, h.a1)
				for i := lo; i < hi; i++ {
					writeLine(b, ' ', a[i])
				}
			case OpDelete:
				if e.A >= h.a0 && e.A < h.a1 {
					for i := e.A; i < e.A+e.N; i++ {
						writeLine(b, '-', a[i])
					}
				}
			case OpInsert:
				if e.B >= h.b0 && e.B < h.b1 {
					for j := e.B; j < e.B+e.N; j++ {
						writeLine(b, '+', bl[j])
					}
				}
			}
		}
	}
}

// funcNameMax is the length git cuts a hunk's function context to.
const funcNameMax = 80

// funcContext is the function context git writes after a hunk's "@@" when
// no diff driver is set (xdiff's def_ff): the nearest line of a above
// line start that begins with a letter, "_" or "$", cut to 80 bytes and
// stripped of trailing white space, after a space; "" when there is none.
func funcContext(a []string, start int) string {
	for i := start - 1; i >= 0; i-- {
		l := a[i]
		if l == "" {
			continue
		}
		c := l[0]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$') {
			continue
		}
		if len(l) > funcNameMax {
			l = l[:funcNameMax]
		}
		l = strings.TrimRight(l, " \t\n\v\f\r")
		if l == "" {
			return ""
		}
		return " " + l
	}
	return ""
}

// SameButFuncContext reports whether patch texts a and b are equal but for
// the text after the closing "@@" of their hunk headers (the function
// context, which depends on the diff driver that wrote it).
func SameButFuncContext(a, b []byte) bool {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	if len(la) != len(lb) {
		return false
	}
	for i := range la {
		x, y := la[i], lb[i]
		if bytes.Equal(x, y) {
			continue
		}
		hx, okx := hunkHead(x)
		hy, oky := hunkHead(y)
		if !okx || !oky || !bytes.Equal(hx, hy) {
			return false
		}
	}
	return true
}

// hunkHead is a hunk header line up to its closing "@@".
func hunkHead(l []byte) ([]byte, bool) {
	if !bytes.HasPrefix(l, []byte("@@ -")) {
		return nil, false
	}
	i := bytes.Index(l[4:], []byte(" @@"))
	if i < 0 {
		return nil, false
	}
	return l[:4+i+3], true
}

// groupHunks groups the changes of edits into hunks with Context lines
// around them; two changes at most 2*Context equal lines apart share a hunk.
func groupHunks(edits []Edit, na, nb int) []hunk {
	var out []hunk
	lastEnd := 0 // where the last change ends in a
	for k, e := range edits {
		if e.Op == OpEqual {
			continue
		}
		if k+1 < len(edits) && e.Op == OpDelete && edits[k+1].Op == OpInsert {
			continue // the insertion that follows completes the change
		}
		// the change's extent in a and b
		a0, a1, b0, b1 := e.A, e.A, e.B, e.B
		if e.Op == OpDelete {
			a1 = e.A + e.N
		} else {
			b1 = e.B + e.N
			if k > 0 && edits[k-1].Op == OpDelete {
				a0, b0 = edits[k-1].A, edits[k-1].B
				a1 = a0 + edits[k-1].N
			}
		}
		if n := len(out); n > 0 && a0-lastEnd <= 2*Context {
			out[n-1].a1 = min(a1+Context, na)
			out[n-1].b1 = min(b1+Context, nb)
		} else {
			lead := min(Context, a0)
			out = append(out, hunk{a0 - lead, min(a1+Context, na), b0 - lead, min(b1+Context, nb)})
		}
		lastEnd = a1
	}
	return out
}

// hunkRange is git's "start,count": count 1 is left out, and an empty range
// starts at the line before it.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return strconv.Itoa(start) + ",0"
	case 1:
		return strconv.Itoa(start + 1)
	}
	return strconv.Itoa(start+1) + "," + strconv.Itoa(count)
}

func writeLine(b *bytes.Buffer, prefix byte, line string) {
	b.WriteByte(prefix)
	b.WriteString(line)
	if !strings.HasSuffix(line, "\n") {
		b.WriteString("\n\\ No newline at end of file\n")
	}
}

// quotePath quotes a path as git does (core.quotePath): in double quotes,
// with C escapes, when it holds a control character, a double quote, a
// backslash or a byte of 0x80 and above.
func quotePath(p string) string {
	need := false
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			need = true
			break
		}
	}
	if !need {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if c < 0x20 || c >= 0x7f {
				fmt.Fprintf(&b, `\%03o`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
