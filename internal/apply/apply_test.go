package apply

import (
	"errors"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/tree"
)

func file(s string) *tree.File { return &tree.File{Mode: tree.Regular, Data: []byte(s)} }

func mustApply(t *testing.T, a *Applier, p *series.Patch) PatchResult {
	t.Helper()
	res := a.Apply(p)
	if res.Status != StatusApplied {
		t.Fatalf("Apply(%s) = %s, %+v, want applied", p.Path, res.Status, res.Errors)
	}
	return res
}

const conflictPatch = `Subject: change line 5

diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -2,7 +2,7 @@ section
 line 2
 line 3
 line 4
-line 5
+five
 line 6
 line 7
 line 8
`

func TestConflictProblem(t *testing.T) {
	// The tree changed line 4 under the patch, and has three more lines on
	// top: the best place for the hunk is line 5, where 6 of 7 lines match.
	base := tree.Map{"a.txt": file("new 1\nnew 2\nnew 3\n" + setLine(num(1, 12), 4, "line four"))}
	p := parsePatchForTest(t, "patches/0001-five.patch", []byte(conflictPatch))
	res := New(base).Apply(p)
	if res.Status != StatusFailed || len(res.Errors) != 1 {
		t.Fatalf("Apply() = %s %+v, want one problem", res.Status, res.Errors)
	}
	got := res.Errors[0]
	want := Problem{
		Kind:     KindConflict,
		File:     "patches/0001-five.patch",
		Line:     6,
		Path:     "a.txt",
		Hunk:     "@@ -2,7 +2,7 @@ section",
		Expected: []string{"line 2", "line 3", "line 4", "line 5", "line 6", "line 7", "line 8"},
		Actual:   []string{"line 2", "line 3", "line four", "line 5", "line 6", "line 7", "line 8"},
		NearLine: 5,
	}
	if !strings.Contains(got.Message, "best match at line 5 (6 of 7 lines equal)") {
		t.Errorf("Message = %q, want it to name the best match", got.Message)
	}
	got.Message = ""
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Apply() problem =\n%+v\nwant\n%+v", got, want)
	}
}

func TestConflictProblemNothingAlike(t *testing.T) {
	base := tree.Map{"a.txt": file("x\ny\n")}
	p := parsePatchForTest(t, "p.patch", []byte(conflictPatch))
	res := New(base).Apply(p)
	if len(res.Errors) != 1 {
		t.Fatalf("Apply() = %+v, want one problem", res.Errors)
	}
	e := res.Errors[0]
	if e.Kind != KindConflict || e.NearLine != 1 || !reflect.DeepEqual(e.Actual, []string{"x", "y"}) {
		t.Errorf("Apply() problem = %+v, want conflict near line 1 showing x, y", e)
	}
}

func TestHunkOffsets(t *testing.T) {
	patch := `diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -9,3 +9,3 @@
 line 9
-line 10
+ten
 line 11
@@ -29,3 +29,3 @@
 line 29
-line 30
+thirty
 line 31
`
	// Three lines more on top, and five lines fewer between the hunks.
	content := deleteLines(insertAt(num(1, 40), 1, "a\nb\nc\n"), 18, 5)
	base := tree.Map{"a.txt": file(content)}
	a := New(base)
	res := mustApply(t, a, parsePatchForTest(t, "p.patch", []byte(patch)))
	var offsets []int
	for _, h := range res.Hunks {
		offsets = append(offsets, h.Offset)
	}
	if !reflect.DeepEqual(offsets, []int{3, -2}) {
		t.Errorf("hunk offsets = %v, want [3 -2]", offsets)
	}
	if res.Hunks[0].Path != "a.txt" || res.Hunks[1].Hunk != "@@ -29,3 +29,3 @@" {
		t.Errorf("hunks = %+v", res.Hunks)
	}
	f, ok, err := a.Read("a.txt")
	want := strings.Replace(strings.Replace(content, "line 10\n", "ten\n", 1), "line 30\n", "thirty\n", 1)
	if err != nil || !ok || string(f.Data) != want {
		t.Errorf("Read(a.txt) = %q, %v, %v; want %q", f.Data, ok, err, want)
	}
}

