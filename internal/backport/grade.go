package backport

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/tree"
)

// Grade says how a patch compares with the upstream commit it names.
type Grade string

// The grades, best first.
const (
	// Identical: the patch's file diffs are the commit's, byte for byte,
	// apart from the "@@" lines (their numbers, where the backport moved
	// the hunks, and the function name after them, which depends on the
	// code above the hunk and on the diff tool) and index lines. The order
	// of the file diffs does not count.
	Identical Grade = "identical"
	// Equivalent: applied to the commit's parent, the patch gives exactly
	// the commit's files (the same paths touched, the same content and
	// modes), but its text differs (other context, hunks split otherwise).
	Equivalent Grade = "equivalent"
	// Differs: anything else.
	Differs Grade = "differs"
)

// Trees are the commit's first parent and the commit, which the equivalence
// test compares against.
type Trees struct {
	Parent tree.Source
	Commit tree.Source
}

// FileLines are the changed lines of one file that only one side has.
type FileLines struct {
	Path  string
	Lines []string
}

// Verdict is the comparison of a patch with an upstream commit.
type Verdict struct {
	Grade Grade
	// Reason says in a sentence why the grade is not Identical ("" when it is).
	Reason string
	// OnlyPatch are the changed lines ("+..." and "-...", and file header
	// lines such as "new file mode 100644") that the patch has and the
	// commit does not, file by file; OnlyUpstream the reverse. Context lines
	// and line numbers do not count. Set for Equivalent and Differs.
	OnlyPatch, OnlyUpstream []FileLines
}

// Interdiff renders OnlyPatch and OnlyUpstream, both directions, for a
// message: what the backport changes that the commit does not, and what the
// commit changes that the backport does not. "" when both are empty.
func (v Verdict) Interdiff() string {
	var b strings.Builder
	section := func(title string, files []FileLines) {
		if len(files) == 0 {
			return
		}
		b.WriteString(title + "\n")
		for _, f := range files {
			b.WriteString("  " + f.Path + "\n")
			for _, l := range f.Lines {
				b.WriteString("    " + l + "\n")
			}
		}
	}
	section("only in the backport (it changes this, the upstream commit does not):", v.OnlyPatch)
	section("only upstream (the upstream commit changes this, the backport does not):", v.OnlyUpstream)
	return strings.TrimSuffix(b.String(), "\n")
}

// Count returns the number of changed lines only the patch has and only the
// commit has.
func (v Verdict) Count() (patch, upstream int) {
	for _, f := range v.OnlyPatch {
		patch += len(f.Lines)
	}
	for _, f := range v.OnlyUpstream {
		upstream += len(f.Lines)
	}
	return patch, upstream
}

// Compare grades patch p against upstreamDiff, the diff of the commit it
// names as `git show --format=` or GitHub's .diff gives it. trees, when not
// nil, are the commit's parent and the commit, for the equivalence test;
// without them a patch that is not identical differs.
func Compare(p *series.Patch, upstreamDiff []byte, trees *Trees) (Verdict, error) {
	mine, theirs := normalize(p.Diff()), normalize(upstreamDiff)
	if len(theirs) == 0 {
		return Verdict{}, fmt.Errorf("the upstream diff holds no file diff")
	}
	if sameFiles(mine, theirs) {
		return Verdict{Grade: Identical}, nil
	}
	v := Verdict{Grade: Differs}
	v.OnlyPatch, v.OnlyUpstream = interdiff(mine, theirs)
	if trees == nil {
		v.Reason = "its text differs from the commit's, and the commit's trees were not at hand to test equivalence"
		return v, nil
	}
	up, err := series.Parse("upstream diff", upstreamDiff)
	if err != nil {
		return v, fmt.Errorf("parsing the upstream diff: %w", err)
	}
	ok, why, err := equivalent(p, up, *trees)
	if err != nil {
		return v, err
	}
	if !ok {
		v.Reason = why
		return v, nil
	}
	v.Grade = Equivalent
	if len(v.OnlyPatch) == 0 && len(v.OnlyUpstream) == 0 {
		v.Reason = "the same changed lines, with other context or hunks split otherwise"
	} else {
		v.Reason = "other changed lines that give the same files"
	}
	return v, nil
}

// fileDiff is one file's diff, normalized for comparison.
type fileDiff struct {
	path string
	// header is the "diff --git" line and the extended header, without
	// index lines; "---" and "+++" lines included.
	header []string
	// hunks are the lines of each hunk, without its "@@" line.
	hunks [][]string
}

