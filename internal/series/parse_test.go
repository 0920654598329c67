package series

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/gittest"
)

// modify is a diff of f from "a\nb\nc\n", as git writes it.
func modify(name, from, to string) string {
	return fmt.Sprintf("diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -1,3 +1,3 @@\n-%s\n+%s\n b\n c\n", name, name, name, name, from, to)
}

const (
	deleteF = "diff --git a/f b/f\ndeleted file mode 100644\n--- a/f\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-a\n-b\n-c\n"
	createF = "diff --git a/f b/f\nnew file mode 100644\n--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+z\n"
	createG = "diff --git a/g b/g\nnew file mode 100644\n--- /dev/null\n+++ b/g\n@@ -0,0 +1 @@\n+z\n"
	deleteG = "diff --git a/g b/g\ndeleted file mode 100644\n--- a/g\n+++ /dev/null\n@@ -1 +0,0 @@\n-z\n"
	renameF = "diff --git a/f b/h\nsimilarity index 100%\nrename from f\nrename to h\n"
)

func TestParse(t *testing.T) {
	const header = "Subject: change f\nOrigin: vendor\n\n"
	raw := header + modify("f", "a", "A")
	p, err := Parse("patches/k/0001-change.diff", []byte(raw))
	if err != nil {
		t.Fatalf("Parse() error = %v", err)
	}
	if p.Name != "0001-change.diff" || p.Path != "patches/k/0001-change.diff" {
		t.Errorf("Parse() Name, Path = %q, %q, want 0001-change.diff, patches/k/0001-change.diff", p.Name, p.Path)
	}
	if p.Header.Subject != "change f" || p.Header.Lines != 3 {
		t.Errorf("Parse() Header = %+v, want Subject %q and 3 lines", p.Header, "change f")
	}
	if got := string(p.Diff()); got != modify("f", "a", "A") {
		t.Errorf("Diff() = %q, want the diff part", got)
	}
	if len(p.Files) != 1 || p.Files[0].NewName != "f" {
		t.Fatalf("Parse() Files = %v, want one diff of f", p.Files)
	}
	if got := p.HunkLine[p.Files[0].TextFragments[0]]; got != 7 {
		t.Errorf("HunkLine = %d, want 7", got)
	}
	if got := p.FileLine[p.Files[0]]; got != 4 {
		t.Errorf("FileLine = %d, want 4 (the diff --git line)", got)
	}
	if want := gitPatchID(t, t.TempDir(), []byte(raw)); p.PatchID != want {
		t.Errorf("Parse() PatchID = %s, want %s", p.PatchID, want)
	}
}