func TestUnsafe(t *testing.T) {
	base := tree.Map{
		"dir/a.txt": file("x\n"),
		"link":      {Mode: tree.Symlink, Data: []byte("dir")},
		"out":       {Mode: tree.Symlink, Data: []byte("/etc")},
		"a.txt":     file("a\n"),
	}
	tests := []struct {
		name  string
		patch string
		path  string
	}{
		{"absolute rename target", "diff --git a/a.txt b/x\nsimilarity index 100%\nrename from a.txt\nrename to /etc/passwd\n", "/etc/passwd"},
		{"dot-dot new file", "diff --git a/../x b/../x\nnew file mode 100644\n--- /dev/null\n+++ b/../x\n@@ -0,0 +1 @@\n+x\n", "../x"},
		{"dot-dot inside", "diff --git a/dir/../../x b/dir/../../x\nnew file mode 100644\n--- /dev/null\n+++ b/dir/../../x\n@@ -0,0 +1 @@\n+x\n", "dir/../../x"},
		{".git target", "diff --git a/.git/hooks/pre-commit b/.git/hooks/pre-commit\nnew file mode 100755\n--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+evil\n", ".git/hooks/pre-commit"},
		{".GIT target", "diff --git a/sub/.GIT/config b/sub/.GIT/config\nnew file mode 100644\n--- /dev/null\n+++ b/sub/.GIT/config\n@@ -0,0 +1 @@\n+evil\n", "sub/.GIT/config"},
		{"copy from outside", "diff --git a/x b/y\nsimilarity index 100%\ncopy from ../../etc/passwd\ncopy to y\n", "../../etc/passwd"},
		{"create through symlink", "diff --git a/link/new b/link/new\nnew file mode 100644\n--- /dev/null\n+++ b/link/new\n@@ -0,0 +1 @@\n+x\n", "link/new"},
		{"create through symlink out of the tree", "diff --git a/out/passwd b/out/passwd\nnew file mode 100644\n--- /dev/null\n+++ b/out/passwd\n@@ -0,0 +1 @@\n+x\n", "out/passwd"},
		{"modify through symlink", "diff --git a/link/a.txt b/link/a.txt\n--- a/link/a.txt\n+++ b/link/a.txt\n@@ -1 +1 @@\n-x\n+y\n", "link/a.txt"},
		{"delete through symlink", "diff --git a/link/a.txt b/link/a.txt\ndeleted file mode 100644\n--- a/link/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n", "link/a.txt"},
		{"regular file over symlink", "diff --git a/link b/link\nnew file mode 100644\n--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n+x\n", "link"},
		{"symlink made then written through", "diff --git a/l2 b/l2\nnew file mode 120000\n--- /dev/null\n+++ b/l2\n@@ -0,0 +1 @@\n+/etc\n\\ No newline at end of file\ndiff --git a/l2/passwd b/l2/passwd\nnew file mode 100644\n--- /dev/null\n+++ b/l2/passwd\n@@ -0,0 +1 @@\n+x\n", "l2/passwd"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := New(base)
			res := a.Apply(parsePatchForTest(t, "p.patch", []byte(tc.patch)))
			if res.Status != StatusFailed {
				t.Fatalf("Apply() = %s, want failed", res.Status)
			}
			var kinds []string
			found := false
			for _, e := range res.Errors {
				kinds = append(kinds, e.Kind+" "+e.Path+": "+e.Message)
				if e.Kind == KindUnsafe && e.Path == tc.path {
					found = true
				}
			}
			if !found {
				t.Errorf("Apply() problems = %q, want an unsafe problem for %q", kinds, tc.path)
			}
			if len(a.Changes()) != 0 {
				t.Errorf("Changes() = %v after a failed patch, want none", a.Changes())
			}
		})
	}
}

func TestSymlinkReplacedInSamePatch(t *testing.T) {
	// A type change deletes the symlink first: then the regular file is fine.
	base := tree.Map{"thing": {Mode: tree.Symlink, Data: []byte("/etc")}}
	patch := "diff --git a/thing b/thing\ndeleted file mode 120000\n--- a/thing\n+++ /dev/null\n@@ -1 +0,0 @@\n-/etc\n\\ No newline at end of file\n" +
		"diff --git a/thing b/thing\nnew file mode 100644\n--- /dev/null\n+++ b/thing\n@@ -0,0 +1 @@\n+plain\n"
	a := New(base)
	mustApply(t, a, parsePatchForTest(t, "p.patch", []byte(patch)))
	f, ok, _ := a.Read("thing")
	if !ok || f.Mode != tree.Regular || string(f.Data) != "plain\n" {
		t.Errorf("Read(thing) = %+v, %v; want a regular file", f, ok)
	}
}

