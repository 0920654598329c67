package series

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/tree"
)

func file(s string) *tree.File { return &tree.File{Mode: tree.Regular, Data: []byte(s)} }

func TestRenderDiffCases(t *testing.T) {
	tests := []struct {
		name string
		fc   FileChange
		want string
	}{
		{"modify", FileChange{Path: "f", Old: file("a\nb\nc\n"), New: file("a\nB\nc\n")},
			"diff --git a/f b/f\nindex " + abbrev([]byte("a\nb\nc\n")) + ".." + abbrev([]byte("a\nB\nc\n")) + " 100644\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"new", FileChange{Path: "n", New: file("x\n")},
			"diff --git a/n b/n\nnew file mode 100644\nindex 000000000000.." + abbrev([]byte("x\n")) + "\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+x\n"},
		{"delete", FileChange{Path: "d", Old: file("x\n")},
			"diff --git a/d b/d\ndeleted file mode 100644\nindex " + abbrev([]byte("x\n")) + "..000000000000\n--- a/d\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"},
		{"no newline", FileChange{Path: "f", Old: file("a"), New: file("a\n")},
			"diff --git a/f b/f\nindex " + abbrev([]byte("a")) + ".." + abbrev([]byte("a\n")) + " 100644\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n"},
		{"mode only", FileChange{Path: "x", Old: file("a\n"), New: &tree.File{Mode: tree.Executable, Data: []byte("a\n")}},
			"diff --git a/x b/x\nold mode 100644\nnew mode 100755\n"},
		{"empty new", FileChange{Path: "e", New: file("")},
			"diff --git a/e b/e\nnew file mode 100644\nindex 000000000000..e69de29bb2d1\n"},
		{"unchanged", FileChange{Path: "u", Old: file("a\n"), New: file("a\n")}, ""},
		{"quoted", FileChange{Path: "tab\there", New: file("x\n")},
			"diff --git \"a/tab\\there\" \"b/tab\\there\"\nnew file mode 100644\nindex 000000000000.." + abbrev([]byte("x\n")) + "\n--- /dev/null\n+++ \"b/tab\\there\"\n@@ -0,0 +1 @@\n+x\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(RenderDiff([]FileChange{tt.fc})); got != tt.want {
				t.Errorf("RenderDiff() =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestGroupHunksSplitsAtSevenLines(t *testing.T) {
	base := strings.Split(strings.TrimSuffix(numberedLines(20), "\n"), "\n")
	for _, gap := range []int{6, 7} {
		a := make([]string, len(base))
		copy(a, base)
		b := make([]string, len(base))
		copy(b, base)
		b[3], b[3+gap+1] = "X", "Y"
		want := 1
		if gap > 2*Context {
			want = 2
		}
		if got := len(groupHunks(DiffLines(a, b), len(a), len(b))); got != want {
			t.Errorf("gap %d: %d hunks, want %d", gap, got, want)
		}
	}
}

func numberedLines(n int) string { return gittest.Numbered("line %d", n) }

// mutate returns a random edit of s: lines replaced, inserted, deleted, and
// sometimes the last newline removed or added.
func mutate(r *rand.Rand, s []string) []string {
	out := append([]string(nil), s...)
	for k := r.Intn(6); k >= 0; k-- {
		i := r.Intn(len(out) + 1)
		switch r.Intn(3) {
		case 0:
			out = append(out[:i], append([]string{fmt.Sprintf("new %d\n", r.Intn(5))}, out[i:]...)...)
		case 1:
			if i < len(out) {
				out = append(out[:i], out[i+1:]...)
			}
		case 2:
			if i < len(out) {
				out[i] = fmt.Sprintf("changed %d\n", r.Intn(3))
			}
		}
	}
	if len(out) > 0 && r.Intn(8) == 0 {
		out[len(out)-1] = strings.TrimSuffix(out[len(out)-1], "\n")
	}
	return out
}

// TestRenderGitApplyOracle renders random changes of many files into one
// patch and checks that git apply turns the old files into the new ones, and
// that rendering the parsed patch's change again gives the same text.
func TestRenderGitApplyOracle(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	repo := gittest.New(t)
	var fcs []FileChange
	want := map[string]string{}
	for i := 0; i < 150; i++ {
		n := r.Intn(40)
		var old []string
		for j := 0; j < n; j++ {
			old = append(old, fmt.Sprintf("l%d\n", r.Intn(8)))
		}
		path := fmt.Sprintf("f%03d.txt", i)
		oldText := strings.Join(old, "")
		newText := strings.Join(mutate(r, old), "")
		if oldText == newText {
			continue
		}
		repo.Write(path, oldText)
		want[path] = newText
		fcs = append(fcs, FileChange{Path: path, Old: file(oldText), New: file(newText)})
	}
	repo.Commit("base")
	patch := RenderDiff(fcs)
	pf := filepath.Join(t.TempDir(), "p.diff")
	if err := os.WriteFile(pf, patch, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, err := repo.GitIn(nil, "apply", "--whitespace=nowarn", pf); err != nil {
		t.Fatalf("git apply: %v\n%s", err, errOut)
	}
	for path, w := range want {
		if got := repo.Read(path); got != w {
			t.Errorf("%s after git apply = %q, want %q", path, got, w)
		}
	}
	p, err := Parse("p.diff", patch)
	if err != nil {
		t.Fatalf("Parse(rendered) = %v", err)
	}
	if len(p.Files) != len(fcs) {
		t.Fatalf("Parse(rendered): %d files, want %d", len(p.Files), len(fcs))
	}
}

// TestRenderFuncContextGitOracle: the function context after a canonical
// hunk's "@@" is the one `git diff` writes without a diff driver, for
// random Go-like files (func lines, indented bodies, blank lines, long
// lines), on every hunk whose ranges git and patchkit agree on.
func TestRenderFuncContextGitOracle(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	repo := gittest.New(t)
	lineOf := func() string {
		switch r.Intn(6) {
		case 0:
			return fmt.Sprintf("func f%d() {  \n", r.Intn(5))
		case 1:
			return "}\n"
		case 2:
			return "\n"
		case 3:
			return "$var" + strings.Repeat("x", r.Intn(100)) + "\n"
		}
		return fmt.Sprintf("\tx := %d\n", r.Intn(4))
	}
	type pair struct{ old, new string }
	files := map[string]pair{}
	for i := 0; i < 80; i++ {
		var old []string
		for j := 0; j < 10+r.Intn(50); j++ {
			old = append(old, lineOf())
		}
		nw := append([]string(nil), old...)
		for k := 0; k < 1+r.Intn(3); k++ {
			j := r.Intn(len(nw))
			nw[j] = fmt.Sprintf("\tchanged %d\n", r.Intn(100))
		}
		path := fmt.Sprintf("f%03d.go", i)
		files[path] = pair{strings.Join(old, ""), strings.Join(nw, "")}
		repo.Write(path, files[path].old)
	}
	repo.Commit("base")
	compared := 0
	for path, p := range files {
		repo.Write(path, p.new)
		gitOut := repo.Git("diff", "--no-color", "--no-ext-diff", "--", path)
		ours := string(RenderDiff([]FileChange{{Path: path, Old: file(p.old), New: file(p.new)}}))
		gitHeads := map[string]string{}
		for _, l := range strings.Split(gitOut, "\n") {
			if h, ok := hunkHead([]byte(l)); ok {
				gitHeads[string(h)] = l
			}
		}
		for _, l := range strings.Split(ours, "\n") {
			h, ok := hunkHead([]byte(l))
			if !ok {
				continue
			}
			if g, ok := gitHeads[string(h)]; ok {
				compared++
				if g != l {
					t.Errorf("%s: hunk header %q, git diff writes %q", path, l, g)
				}
			}
		}
		repo.Write(path, p.old)
	}
	if compared < 50 {
		t.Fatalf("only %d hunk headers compared with git's", compared)
	}
}

func TestSameButFuncContext(t *testing.T) {
	a := []byte("diff --git a/x b/x\n@@ -1,3 +1,3 @@ func a() {\n x\n-y\n+z\n")
	for _, tc := range []struct {
		b    string
		want bool
	}{
		{"diff --git a/x b/x\n@@ -1,3 +1,3 @@\n x\n-y\n+z\n", true},
		{"diff --git a/x b/x\n@@ -1,3 +1,3 @@ func (s *S) a() {\n x\n-y\n+z\n", true},
		{"diff --git a/x b/x\n@@ -1,3 +1,4 @@\n x\n-y\n+z\n", false},
		{"diff --git a/x b/x\n@@ -1,3 +1,3 @@\n x\n-y\n+w\n", false},
	} {
		if got := SameButFuncContext(a, []byte(tc.b)); got != tc.want {
			t.Errorf("SameButFuncContext(%q) = %v, want %v", tc.b, got, tc.want)
		}
	}
}