// TestParseErrors checks every kind of bad input, the file and line the error
// names, and whether git apply accepts the same bytes (where we are stricter
// than git, gitAccepts says so).
func TestParseErrors(t *testing.T) {
	r := gittest.New(t)
	r.Write("f", "a\nb\nc\n")
	r.Commit("base")

	cases := []struct {
		name       string
		raw        string
		line       int
		msg        string
		gitAccepts bool
	}{
		{"empty file", "", 0, "no diff found", false},
		{"header only", "Subject: x\n\nno diff here\n--- a\n+++ b\n", 0, "no diff found", false},
		{"NUL in diff", modify("f", "a", "A\x00"), 6, "NUL byte", true},
		{"NUL in header", "Subject: \x00\n" + modify("f", "a", "A"), 1, "NUL byte", true},
		{"invalid UTF-8 in header", "Subject: x\nAuthor: \xc3\x28\n" + modify("f", "a", "A"), 2, "invalid UTF-8", true},
		{"unknown Origin kind", "Subject: x\n\nOrigin: sideways\n" + modify("f", "a", "A"), 3, "unknown Origin kind", true},
		{"hunk header before file header", "Subject: x\n@@ -1 +1 @@\n" + modify("f", "a", "A"), 2, "hunk header before any file header", false},
		{"hunk truncated at end of file", strings.TrimSuffix(modify("f", "a", "A"), " c\n"), 5, "miscounts lines", false},
		{"hunk truncated by next file", strings.TrimSuffix(modify("f", "a", "A"), " c\n") + createG, 8, "is the hunk shorter", false},
		{"hunk longer than counted", modify("f", "a", "A") + "+extra\n", 9, "goes on past the 3 old and 3 new lines", true},
		{"hunk longer by a context line", "Subject: x\n" + strings.Replace(modify("f", "a", "A"), "@@ -1,3 +1,3 @@", "@@ -1,2 +1,2 @@", 1), 9, "hunk at line 5 goes on past", true},
		{"bad hunk header", strings.Replace(modify("f", "a", "A"), "@@ -1,3 +1,3 @@", "@@ -1,x +1,3 @@", 1), 4, "invalid fragment header", false},
		{"hunk without changes", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n b\n", 4, "no added or deleted line", false},
		{"new file with old content", strings.Replace(createG, "@@ -0,0 +1 @@", "@@ -1 +1 @@\n-q", 1), 5, "new file depends on old contents", false},
		{"corrupt binary", "diff --git a/b b/b\nindex 1111111..2222222 100644\nGIT binary patch\nliteral 5\n!!!\n\n", 5, "binary patch", false},
		{"file diff that changes nothing", "diff --git a/f b/f\n" + createG, 1, "changes nothing", false},
		{"same file twice", modify("f", "a", "A") + "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n A\n-b\n+B\n c\n", 9, "(the first at line 1)", true},
		{"create then create", createG + strings.Replace(createG, "+z", "+y", 1), 7, "g is changed by two file diffs", true},
		{"create then delete", createG + deleteG, 7, "g is changed by two file diffs", true},
		{"rename onto a modified file", modify("h", "a", "A") + renameF, 9, "h is changed by two file diffs", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const path = "patches/k/0002-bad.diff"
			p, err := Parse(path, []byte(c.raw))
			var ie *diag.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("Parse() = %v, %v; want a *diag.InputError", p, err)
			}
			if ie.File != path || ie.Line != c.line || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("Parse() error = %q (line %d), want line %d and %q", err, ie.Line, c.line, c.msg)
			}
			want := path + ":"
			if c.line > 0 {
				want = fmt.Sprintf("%s:%d:", path, c.line)
			}
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Parse() error = %q, want it to start with %q", err, want)
			}

			_, _, gitErr := r.GitIn([]byte(c.raw), "apply", "--check", "-")
			if got := gitErr == nil; got != c.gitAccepts {
				t.Errorf("git apply --check accepts = %v, the test says %v (%v)", got, c.gitAccepts, gitErr)
			}
		})
	}
}

func TestParseMaxPatchSize(t *testing.T) {
	defer func(n int64) { MaxPatchSize = n }(MaxPatchSize)
	raw := []byte(modify("f", "a", "A"))
	MaxPatchSize = int64(len(raw))
	if _, err := Parse("p.diff", raw); err != nil {
		t.Fatalf("Parse() at the limit: error = %v", err)
	}
	MaxPatchSize = int64(len(raw)) - 1
	_, err := Parse("p.diff", raw)
	if !diag.IsInput(err) || !strings.Contains(err.Error(), "MaxPatchSize") {
		t.Errorf("Parse() over the limit: error = %v, want an InputError naming MaxPatchSize", err)
	}
}

// TestParseAccepts checks input that git apply takes and so must we.
func TestParseAccepts(t *testing.T) {
	r := gittest.New(t)
	r.Write("f", "a\nb\nc\n")
	r.Write("t", "a file\n")
	r.Commit("base")
	r.Symlink("t", "f")
	typeChange := r.Show(r.Commit("file to symlink"))
	if !strings.Contains(typeChange, "deleted file mode") || !strings.Contains(typeChange, "new file mode 120000") {
		t.Fatalf("type change diff is not a delete and a create:\n%s", typeChange)
	}
	r.Git("reset", "-q", "--hard", "HEAD~1")

	cases := []struct {
		name  string
		raw   string
		files int
		id    bool // a patch-id is expected
	}{
		{"delete then create", deleteF + createF, 2, true},
		{"rename away then create", renameF + createF, 2, true},
		{"type change from git", typeChange, 2, true},
		{"mode change only", "diff --git a/f b/f\nold mode 100644\nnew mode 100755\n", 1, true},
		{"format-patch signature", "Subject: x\n---\n f | 2 +-\n\n" + modify("f", "a", "A") + "-- \n2.39.5\n\n", 1, true},
		{"trailing blank lines", modify("f", "a", "A") + "\n\n", 1, true},
		{"traditional diff", "Subject: x\n\n--- f.orig\t2024-01-01\n+++ f\t2024-01-02\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n c\n", 1, false},
		{"CRLF", strings.ReplaceAll(modify("f", "a", "A"), "\n", "\r\n"), 1, true},
		{"no newline marker", "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n b\n-c\n+c\n\\ No newline at end of file\n", 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse("p.diff", []byte(c.raw))
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			if len(p.Files) != c.files {
				t.Errorf("Parse() Files = %d, want %d", len(p.Files), c.files)
			}
			if got := p.PatchID != ""; got != c.id {
				t.Errorf("Parse() PatchID = %q, want one: %v", p.PatchID, c.id)
			}
			if c.id {
				if want := gitPatchID(t, r.Dir, []byte(c.raw)); p.PatchID != want {
					t.Errorf("Parse() PatchID = %s, want %s", p.PatchID, want)
				}
			}
			checkHunkLines(t, p)
			if c.name == "CRLF" {
				return // git apply of a CRLF patch needs a CRLF file
			}
			if _, errOut, err := r.GitIn([]byte(c.raw), "apply", "--check", "-"); err != nil {
				t.Errorf("git apply --check rejects the input: %v\n%s", err, errOut)
			}
		})
	}
}