func TestAtomic(t *testing.T) {
	base := tree.Map{"a.txt": file(num(1, 10)), "b.txt": file(num(1, 10))}
	patch := `diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -1,3 +1,3 @@
-line 1
+one
 line 2
 line 3
diff --git a/new.txt b/new.txt
new file mode 100644
--- /dev/null
+++ b/new.txt
@@ -0,0 +1 @@
+new
diff --git a/b.txt b/b.txt
--- a/b.txt
+++ b/b.txt
@@ -1,3 +1,3 @@
-not there
+one
 line 2
 line 3
`
	a := New(base)
	res := a.Apply(parsePatchForTest(t, "p.patch", []byte(patch)))
	if res.Status != StatusFailed || len(res.Errors) != 1 || res.Errors[0].Path != "b.txt" {
		t.Fatalf("Apply() = %s %+v, want one conflict in b.txt", res.Status, res.Errors)
	}
	if c := a.Changes(); len(c) != 0 {
		t.Errorf("Changes() = %v, want none", c)
	}
	for _, p := range []string{"a.txt", "b.txt"} {
		f, ok, err := a.Read(p)
		if err != nil || !ok || string(f.Data) != num(1, 10) {
			t.Errorf("Read(%s) = %q, %v, %v; want it unchanged", p, f.Data, ok, err)
		}
	}
	if _, ok, _ := a.Read("new.txt"); ok {
		t.Errorf("Read(new.txt) found a file from a failed patch")
	}
}

func TestSeriesContinuesAfterFailure(t *testing.T) {
	base := tree.Map{"a.txt": file(num(1, 10))}
	p1 := parsePatchForTest(t, "0001.patch", []byte(`diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -1,2 +1,2 @@
-line 0
+zero
 line 1
`))
	p2 := parsePatchForTest(t, "0002.patch", []byte(`diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -4,3 +4,3 @@
 line 4
-line 5
+five
 line 6
`))
	// p3 needs p1's change: it fails too, on the state without p1.
	p3 := parsePatchForTest(t, "0003.patch", []byte(`diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -1,2 +1,2 @@
 zero
-line 1
+one
`))
	p4 := parsePatchForTest(t, "0004.patch", []byte(`diff --git a/b.txt b/b.txt
new file mode 100644
--- /dev/null
+++ b/b.txt
@@ -0,0 +1 @@
+b
`))
	res := Series(base, []*series.Patch{p1, p2, p3, p4})
	var statuses []string
	for _, pr := range res.Patches {
		statuses = append(statuses, pr.Name+" "+pr.Status)
	}
	want := []string{"0001.patch failed", "0002.patch applied", "0003.patch failed", "0004.patch applied"}
	if res.OK || !reflect.DeepEqual(statuses, want) {
		t.Fatalf("Series() OK = %v, %q; want false, %q", res.OK, statuses, want)
	}
	if got := string(res.Changes["a.txt"].Data); got != setLine(num(1, 10), 5, "five") {
		t.Errorf("a.txt = %q, want patch 2 only", got)
	}
	if res.Changes["b.txt"] == nil {
		t.Errorf("Changes lacks b.txt from patch 4")
	}
}

func TestWhitespaceProblems(t *testing.T) {
	patch := "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,5 @@\n a\n+b \n+ \tc\n b\n+\n"
	base := tree.Map{"a.txt": file("a\nb\n")}
	p := parsePatchForTest(t, "p.patch", []byte(patch))
	res := New(base).Apply(p)
	var got []string
	for _, e := range res.Errors {
		if e.Kind != KindWhitespace || e.File != "p.patch" || e.Path != "a.txt" {
			t.Errorf("problem %+v, want a whitespace problem of p.patch for a.txt", e)
		}
		got = append(got, strings.Join([]string{strconv.Itoa(e.Line), e.Message}, ": "))
	}
	sort.Strings(got)
	want := []string{"6: trailing whitespace", "7: space before tab in indent", "9: new blank line at EOF"}
	if res.Status != StatusFailed || !reflect.DeepEqual(got, want) {
		t.Errorf("Apply() = %s %q, want failed %q", res.Status, got, want)
	}

	a := New(base, WithoutWhitespaceCheck())
	mustApply(t, a, p)
	if f, _, _ := a.Read("a.txt"); string(f.Data) != "a\nb \n \tc\nb\n\n" {
		t.Errorf("a.txt = %q", f.Data)
	}
}

