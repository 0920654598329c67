package chart

import (
	"bytes"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/patchkit/patchkit/internal/lazyre"
	"github.com/patchkit/patchkit/internal/series"
)

// PatchOptions are the GNU patch options a Makefile line gives.
type PatchOptions struct {
	Strip    int    // -pN; -1 when absent (GNU patch then keeps only the base name)
	Forward  bool   // -N, --forward: a reversed or already applied patch is skipped
	Force    bool   // -f, --force: no questions, a reversed patch is applied as it is
	Fuzz     int    // -F, --fuzz (GNU's default: 2)
	NoBackup bool   // --no-backup-if-mismatch; otherwise a mismatch leaves FILE.orig
	File     string // an explicit file operand (patch FILE < p): every hunk goes there
	// GitApply reads the patch as git apply does: no fuzz, an index line is
	// no creation, no reversed-patch guess, no backups, and a patch file
	// applies whole or not at all.
	GitApply bool
	// Reverse applies the patch backwards (patch -R): whether the change is
	// already there.
	Reverse bool
}

// DefaultPatchOptions are GNU patch's defaults: no -p, fuzz 2, backups on mismatch.
func DefaultPatchOptions() PatchOptions { return PatchOptions{Strip: -1, Fuzz: 2} }

// HunkOutcome is what GNU patch says about one hunk.
type HunkOutcome struct {
	N      int  // 1-based
	Line   int  // where it applied, or where it was expected
	Fuzz   int  // fuzz it needed
	Offset int  // lines from where the patch said
	Failed bool // "Hunk #N FAILED"
}

// FileOutcome is GNU patch's result for one file section of a patch.
type FileOutcome struct {
	Path    string // the file patched, relative to patch's working directory
	Skipped string // why GNU patch skipped the whole section ("" when it did not)
	Hunks   []HunkOutcome
}

// Failed reports whether GNU patch counted this section as failed (exit 1).
func (f FileOutcome) Failed() bool {
	if f.Skipped != "" {
		return true
	}
	for _, h := range f.Hunks {
		if h.Failed {
			return true
		}
	}
	return false
}

// PatchResult is the result of one `patch` invocation.
type PatchResult struct {
	Files []FileOutcome
}

// OK reports whether GNU patch would exit 0.
func (r *PatchResult) OK() bool {
	for _, f := range r.Files {
		if f.Failed() {
			return false
		}
	}
	return true
}

// Problems describes every failure, one line each, as GNU patch words it.
func (r *PatchResult) Problems() []string {
	var out []string
	for _, f := range r.Files {
		if f.Skipped != "" {
			out = append(out, fmt.Sprintf("%s: %s", f.Path, f.Skipped))
			continue
		}
		for _, h := range f.Hunks {
			if h.Failed {
				out = append(out, fmt.Sprintf("%s: hunk #%d FAILED at %d", f.Path, h.N, h.Line))
			}
		}
	}
	return out
}

// Files is a working directory in memory: path (slash-separated, relative)
// to content. GNUPatch changes it in place, as patch changes the directory.
type Files map[string][]byte

type gnuHunk struct {
	oldStart, oldLines int
	newStart, newLines int
	lines              []hunkLine
	at                 int // line of the patch file where the hunk starts
}

type hunkLine struct {
	op   byte // ' ', '-', '+'
	text []byte
}

type gnuSection struct {
	oldName, newName   string // as written, before stripping ("/dev/null" kept)
	gitDiff            bool
	oldGone, newGone   bool // the patch says the file does not exist before / after
	gitNew, gitDeleted bool // "new file mode", "deleted file mode"
	hunks              []*gnuHunk
	line               int
}

// chopped is how many trailing context lines a patch may lack at its end
// (GNU patch: "assume blank lines got chopped").
const chopped = 3