// checkHunkLines checks the HunkLine contract for every text fragment of p:
// the "@@" line is at HunkLine, and fragment line k is at HunkLine+1+k plus
// one for each earlier line without a newline.
func checkHunkLines(t *testing.T, p *Patch) {
	t.Helper()
	raw := strings.SplitAfter(string(p.Bytes()), "\n")
	n := 0
	for _, f := range p.Files {
		for _, frag := range f.TextFragments {
			n++
			at, ok := p.HunkLine[frag]
			if !ok || at < 1 || at > len(raw) {
				t.Errorf("HunkLine[%s] = %d, %v, want a line of the file", frag.Header(), at, ok)
				continue
			}
			if !strings.HasPrefix(raw[at-1], "@@ -") {
				t.Errorf("line %d = %q, want the @@ line of %s", at, raw[at-1], frag.Header())
			}
			ln := at + 1
			for k, l := range frag.Lines {
				want := l.Op.String() + l.Line
				if ln == len(raw) && raw[ln-1] == want {
					break // the last line of a file that ends without a newline
				}
				if !strings.HasSuffix(l.Line, "\n") {
					want += "\n"
				}
				if ln <= len(raw) && raw[ln-1] == "\n" && want == " \n" {
					want = "\n" // an empty context line, as GNU diff writes it
				}
				if ln > len(raw) || raw[ln-1] != want {
					got := ""
					if ln <= len(raw) {
						got = raw[ln-1]
					}
					t.Errorf("fragment %s line %d is line %d = %q, want %q", frag.Header(), k, ln, got, want)
					break
				}
				ln++
				if !strings.HasSuffix(l.Line, "\n") {
					if !isNoNewlineMarker(raw[ln-1]) {
						t.Errorf("line %d = %q, want a no-newline marker", ln, raw[ln-1])
					}
					ln++
				}
			}
		}
	}
	if len(p.HunkLine) != n {
		t.Errorf("HunkLine has %d entries, want %d", len(p.HunkLine), n)
	}
}