func TestReverse(t *testing.T) {
	patch := "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
	p := parsePatchForTest(t, "p.patch", []byte(patch))
	a := New(tree.Map{"a.txt": file("a\nB\nc\n")}, WithReverse())
	mustApply(t, a, p)
	if f, _, _ := a.Read("a.txt"); string(f.Data) != "a\nb\nc\n" {
		t.Errorf("a.txt = %q, want the patch undone", f.Data)
	}
	// Not applied: reversing fails.
	res := New(tree.Map{"a.txt": file("a\nb\nc\n")}, WithReverse()).Apply(p)
	if res.Status != StatusFailed || res.Errors[0].Kind != KindConflict {
		t.Errorf("Apply() = %s %+v, want a conflict", res.Status, res.Errors)
	}
}

func TestStateAsSource(t *testing.T) {
	base := tree.Map{"d/a.txt": file("a\n"), "d/b.txt": file("b\n"), "keep.txt": file("k\n")}
	patch := `diff --git a/d/a.txt b/d/a.txt
deleted file mode 100644
--- a/d/a.txt
+++ /dev/null
@@ -1 +0,0 @@
-a
diff --git a/d/b.txt b/d/b.txt
deleted file mode 100644
--- a/d/b.txt
+++ /dev/null
@@ -1 +0,0 @@
-b
diff --git a/e/f/new.txt b/e/f/new.txt
new file mode 100755
--- /dev/null
+++ b/e/f/new.txt
@@ -0,0 +1 @@
+new
`
	a := New(base)
	mustApply(t, a, parsePatchForTest(t, "p.patch", []byte(patch)))
	var _ tree.Source = a
	for _, tc := range []struct {
		path string
		dir  bool
	}{{"d", false}, {"e", true}, {"e/f", true}, {"keep.txt", false}, {"x", false}} {
		if got, err := a.IsDir(tc.path); err != nil || got != tc.dir {
			t.Errorf("IsDir(%q) = %v, %v; want %v", tc.path, got, err, tc.dir)
		}
	}
	if _, ok, _ := a.Read("d/a.txt"); ok {
		t.Errorf("Read(d/a.txt) found a deleted file")
	}
	if f, ok, _ := a.Read("e/f/new.txt"); !ok || f.Mode != tree.Executable {
		t.Errorf("Read(e/f/new.txt) = %+v, %v; want an executable", f, ok)
	}
	c := a.Changes()
	if len(c) != 3 || c["d/a.txt"] != nil || c["e/f/new.txt"] == nil {
		t.Errorf("Changes() = %v", c)
	}
	// A later patch may create a file where the emptied directory was.
	mustApply(t, a, parsePatchForTest(t, "p2.patch", []byte("diff --git a/d b/d\nnew file mode 100644\n--- /dev/null\n+++ b/d\n@@ -0,0 +1 @@\n+d\n")))
}

// countingSource records which paths are read.
type countingSource struct {
	tree.Map
	reads map[string]int
	err   error
}

func (c *countingSource) Read(p string) (*tree.File, bool, error) {
	c.reads[p]++
	if c.err != nil {
		return nil, false, c.err
	}
	return c.Map.Read(p)
}

func TestReadsOnlyTouchedFiles(t *testing.T) {
	m := tree.Map{}
	for i := range 200 {
		m["pkg/f"+strconv.Itoa(i)+".go"] = file(num(1, 30))
	}
	src := &countingSource{Map: m, reads: map[string]int{}}
	patch := "diff --git a/pkg/f7.go b/pkg/f7.go\n--- a/pkg/f7.go\n+++ b/pkg/f7.go\n@@ -1,2 +1,2 @@\n-line 1\n+one\n line 2\n"
	mustApply(t, New(src), parsePatchForTest(t, "p.patch", []byte(patch)))
	for p := range src.reads {
		if p != "pkg/f7.go" && p != "pkg" {
			t.Errorf("read %s, which the patch does not touch", p)
		}
	}
}