var hunkHeader = lazyre.New(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// parseGNU splits a unified diff into file sections, reading the names,
// creation and deletion the way GNU patch does: /dev/null, git's
// "new file mode"/"deleted file mode", and (in a git diff) an all-zero
// blob id on the index line.
func parseGNU(name string, data []byte) ([]*gnuSection, error) {
	lines := splitLines(data)
	var out []*gnuSection
	var cur *gnuSection
	pendingGit := false
	var pendingOldZero, pendingNewZero, pendingNew, pendingDel bool
	i := 0
	for i < len(lines) {
		l := string(lines[i])
		switch {
		case strings.HasPrefix(l, "diff --git "):
			pendingGit = true
			pendingOldZero, pendingNewZero, pendingNew, pendingDel = false, false, false, false
			i++
			continue
		case pendingGit && strings.HasPrefix(l, "index "):
			f := strings.Fields(strings.TrimPrefix(l, "index "))
			if len(f) > 0 {
				if a, b, ok := strings.Cut(f[0], ".."); ok {
					pendingOldZero = allZero(a)
					pendingNewZero = allZero(b)
				}
			}
			i++
			continue
		case pendingGit && strings.HasPrefix(l, "new file mode"):
			pendingNew = true
			i++
			continue
		case pendingGit && strings.HasPrefix(l, "deleted file mode"):
			pendingDel = true
			i++
			continue
		case strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(string(lines[i+1]), "+++ "):
			cur = &gnuSection{
				oldName: headerName(l[4:]),
				newName: headerName(string(lines[i+1])[4:]),
				gitDiff: pendingGit,
				line:    i + 1,
			}
			cur.gitNew, cur.gitDeleted = pendingNew, pendingDel
			cur.oldGone = cur.oldName == "/dev/null" || pendingNew || (pendingGit && pendingOldZero)
			cur.newGone = cur.newName == "/dev/null" || pendingDel || (pendingGit && pendingNewZero)
			pendingGit = false
			out = append(out, cur)
			i += 2
			continue
		case strings.HasPrefix(l, "@@ "):
			if cur == nil {
				return nil, fmt.Errorf("%s:%d: hunk before any file header", name, i+1)
			}
			m := hunkHeader.FindStringSubmatch(l)
			if m == nil {
				return nil, fmt.Errorf("%s:%d: malformed hunk header", name, i+1)
			}
			h := &gnuHunk{at: i + 1}
			h.oldStart, _ = strconv.Atoi(m[1])
			h.oldLines = 1
			if m[2] != "" {
				h.oldLines, _ = strconv.Atoi(m[2])
			}
			h.newStart, _ = strconv.Atoi(m[3])
			h.newLines = 1
			if m[4] != "" {
				h.newLines, _ = strconv.Atoi(m[4])
			}
			i++
			oldN, newN := 0, 0
			for oldN < h.oldLines || newN < h.newLines {
				if i >= len(lines) {
					// The patch ends inside the hunk: GNU patch assumes
					// a few trailing blank context lines got chopped.
					if h.oldLines-oldN == h.newLines-newN && h.oldLines-oldN <= chopped {
						for oldN < h.oldLines {
							h.lines = append(h.lines, hunkLine{op: ' ', text: []byte("\n")})
							oldN++
							newN++
						}
					}
					break
				}
				t := lines[i]
				if len(t) == 0 {
					return nil, fmt.Errorf("%s:%d: truncated hunk", name, i+1)
				}
				op := t[0]
				if op == '\n' || op == '\t' || (op == '\r' && len(t) > 1 && t[1] == '\n') {
					// An empty line, or one starting with a tab, is a context
					// line whose space got eaten (GNU patch takes it so).
					op, t = ' ', append([]byte{' '}, t...)
				}
				if !series.CountHunkLine(op, &oldN, &newN) {
					if op != '\\' {
						return nil, fmt.Errorf("%s:%d: malformed hunk line", name, i+1)
					}
					trimLastNewline(h)
					i++
					continue
				}
				h.lines = append(h.lines, hunkLine{op: op, text: t[1:]})
				i++
			}
			if oldN != h.oldLines || newN != h.newLines {
				return nil, fmt.Errorf("%s:%d: truncated hunk", name, h.at)
			}
			if i < len(lines) && bytes.HasPrefix(lines[i], []byte(`\`)) {
				trimLastNewline(h)
				i++
			}
			cur.hunks = append(cur.hunks, h)
			continue
		}
		i++
	}
	return out, nil
}

// trimLastNewline applies "\ No newline at end of file" to the line before it.
func trimLastNewline(h *gnuHunk) {
	if len(h.lines) == 0 {
		return
	}
	t := h.lines[len(h.lines)-1].text
	if n := len(t); n > 0 && t[n-1] == '\n' {
		h.lines[len(h.lines)-1].text = t[:n-1]
	}
}

func allZero(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c != '0' {
			return false
		}
	}
	return true
}

// headerName is the file name of a ---/+++ line: up to a tab (a timestamp follows).
func headerName(s string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimRight(s, "\r\n")
	if strings.HasPrefix(s, `"`) {
		if u, err := strconv.Unquote(s); err == nil {
			s = u
		}
	}
	return s
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}

// pickName chooses the file a section patches, as GNU patch does outside
// POSIX mode: among the names that exist, the one with the fewest
// components, then the shortest base name, then the shortest name; when
// none exists, the same among the names the patch does not call missing.
func pickName(fs Files, sec *gnuSection, strip int) string {
	type cand struct {
		name  string
		exist bool
	}
	var cs []cand
	for i, n := range []string{sec.oldName, sec.newName} {
		if n == "/dev/null" {
			continue
		}
		s, ok := series.StripGNU(n, strip)
		if !ok {
			continue
		}
		_, exist := fs[s]
		gone := (i == 0 && sec.oldGone) || (i == 1 && sec.newGone)
		if !exist && gone && !(i == 1 && sec.oldGone) {
			continue
		}
		cs = append(cs, cand{s, exist})
	}
	best := ""
	better := func(a, b string) bool {
		ca, cb := strings.Count(a, "/"), strings.Count(b, "/")
		if ca != cb {
			return ca < cb
		}
		if la, lb := len(path.Base(a)), len(path.Base(b)); la != lb {
			return la < lb
		}
		return len(a) < len(b)
	}
	for _, wantExist := range []bool{true, false} {
		for _, c := range cs {
			if c.exist != wantExist {
				continue
			}
			if best == "" || better(c.name, best) {
				best = c.name
			}
		}
		if best != "" {
			return best
		}
	}
	return best
}

// GNUPatch applies one patch file to fs as `patch [opts] < name` run
// without a terminal (GNU patch 2.7) would: hunks are located at the line
// the patch names plus the drift of earlier hunks, then searched outwards,
// first exactly, then dropping up to Fuzz lines of context at each end; a
// hunk that cannot be placed fails while the others still apply; a section
// whose first hunk fits only reversed is skipped ("Reversed (or previously
// applied) patch detected!"), as is one that would create a file that
// exists (patch asks "Assume -R? [n]" and, with no answer, skips it).
// Without NoBackup a section that needed fuzz or an offset, or failed,
// leaves FILE.orig, as patch does.
func GNUPatch(fs Files, name string, data []byte, opt PatchOptions) (*PatchResult, error) {
	secs, err := parseGNU(name, data)
	if err != nil {
		return nil, err
	}
	res := &PatchResult{}
	var saved Files
	if opt.GitApply {
		opt.Fuzz, opt.NoBackup, opt.Forward, opt.Force = 0, true, false, true
		saved = Files{}
		for k, v := range fs {
			saved[k] = v
		}
		for _, sec := range secs {
			sec.gitDiff = false
			sec.oldGone = sec.oldName == "/dev/null" || sec.gitNew
			sec.newGone = sec.newName == "/dev/null" || sec.gitDeleted
		}
	}
	if opt.Reverse {
		for _, sec := range secs {
			sec.oldName, sec.newName = sec.newName, sec.oldName
			sec.oldGone, sec.newGone = sec.newGone, sec.oldGone
			for i, h := range sec.hunks {
				sec.hunks[i] = swapHunk(h)
			}
		}
	}
	for _, sec := range secs {
		res.Files = append(res.Files, applySection(fs, sec, opt))
	}
	if opt.GitApply && !res.OK() {
		for k := range fs {
			delete(fs, k)
		}
		for k, v := range saved {
			fs[k] = v
		}
	}
	return res, nil
}

func applySection(fs Files, sec *gnuSection, opt PatchOptions) FileOutcome {
	target := opt.File
	if target == "" {
		target = pickName(fs, sec, opt.Strip)
	}
	out := FileOutcome{Path: target}
	skipAll := func(why string) FileOutcome {
		out.Skipped = why
		for i, h := range sec.hunks {
			out.Hunks = append(out.Hunks, HunkOutcome{N: i + 1, Line: h.oldStart, Failed: true})
		}
		return out
	}
	if target == "" {
		return skipAll("can't find file to patch (no file to patch; wrong -p?)")
	}
	input, exists := fs[target]
	if !exists && !sec.oldGone {
		return skipAll("can't find file to patch (no file to patch; wrong -p?)")
	}
	reverse := false
	if sec.oldGone && exists && len(input) > 0 {
		why := "the patch would create the file, which already exists"
		if sec.gitDiff && sec.oldName != "/dev/null" {
			why += " (its index line names blob 0000000, which GNU patch reads as a creation)"
		}
		switch {
		case opt.Forward:
			return skipAll(why + ": skipped (--forward)")
		case opt.Force:
			// "Applying it anyway."
		default:
			return skipAll(why + `: patch asks "Assume -R? [n]", and without an answer skips it`)
		}
	}
	in := splitLines(input)
	st := &gnuState{in: in}
	var outb [][]byte
	mismatch := false
	failed := 0
	for i, h0 := range sec.hunks {
		h := h0
		if reverse {
			h = swapHunk(h0)
		}
		maxFuzz := opt.Fuzz
		if c := h.context(); c < maxFuzz {
			maxFuzz = c
		}
		where, fuzz := 0, 0
		applyAnyway := opt.Force
		for {
			where = st.locate(h, fuzz)
			if where == 0 || fuzz != 0 || st.inOffset != 0 {
				mismatch = true
			}
			if i == 0 && where == 0 && !applyAnyway && !reverse {
				r := swapHunk(h)
				if w := st.locate(r, fuzz); w != 0 {
					if opt.Forward {
						return skipAll("reversed (or previously applied) patch detected: skipped (--forward)")
					}
					return skipAll(`reversed (or previously applied) patch detected: patch asks "Assume -R? [n]", and without an answer skips it`)
				}
			}
			if where != 0 {
				break
			}
			fuzz++
			if fuzz > maxFuzz {
				break
			}
		}
		ho := HunkOutcome{N: i + 1, Fuzz: fuzz}
		first := h.first()
		if where == 0 || (where == 1 && sec.oldGone && len(input) > 0) {
			ho.Failed, ho.Fuzz, ho.Line = true, 0, first+st.outOffset
			failed++
			out.Hunks = append(out.Hunks, ho)
			continue
		}
		ok := st.apply(h, where, &outb)
		if !ok {
			ho.Failed, ho.Fuzz, ho.Line = true, 0, where+st.outOffset
			failed++
			out.Hunks = append(out.Hunks, ho)
			continue
		}
		ho.Line = where + st.outOffset - (h.newLen() - h.oldLen())
		ho.Offset = st.inOffset
		out.Hunks = append(out.Hunks, ho)
	}
	// copy the rest
	for st.frozen < len(in) {
		outb = append(outb, in[st.frozen])
		st.frozen++
	}

	result := joinLines(outb)
	if failed == len(sec.hunks) && len(sec.hunks) > 0 {
		// Nothing changed: patch leaves the file as it is.
		if !opt.NoBackup && exists {
			fs[target+".orig"] = append([]byte(nil), input...)
		}
		return out
	}
	if !opt.NoBackup && (mismatch || failed > 0) && exists {
		fs[target+".orig"] = append([]byte(nil), input...)
	}
	if len(result) == 0 && sec.newGone {
		delete(fs, target)
		return out
	}
	fs[target] = result
	return out
}

type gnuState struct {
	in        [][]byte
	frozen    int // lines of input already consumed (last_frozen_line)
	inOffset  int
	outOffset int
}

func (h *gnuHunk) first() int {
	if h.oldLen() == 0 {
		return h.oldStart + 1
	}
	return h.oldStart
}

func (h *gnuHunk) oldLen() int { return h.oldLines }
func (h *gnuHunk) newLen() int { return h.newLines }

func (h *gnuHunk) pattern() [][]byte {
	var p [][]byte
	for _, l := range h.lines {
		if l.op != '+' {
			p = append(p, l.text)
		}
	}
	return p
}

func (h *gnuHunk) prefixContext() int {
	n := 0
	for _, l := range h.lines {
		if l.op != ' ' {
			break
		}
		n++
	}
	return n
}

func (h *gnuHunk) suffixContext() int {
	n := 0
	for i := len(h.lines) - 1; i >= 0; i-- {
		if h.lines[i].op != ' ' {
			break
		}
		n++
	}
	return n
}

func (h *gnuHunk) context() int {
	p, s := h.prefixContext(), h.suffixContext()
	if p > s {
		return p
	}
	return s
}

func swapHunk(h *gnuHunk) *gnuHunk {
	r := &gnuHunk{oldStart: h.newStart, oldLines: h.newLines, newStart: h.oldStart, newLines: h.oldLines, at: h.at}
	for _, l := range h.lines {
		switch l.op {
		case '-':
			r.lines = append(r.lines, hunkLine{'+', l.text})
		case '+':
			r.lines = append(r.lines, hunkLine{'-', l.text})
		default:
			r.lines = append(r.lines, l)
		}
	}
	// diff writes - lines before + lines; keep that order after the swap
	for i := 0; i < len(r.lines); {
		j := i
		for j < len(r.lines) && r.lines[j].op != ' ' {
			j++
		}
		var minus, plus []hunkLine
		for _, l := range r.lines[i:j] {
			if l.op == '-' {
				minus = append(minus, l)
			} else {
				plus = append(plus, l)
			}
		}
		copy(r.lines[i:], append(minus, plus...))
		if j == i {
			j++
		}
		i = j
	}
	return r
}

// locate is GNU patch's search for a hunk's place (locate_hunk): 0 when
// there is none at this fuzz.
func (st *gnuState) locate(h *gnuHunk, fuzz int) int {
	pat := h.pattern()
	patLines := len(pat)
	inputLines := len(st.in)
	firstGuess := h.first() + st.inOffset
	prefix, suffix := h.prefixContext(), h.suffixContext()
	context := prefix
	if suffix > context {
		context = suffix
	}
	prefixFuzz := fuzz + prefix - context
	suffixFuzz := fuzz + suffix - context
	maxWhere := inputLines - (patLines - suffixFuzz) + 1
	minWhere := st.frozen + 1 - (prefix - prefixFuzz)
	maxPos := maxWhere - firstGuess
	maxNeg := firstGuess - minWhere
	maxOff := maxPos
	if maxNeg > maxOff {
		maxOff = maxNeg
	}
	if patLines == 0 {
		return firstGuess
	}
	if firstGuess <= maxNeg {
		maxNeg = firstGuess - 1
	}
	if prefixFuzz < 0 && h.first() <= 1 {
		if suffixFuzz < 0 && (patLines != inputLines || prefix < st.frozen) {
			return 0
		}
		off := 1 - firstGuess
		if st.frozen <= prefix && off <= maxPos && st.match(pat, firstGuess, off, 0, suffixFuzz) {
			st.inOffset += off
			return firstGuess + off
		}
		return 0
	} else if prefixFuzz < 0 {
		prefixFuzz = 0
	}
	if suffixFuzz < 0 {
		off := firstGuess - (inputLines - patLines + 1)
		if off <= maxNeg && st.match(pat, firstGuess, -off, prefixFuzz, 0) {
			st.inOffset -= off
			return firstGuess - off
		}
		return 0
	}
	for off := 0; off <= maxOff; off++ {
		if off <= maxPos && st.match(pat, firstGuess, off, prefixFuzz, suffixFuzz) {
			st.inOffset += off
			return firstGuess + off
		}
		if off > 0 && off <= maxNeg && st.match(pat, firstGuess, -off, prefixFuzz, suffixFuzz) {
			st.inOffset -= off
			return firstGuess - off
		}
	}
	return 0
}

// match is patch_match: the pattern, less the fuzzed lines, equals the
// input at base+offset.
func (st *gnuState) match(pat [][]byte, base, offset, prefixFuzz, suffixFuzz int) bool {
	iline := base + offset + prefixFuzz
	for p := prefixFuzz; p < len(pat)-suffixFuzz; p, iline = p+1, iline+1 {
		if iline < 1 || iline > len(st.in) {
			return false
		}
		if !bytes.Equal(st.in[iline-1], pat[p]) {
			return false
		}
	}
	return true
}

// apply is apply_hunk: input up to the hunk is copied, '-' lines are
// dropped, '+' lines written, context copied from the input.
func (st *gnuState) apply(h *gnuHunk, where int, out *[][]byte) bool {
	copyTill := func(last int) bool {
		if st.frozen > last {
			return false // "misordered hunks! output would be garbled"
		}
		for st.frozen < last {
			if st.frozen < len(st.in) { // past the end, patch reads empty lines
				*out = append(*out, st.in[st.frozen])
			}
			st.frozen++
		}
		return true
	}
	where--
	old := 1
	for _, l := range h.lines {
		switch l.op {
		case '-':
			if !copyTill(where + old - 1) {
				return false
			}
			st.frozen++
			old++
		case '+':
			if !copyTill(where + old - 1) {
				return false
			}
			*out = append(*out, l.text)
		default:
			old++
		}
	}
	st.outOffset += h.newLen() - h.oldLen()
	return true
}

// joinLines writes lines as patch does: a line without a newline that is
// followed by another gets one.
func joinLines(ls [][]byte) []byte {
	var b bytes.Buffer
	for i, l := range ls {
		b.Write(l)
		if i < len(ls)-1 && len(l) > 0 && l[len(l)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}
