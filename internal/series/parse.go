package series

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/lazyre"
)

// Parse parses one patch file: path names it in messages (Patch.Path) and
// raw is its content.
//
// The header is the text before the first line that starts a file diff, as
// git apply finds it: a "diff --git " line, or a "--- " line followed by a
// "+++ " line and an "@@ -" line. The rest is parsed with go-gitdiff.
//
// Bad input is a *diag.InputError naming path and, where there is one, the
// 1-based line: a file larger than MaxPatchSize, a NUL byte, invalid UTF-8 or
// a malformed field in the header (see ParseHeader), no diff at all, a hunk
// header before any file header, a hunk shorter or longer than its "@@" line
// counts, a file diff that changes nothing, and a file that two file diffs
// change (git apply would apply both, one over the other; the only pair
// allowed is a file deleted or renamed away, then created, which is how git
// diff shows a file replaced by a symlink).
//
// A reference file (a Reference field; see reference.go) needs no diff: it
// parses to a Patch with Reference set and no Files. When it has a diff, its
// patch-id must be the pinned Patch-Id.
//
// Options (WithStrip, WithDirectory, WithRecount) read the diff as the
// matching git apply flags would: with Recount, Bytes holds the text with its
// "@@" lines recounted; with Strip or Directory, the names of Files are tree
// paths and NamesFinal is set.
//
// Parse keeps raw: the Patch's Bytes are raw itself (or its recounted copy), and
// the strings of its lines and names are views into it (see view.go). The
// caller must not modify raw after Parse, nor the slices that HeaderBytes,
// FileText and Diff return.
func Parse(path string, raw []byte, opts ...Option) (*Patch, error) {
	o := buildOptions(opts)
	if err := CheckOptions(o); err != nil {
		return nil, diag.Inputf(path, 0, "%v", err)
	}
	if int64(len(raw)) > MaxPatchSize || len(raw) > math.MaxInt32 {
		return nil, tooLarge(path, int64(len(raw)))
	}
	if i := bytes.IndexByte(raw, 0); i >= 0 {
		return nil, diag.Inputf(path, 1+bytes.Count(raw[:i], []byte("\n")), "NUL byte in patch text")
	}
	lines := newLineTable(view(raw))

	start, err := findFirstFile(path, lines)
	if err != nil {
		return nil, err
	}
	if o.Recount && start < lines.len() {
		raw = []byte(recount(lines, start))
		lines = newLineTable(view(raw))
	}
	off := lines.offset(start)

	p := &Patch{Name: filepath.Base(path), Path: path, raw: raw, options: o}
	p.Header, err = ParseHeader(raw[:off], path)
	if err != nil {
		return nil, err
	}
	// A reference file (reference.go) may have no diff.
	if p.Reference, err = parseReference(path, p.Header, start < lines.len()); err != nil {
		return nil, err
	}
	if start == lines.len() {
		if p.Reference != nil {
			p.PatchID = p.Reference.PatchID
			return p, nil
		}
		return nil, diag.Inputf(path, 0, "no diff found: no \"diff --git\" line, nor a \"---\", \"+++\", \"@@\" file header")
	}

	files, el, err := parseDiff(lines, start)
	if err != nil {
		return nil, gitdiffError(path, lines, start, err)
	}
	if len(files) == 0 {
		return nil, diag.Inputf(path, start+1, "no file diff found")
	}
	p.Files = files

	fileLines, err := p.locate(lines, start, el)
	if err != nil {
		return nil, err
	}
	if err := checkPaths(path, lines, start, files, fileLines); err != nil {
		return nil, err
	}
	if o.rewritesNames() {
		if err := p.rewriteNames(lines, o); err != nil {
			return nil, err
		}
	}
	if err := checkFiles(path, files, fileLines); err != nil {
		return nil, err
	}

	// PatchID fails only with ErrNoPatchID, for a traditional diff, which
	// git gives no id either: PatchID stays "".
	if id, err := PatchID(raw[off:]); err == nil {
		p.PatchID = id
	}
	if p.Reference != nil {
		if err := checkReference(p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func tooLarge(path string, size int64) error {
	return diag.Inputf(path, 0, "patch is %d bytes, more than the %d-byte limit (series.MaxPatchSize)", size, MaxPatchSize)
}

// splitKeep splits b into lines that keep their "\n"; the last line may lack it.
func splitKeep(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	lines := strings.SplitAfter(string(b), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// findFirstFile returns the index of the line that starts the first file
// diff, or lines.len(). Like git apply, it rejects a hunk header found before
// any file header.
func findFirstFile(path string, lines *lineTable) (int, error) {
	for i := 0; i < lines.len(); i++ {
		l := lines.at(i)
		if _, ok := parseFragmentHeader(l); ok {
			return 0, diag.Inputf(path, i+1, "hunk header before any file header: %s", strings.TrimRight(l, "\r\n"))
		}
		if isGitFileHeader(l) || isTraditionalFileHeader(lines, i) {
			return i, nil
		}
	}
	return lines.len(), nil
}

func isGitFileHeader(l string) bool { return strings.HasPrefix(l, "diff --git ") }

// isTraditionalFileHeader is go-gitdiff's test (and git apply's) for a
// unified diff without "diff --git": "--- ", "+++ ", then an "@@ -" line at
// least as long as "@@ -1 +1 @@\n".
func isTraditionalFileHeader(lines *lineTable, i int) bool {
	return i+2 < lines.len() &&
		strings.HasPrefix(lines.at(i), "--- ") &&
		strings.HasPrefix(lines.at(i+1), "+++ ") &&
		len(lines.at(i+2)) >= len("@@ -1 +1 @@\n") && strings.HasPrefix(lines.at(i+2), "@@ -")
}

// fragmentRange is the four numbers of an "@@ -a,b +c,d @@" line.
type fragmentRange struct{ oldPos, oldLines, newPos, newLines int64 }

// parseFragmentHeader accepts exactly the lines go-gitdiff accepts as a text
// fragment header.
func parseFragmentHeader(l string) (fragmentRange, bool) {
	const startMark, endMark = "@@ -", " @@"
	var r fragmentRange
	if !strings.HasPrefix(l, startMark) {
		return r, false
	}
	parts := strings.SplitAfterN(l, endMark, 2)
	if len(parts) < 2 {
		return r, false
	}
	ranges := strings.Split(parts[0][len(startMark):len(parts[0])-len(endMark)], " +")
	if len(ranges) != 2 {
		return r, false
	}
	var ok1, ok2 bool
	r.oldPos, r.oldLines, ok1 = parseRange(ranges[0])
	r.newPos, r.newLines, ok2 = parseRange(ranges[1])
	return r, ok1 && ok2
}

func parseRange(s string) (start, n int64, ok bool) {
	a, b, comma := strings.Cut(s, ",")
	start, err := strconv.ParseInt(a, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if !comma {
		return start, 1, true
	}
	n, err = strconv.ParseInt(b, 10, 64)
	return start, n, err == nil
}

// isNoNewlineMarker is go-gitdiff's test for "\ No newline at end of file",
// whose text depends on the locale.
func isNoNewlineMarker(l string) bool { return len(l) >= 12 && l[:2] == "\\ " }

// gitdiffLineRe reads the line go-gitdiff puts in its errors; it counts from
// the first line it was given.
var gitdiffLineRe = lazyre.New(`(?s)^gitdiff: line (\d+): (.*)$`)

// gitdiffError turns a go-gitdiff error into an InputError whose line counts
// from the start of the file; start is the number of lines before the bytes
// go-gitdiff read.
func gitdiffError(path string, lines *lineTable, start int, err error) error {
	m := gitdiffLineRe.FindStringSubmatch(err.Error())
	if m == nil {
		return &diag.InputError{File: path, Msg: "parsing the diff", Err: err}
	}
	n, _ := strconv.Atoi(m[1])
	line, msg := start+n, m[2]
	if rest, ok := strings.CutPrefix(msg, "invalid line operation: "); ok {
		msg = "hunk line starts with " + rest + ", not ' ', '+', '-' or '\\' (is the hunk shorter than its @@ line counts?)"
	}
	if msg == "fragment contains no changes" {
		// go-gitdiff names the line after the hunk; name its @@ line.
		for i := min(line, lines.len()) - 1; i >= start; i-- {
			if _, ok := parseFragmentHeader(lines.at(i)); ok {
				line = i + 1
				break
			}
		}
		msg = "hunk has no added or deleted line"
	}
	return diag.Inputf(path, line, "%s", msg)
}

// locate walks the lines of the diff the way go-gitdiff parsed them: it fills
// HunkLine, returns the line of each file diff's header, and rejects a hunk
// that goes on past the line count of its "@@" line (go-gitdiff and git apply
// silently drop those extra lines). It gives the hunks el elided their
// lines back.
func (p *Patch) locate(lines *lineTable, start int, el *elision) ([]int, error) {
	p.HunkLine = make(map[*gitdiff.TextFragment]int)
	p.FileLine = make(map[*gitdiff.File]int, len(p.Files))
	fileLines := make([]int, len(p.Files))
	pos := start
	for k, f := range p.Files {
		for pos < lines.len() && !isGitFileHeader(lines.at(pos)) && !isTraditionalFileHeader(lines, pos) {
			pos++
		}
		if pos == lines.len() {
			return nil, fmt.Errorf("%s: locating file diff %d of %d: no header found", p.Path, k+1, len(p.Files))
		}
		fileLines[k] = pos + 1
		p.FileLine[f] = pos + 1
		if isGitFileHeader(lines.at(pos)) {
			pos++
		} else {
			pos += 2
		}
		for _, frag := range f.TextFragments {
			for pos < lines.len() {
				if _, ok := parseFragmentHeader(lines.at(pos)); ok {
					break
				}
				pos++
			}
			if pos == lines.len() {
				return nil, fmt.Errorf("%s: locating hunk %s of %s: no header found", p.Path, strings.TrimSpace(frag.Header()), f.NewName)
			}
			if err := el.restore(frag, lines, pos); err != nil {
				return nil, fmt.Errorf("%s: %w", p.Path, err)
			}
			hunk := pos + 1
			p.HunkLine[frag] = hunk
			pos++
			var oldN, newN int64
			for (oldN < frag.OldLines || newN < frag.NewLines) && pos < lines.len() {
				CountHunkLine(lines.at(pos)[0], &oldN, &newN)
				pos++
			}
			if pos < lines.len() && isNoNewlineMarker(lines.at(pos)) {
				pos++
			}
			if pos < lines.len() && looksLikeExtraHunkLine(lines, pos) && !(p.options.Mail && isStrippedSignature(lines, pos)) {
				return nil, diag.Inputf(p.Path, pos+1, "hunk at line %d goes on past the %d old and %d new lines its @@ line counts", hunk, frag.OldLines, frag.NewLines)
			}
		}
	}
	if err := el.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", p.Path, err)
	}
	return fileLines, nil
}

// looksLikeExtraHunkLine reports whether the line right after a hunk reads
// like one more line of it. The mail signature "-- " of git format-patch and
// the start of a traditional file diff are not.
func looksLikeExtraHunkLine(lines *lineTable, i int) bool {
	l := lines.at(i)
	switch l[0] {
	case '+', '-', ' ', '\\':
	default:
		return false
	}
	if strings.TrimRight(l, "\r\n") == "-- " {
		return false
	}
	if isTraditionalFileHeader(lines, i) {
		return false
	}
	return true
}

// checkFiles rejects file diffs that change nothing and files changed twice.
func checkFiles(path string, files []*gitdiff.File, fileLines []int) error {
	type claim struct {
		line    int
		vacated bool // the file diff deleted the path or renamed it away
	}
	claims := make(map[string]claim)
	add := func(name string, line int, vacates, creates bool) error {
		if prev, ok := claims[name]; ok && !(prev.vacated && creates) {
			return diag.Inputf(path, line, "%s is changed by two file diffs (the first at line %d); merge them into one", name, prev.line)
		}
		claims[name] = claim{line: line, vacated: vacates}
		return nil
	}
	for k, f := range files {
		line := fileLines[k]
		modeChange := f.OldMode != 0 && f.NewMode != 0 && f.OldMode != f.NewMode
		if len(f.TextFragments) == 0 && !f.IsBinary && !f.IsNew && !f.IsDelete && !f.IsRename && !f.IsCopy && !modeChange {
			return diag.Inputf(path, line, "the diff of %s changes nothing", f.NewName)
		}
		var err error
		switch {
		case f.IsNew:
			err = add(f.NewName, line, false, true)
		case f.IsDelete:
			err = add(f.OldName, line, true, false)
		case f.IsRename:
			if err = add(f.OldName, line, true, false); err == nil {
				err = add(f.NewName, line, false, true)
			}
		case f.IsCopy:
			err = add(f.NewName, line, false, true)
		default:
			err = add(f.NewName, line, false, false)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