// text is the file diff as compared for Identical.
func (f fileDiff) text() string {
	var b strings.Builder
	for _, l := range f.header {
		b.WriteString(l + "\n")
	}
	for _, h := range f.hunks {
		b.WriteString("@@\n")
		for _, l := range h {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// changes are the lines the interdiff compares: extended header lines that
// say what happens to the file (modes, renames, binary data) and the added
// and removed lines, with "\ No newline" markers.
func (f fileDiff) changes() []string {
	var out []string
	for _, l := range f.header {
		if strings.HasPrefix(l, "diff --git ") || strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") {
			continue
		}
		out = append(out, l)
	}
	for _, h := range f.hunks {
		for i, l := range h {
			switch {
			case strings.HasPrefix(l, "+"), strings.HasPrefix(l, "-"):
				out = append(out, l)
			case strings.HasPrefix(l, `\`) && i > 0 && h[i-1] != "" && h[i-1][0] != ' ':
				out = append(out, l)
			}
		}
	}
	return out
}

// normalize splits a diff into file diffs the way git apply reads it, and
// drops what Identical ignores: index lines, "@@" lines (numbers and
// function names), text between file diffs, and a mail signature ("-- ")
// after the last.
func normalize(diff []byte) []fileDiff {
	lines := strings.Split(string(diff), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var out []fileDiff
	var cur *fileDiff
	inGitHeader := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "diff --git "):
			out = append(out, fileDiff{path: gitPath(l), header: []string{l}})
			cur, inGitHeader = &out[len(out)-1], true
		case !inGitHeader && strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			out = append(out, fileDiff{path: plainPath(lines[i+1]), header: []string{l, lines[i+1]}})
			cur, inGitHeader = &out[len(out)-1], false
			i++
		case cur != nil && strings.HasPrefix(l, "@@ -"):
			inGitHeader = false
			oldN, newN, ok := hunkCounts(l)
			if !ok {
				continue
			}
			var h []string
			for i+1 < len(lines) && (oldN > 0 || newN > 0) {
				i++
				hl := lines[i]
				switch {
				case hl == "" || hl[0] == ' ':
					oldN--
					newN--
				case hl[0] == '-':
					oldN--
				case hl[0] == '+':
					newN--
				case hl[0] == '\\':
				default:
					oldN, newN = 0, 0
					i--
					continue
				}
				h = append(h, hl)
			}
			if i+1 < len(lines) && strings.HasPrefix(lines[i+1], `\`) {
				i++
				h = append(h, lines[i])
			}
			cur.hunks = append(cur.hunks, h)
		case cur != nil && inGitHeader:
			if l == "-- " {
				return out
			}
			if strings.HasPrefix(l, "index ") {
				continue
			}
			cur.header = append(cur.header, l)
		case l == "-- ":
			return out
		}
	}
	return out
}

// gitPath is the b/ path of a "diff --git a/x b/y" line, or the rest of the
// line when it cannot be split.
func gitPath(l string) string {
	rest := strings.TrimPrefix(l, "diff --git ")
	if i := strings.LastIndex(rest, " b/"); i >= 0 {
		return rest[i+3:]
	}
	return rest
}

// plainPath is the path of a "+++ " line of a traditional diff.
func plainPath(l string) string {
	p := strings.TrimPrefix(l, "+++ ")
	if i := strings.IndexByte(p, '\t'); i >= 0 {
		p = p[:i]
	}
	if _, rest, ok := strings.Cut(p, "/"); ok {
		return rest
	}
	return p
}

// hunkCounts reads the line counts of "@@ -a,b +c,d @@".
func hunkCounts(l string) (oldN, newN int, ok bool) {
	rest, ok := strings.CutPrefix(l, "@@ -")
	if !ok {
		return 0, 0, false
	}
	end := strings.Index(rest, " @@")
	if end < 0 {
		return 0, 0, false
	}
	a, b, ok := strings.Cut(rest[:end], " +")
	if !ok {
		return 0, 0, false
	}
	count := func(r string) (int, bool) {
		_, n, comma := strings.Cut(r, ",")
		if !comma {
			return 1, true
		}
		v, err := strconv.Atoi(n)
		return v, err == nil
	}
	oldN, ok1 := count(a)
	newN, ok2 := count(b)
	return oldN, newN, ok1 && ok2
}

// sameFiles reports whether two normalized diffs hold the same file diffs,
// in any order.
func sameFiles(a, b []fileDiff) bool {
	if len(a) != len(b) {
		return false
	}
	ta, tb := make([]string, len(a)), make([]string, len(b))
	for i := range a {
		ta[i], tb[i] = a[i].text(), b[i].text()
	}
	slices.Sort(ta)
	slices.Sort(tb)
	return slices.Equal(ta, tb)
}

// interdiff compares the changed lines file by file: those only the patch
// has, and those only the commit has, in the order of the files.
func interdiff(mine, theirs []fileDiff) (onlyMine, onlyTheirs []FileLines) {
	byPath := func(fs []fileDiff) (map[string][]string, []string) {
		m := map[string][]string{}
		var order []string
		for _, f := range fs {
			if _, ok := m[f.path]; !ok {
				order = append(order, f.path)
			}
			m[f.path] = append(m[f.path], f.changes()...)
		}
		return m, order
	}
	mm, mOrder := byPath(mine)
	tm, tOrder := byPath(theirs)
	paths := mOrder
	for _, p := range tOrder {
		if _, ok := mm[p]; !ok {
			paths = append(paths, p)
		}
	}
	for _, p := range paths {
		a, b := onlyIn(mm[p], tm[p])
		if len(a) > 0 {
			onlyMine = append(onlyMine, FileLines{Path: p, Lines: a})
		}
		if len(b) > 0 {
			onlyTheirs = append(onlyTheirs, FileLines{Path: p, Lines: b})
		}
	}
	return onlyMine, onlyTheirs
}

// onlyIn returns the lines of a and of b that a longest common subsequence
// of the two leaves out, in order. Very long inputs fall back to counting
// lines as a multiset.
func onlyIn(a, b []string) (onlyA, onlyB []string) {
	if len(a)*len(b) > 4<<20 {
		count := map[string]int{}
		for _, l := range b {
			count[l]++
		}
		for _, l := range a {
			if count[l] > 0 {
				count[l]--
			} else {
				onlyA = append(onlyA, l)
			}
		}
		count = map[string]int{}
		for _, l := range a {
			count[l]++
		}
		for _, l := range b {
			if count[l] > 0 {
				count[l]--
			} else {
				onlyB = append(onlyB, l)
			}
		}
		return onlyA, onlyB
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	n, m := len(a), len(b)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			i++
			j++
		case lcs[i+1][j] >= lcs[i][j+1]:
			onlyA = append(onlyA, a[i])
			i++
		default:
			onlyB = append(onlyB, b[j])
			j++
		}
	}
	onlyA = append(onlyA, a[i:]...)
	onlyB = append(onlyB, b[j:]...)
	return onlyA, onlyB
}

// equivalent applies p to the commit's parent and compares the result with
// the commit on every path that either touches.
func equivalent(p, up *series.Patch, t Trees) (bool, string, error) {
	a := apply.New(t.Parent, apply.WithoutWhitespaceCheck())
	r := a.Apply(p)
	if r.Err != nil {
		return false, "", r.Err
	}
	if r.Status != apply.StatusApplied {
		msg := "it does not apply to the commit's parent"
		if len(r.Errors) > 0 {
			e := r.Errors[0]
			msg += fmt.Sprintf(" (%s:%d: %s)", e.File, e.Line, e.Message)
		}
		return false, msg, nil
	}
	mine, theirs := touched(p), touched(up)
	if !slices.Equal(mine, theirs) {
		return false, fmt.Sprintf("it touches %s, the commit %s", strings.Join(mine, ", "), strings.Join(theirs, ", ")), nil
	}
	for _, path := range theirs {
		got, gok, err := a.Read(path)
		if err != nil {
			return false, "", err
		}
		want, wok, err := t.Commit.Read(path)
		if err != nil {
			return false, "", fmt.Errorf("reading %s at the commit: %w", path, err)
		}
		switch {
		case gok != wok && wok:
			return false, fmt.Sprintf("it leaves no %s, the commit has one", path), nil
		case gok != wok:
			return false, fmt.Sprintf("it leaves %s, the commit deletes it", path), nil
		case !gok:
		case got.Mode != want.Mode:
			return false, fmt.Sprintf("%s: mode %s, the commit's is %s", path, got.Mode, want.Mode), nil
		case !bytes.Equal(got.Data, want.Data):
			return false, fmt.Sprintf("%s differs from the commit's", path), nil
		}
	}
	return true, "", nil
}

// touched lists the paths a patch's file diffs name, sorted.
func touched(p *series.Patch) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range p.Files {
		for _, n := range []string{f.OldName, f.NewName} {
			if n != "" && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}