func TestReadError(t *testing.T) {
	boom := errors.New("boom")
	src := &countingSource{Map: tree.Map{}, reads: map[string]int{}, err: boom}
	patch := "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n"
	res := Series(src, []*series.Patch{parsePatchForTest(t, "p.patch", []byte(patch))})
	if res.OK || !errors.Is(res.Err, boom) || !errors.Is(res.Patches[0].Err, boom) {
		t.Fatalf("Series() = %v, %v; want a failure wrapping the read error", res.OK, res.Err)
	}
	if k := res.Patches[0].Errors[0].Kind; k != KindRead {
		t.Errorf("problem kind = %s, want %s", k, KindRead)
	}
}

func TestBinaryProblems(t *testing.T) {
	tests := []struct {
		name, patch, want string
	}{
		{"no data", "diff --git a/b.bin b/b.bin\nindex 1234567..89abcde 100644\nBinary files a/b.bin and b/b.bin differ\n", "without full index line"},
		{"full index but no data", "diff --git a/b.bin b/b.bin\nindex e69de29bb2d1d6434b8b29ae775ad8c2e48c5391..89abcde89abcde89abcde89abcde89abcde89abc 100644\nBinary files a/b.bin and b/b.bin differ\n", "missing binary patch data"},
		{"wrong preimage", "diff --git a/b.bin b/b.bin\nindex 89abcde89abcde89abcde89abcde89abcde89abc..e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 100644\nBinary files a/b.bin and b/b.bin differ\n", "does not match the current contents"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := New(tree.Map{"b.bin": file("")}).Apply(parsePatchForTest(t, "p.patch", []byte(tc.patch)))
			if res.Status != StatusFailed || res.Errors[0].Kind != KindBinary || !strings.Contains(res.Errors[0].Message, tc.want) {
				t.Errorf("Apply() = %s %+v, want a binary problem saying %q", res.Status, res.Errors, tc.want)
			}
		})
	}
}

func TestCorruptAndEmpty(t *testing.T) {
	a := New(nil)
	if res := a.Apply(nil); res.Status != StatusFailed {
		t.Errorf("Apply(nil) = %s, want failed", res.Status)
	}
	res := a.Apply(parsePatchForTest(t, "p.patch", []byte("just a description\n")))
	if res.Status != StatusFailed || res.Errors[0].Kind != KindCorrupt {
		t.Errorf("Apply(no diffs) = %s %+v, want a corrupt problem", res.Status, res.Errors)
	}
	if res.Errors == nil {
		t.Errorf("Errors is nil, want an empty slice")
	}
	ok := a.Apply(parsePatchForTest(t, "p.patch", []byte("diff --git a/x b/x\nnew file mode 100644\n--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+x\n")))
	if ok.Errors == nil || len(ok.Errors) != 0 {
		t.Errorf("Errors = %#v, want an empty, non-nil slice", ok.Errors)
	}
}

func TestRemovalLeavesContents(t *testing.T) {
	patch := "diff --git a/e.txt b/e.txt\ndeleted file mode 100644\nindex e69de29..0000000\n"
	res := New(tree.Map{"e.txt": file("not empty\n")}).Apply(parsePatchForTest(t, "p.patch", []byte(patch)))
	if res.Status != StatusFailed || len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Message, "removal patch leaves file contents") || res.Errors[0].Line != 1 {
		t.Errorf("Apply() = %s %+v, want a removal problem at line 1", res.Status, res.Errors)
	}
}

func TestBinaryRoundTrip(t *testing.T) {
	// git diff --binary of b.bin from "ab\0cd" to "ab\0cdef\0gh".
	patch := "diff --git a/b.bin b/b.bin\nindex 735a95829dd77133742c0416d45e0e0de7153ef6..b2b70d3c7bca986fe443c3d1dca325ba3cc33839 100644\nGIT binary patch\nliteral 10\nRcmYdHVn|L&O=C#U000ph10?_e\n\nliteral 5\nMcmYdHVn|K_00f)?ivR!s\n\n"
	p := parsePatchForTest(t, "p.patch", []byte(patch))
	a := New(tree.Map{"b.bin": file("ab\x00cd")})
	mustApply(t, a, p)
	if f, _, _ := a.Read("b.bin"); string(f.Data) != "ab\x00cdef\x00gh" {
		t.Fatalf("b.bin = %q", f.Data)
	}
	r := New(a, WithReverse())
	mustApply(t, r, p)
	if f, _, _ := r.Read("b.bin"); string(f.Data) != "ab\x00cd" {
		t.Errorf("b.bin after reverse = %q", f.Data)
	}
}