func TestHunkLine(t *testing.T) {
	r := gittest.New(t)
	long := lines(40, func(i int) string { return fmt.Sprintf("l%d", i) })
	r.Write("a.txt", long)
	r.Write("tail.txt", "x\ny\nlast")
	r.Write("mid.txt", "only line")
	r.Commit("base")
	r.Write("a.txt", strings.Replace(strings.Replace(long, "l2\n", "L2\n", 1), "l38\n", "", 1))
	r.Write("tail.txt", "x\nY\nlast\n")
	r.Write("mid.txt", "new line")
	r.Write("z.txt", "brand new\nno newline")
	c := r.Commit("Subject line\n\nbody")

	for _, args := range [][]string{
		{"show", "--format=", "--binary"},
		{"format-patch", "-1", "--stdout"},
		{"show", "-U0", "--format=email"},
	} {
		raw := r.Git(append(args, c)...) + "\n"
		t.Run(args[0]+strings.Join(args[1:2], ""), func(t *testing.T) {
			p, err := Parse("p.patch", []byte(raw))
			if err != nil {
				t.Fatalf("Parse() error = %v\n%s", err, raw)
			}
			if len(p.HunkLine) < 5 {
				t.Errorf("HunkLine has %d hunks, want at least 5", len(p.HunkLine))
			}
			checkHunkLines(t, p)
		})
	}

	// A hand-made case: a marker in the middle of a hunk, and known lines.
	raw := "Subject: x\n\n" + // lines 1-2
		"diff --git a/m b/m\n--- a/m\n+++ b/m\n" + // 3-5
		"@@ -1,2 +1,2 @@\n" + // 6
		" keep\n-old\n\\ No newline at end of file\n+new\n\\ No newline at end of file\n" + // 7-11
		"diff --git a/n b/n\n--- a/n\n+++ b/n\n" + // 12-14
		"@@ -1 +1 @@\n-1\n+2\n" + // 15-17
		"@@ -10 +10 @@\n-3\n+4\n" // 18-20
	p, err := Parse("p.diff", []byte(raw))
	if err != nil {
		t.Fatalf("Parse() error = %v", err)
	}
	var got []int
	for _, f := range p.Files {
		for _, frag := range f.TextFragments {
			got = append(got, p.HunkLine[frag])
		}
	}
	if want := []int{6, 15, 18}; !reflect.DeepEqual(got, want) {
		t.Errorf("HunkLine = %v, want %v", got, want)
	}
	checkHunkLines(t, p)
	if l := p.Files[0].TextFragments[0].Lines; len(l) != 3 || l[1] != (gitdiff.Line{Op: gitdiff.OpDelete, Line: "old"}) {
		t.Errorf("fragment lines = %q, want the middle line without newline", l)
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	gittest.WriteFiles(t, dir, files)
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a.diff":            modify("a", "a", "A"),
		"B.diff":            modify("b", "a", "B"),
		"10-x.patch":        modify("x10", "a", "X"),
		"9-x.patch":         modify("x9", "a", "X"),
		"README.md":         "not a patch\n",
		"series":            "a.diff\n",
		"notes.patch.txt":   "not a patch\n",
		".hidden.patch":     "ignored like a shell glob ignores it\n",
		"tests/x_test.go":   "package x\n",
		"tests/inner.patch": "not in the series\n",
		"dir.diff/x":        "a directory named like a patch\n",
	})
	if err := os.Symlink("a.diff", filepath.Join(dir, "link.patch")); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir, "patches/kubeovn")
	if err != nil {
		t.Fatalf("Load() error = %v", err)
	}
	var names, paths []string
	for _, p := range got {
		names = append(names, p.Name)
		paths = append(paths, p.Path)
	}
	wantNames := []string{"10-x.patch", "9-x.patch", "B.diff", "a.diff", "link.patch"}
	if !reflect.DeepEqual(names, wantNames) {
		t.Errorf("Load() names = %q, want %q", names, wantNames)
	}
	if paths[0] != "patches/kubeovn/10-x.patch" {
		t.Errorf("Load() Path = %q, want patches/kubeovn/10-x.patch", paths[0])
	}
}

func TestLoadEmptyAndErrors(t *testing.T) {
	empty := t.TempDir()
	writeFiles(t, empty, map[string]string{"tests/t.go": "package t\n"})
	got, err := Load(empty, "patches/e")
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("Load(no patches) = %v, %v; want an empty slice, no error", got, err)
	}

	bad := t.TempDir()
	writeFiles(t, bad, map[string]string{
		"0001-ok.diff":  modify("f", "a", "A"),
		"0002-bad.diff": "Subject: x\n\nOrigin: nowhere, x\n" + modify("g", "a", "A"),
	})
	dangling := t.TempDir()
	if err := os.Symlink("missing.diff", filepath.Join(dangling, "0001-x.diff")); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name, dir, display string
		file               string
		line               int
	}{
		{"missing dir", filepath.Join(empty, "nope"), "patches/nope", "patches/nope", 0},
		{"not a dir", filepath.Join(bad, "0001-ok.diff"), "patches/f", "patches/f", 0},
		{"bad patch", bad, "patches/bad", "patches/bad/0002-bad.diff", 3},
		{"dangling link", dangling, "patches/d", "patches/d/0001-x.diff", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(c.dir, c.display)
			var ie *diag.InputError
			if !errors.As(err, &ie) || ie.File != c.file || ie.Line != c.line {
				t.Errorf("Load() error = %v, want an InputError for %s line %d", err, c.file, c.line)
			}
		})
	}

	t.Run("too large", func(t *testing.T) {
		defer func(n int64) { MaxPatchSize = n }(MaxPatchSize)
		MaxPatchSize = 10
		_, err := Load(bad, "patches/bad")
		if !diag.IsInput(err) || !strings.Contains(err.Error(), "patches/bad/0001-ok.diff: patch is") {
			t.Errorf("Load() error = %v, want the size limit for 0001-ok.diff", err)
		}
	})
}
