package series

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// gitPatchID runs `git patch-id --stable` on input in dir and returns the
// first field of its first line, or "" when git prints nothing.
func gitPatchID(t *testing.T, dir string, input []byte) string {
	t.Helper()
	out, errOut, err := gittest.Run(dir, input, "patch-id", "--stable")
	if err != nil {
		t.Fatalf("git patch-id: %v\n%s", err, errOut)
	}
	first, _, _ := strings.Cut(out, "\n")
	id, _, _ := strings.Cut(first, " ")
	return id
}

// checkPatchID compares PatchID(input) with git's answer.
func checkPatchID(t *testing.T, dir string, input []byte) string {
	t.Helper()
	want := gitPatchID(t, dir, input)
	got, err := PatchID(input)
	if want == "" {
		if !errors.Is(err, ErrNoPatchID) {
			t.Errorf("PatchID() = %q, %v; git prints nothing, want ErrNoPatchID\ninput:\n%s", got, err, input)
		}
		return ""
	}
	if err != nil || got != want {
		t.Errorf("PatchID() = %q, %v, want %q (git patch-id --stable)\ninput:\n%s", got, err, want, input)
	}
	return got
}

func lines(n int, f func(i int) string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(f(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// binaryBlob is content git treats as binary (it holds NUL bytes).
func binaryBlob(seed int) string {
	r := rand.New(rand.NewPCG(uint64(seed), 7))
	b := make([]byte, 3000)
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	b[0] = 0
	return string(b)
}

// patchIDCase is a commit of every kind PatchID must read: change makes
// it, show are extra git show flags for it.
type patchIDCase struct {
	name   string
	change func()
	show   []string
}

// patchIDFixture is a repository and the changes of patchIDCase, to be
// committed in order on top of its base commit.
func patchIDFixture(t *testing.T) (*gittest.Repo, []patchIDCase) {
	t.Helper()
	r := gittest.New(t)
	base := lines(60, func(i int) string { return fmt.Sprintf("line %d", i) })
	r.Write("a.txt", base)
	r.Write("b.txt", "one\ntwo\nthree\n")
	r.Write("gone.txt", "to be deleted\n")
	r.Write("old/name.go", lines(20, func(i int) string { return fmt.Sprintf("func f%d() {}", i) }))
	r.Write("mode.sh", "#!/bin/sh\necho hi\n")
	r.Write("mode2.sh", "#!/bin/sh\necho two\n")
	r.Write("crlf.txt", "alpha\r\nbeta\r\ngamma\r\n")
	r.Write("ws.go", "func x() {\n\treturn 1\n}\n")
	r.Write("eof.txt", "no newline soon\nlast\n")
	r.Write("eof2.txt", "ends without newline")
	r.Write("bin.dat", binaryBlob(1))
	r.Write("typechange", "a file that becomes a link\n")
	r.Write("dir with space/ü file.txt", "quoted name\n")
	r.Commit("base")

	return r, []patchIDCase{
		{"modify one line", func() { r.Write("b.txt", "one\nTWO\nthree\n") }, nil},
		{"multi-hunk", func() {
			r.Write("a.txt", strings.Replace(strings.Replace(base, "line 3\n", "line three\n", 1), "line 55\n", "line 55\nline 55.5\n", 1))
		}, nil},
		{"multi-file", func() {
			r.Write("b.txt", "zero\none\nTWO\nthree\n")
			r.Write("a.txt", strings.Replace(base, "line 30\n", "", 1))
		}, nil},
		{"new file", func() { r.Write("new/file.txt", "brand\nnew\n") }, nil},
		{"new empty file", func() { r.Write("empty.txt", "") }, nil},
		{"delete", func() { r.Remove("gone.txt") }, nil},
		{"rename with edits", func() {
			r.Remove("old/name.go")
			r.Write("new/name.go", strings.Replace(lines(20, func(i int) string { return fmt.Sprintf("func f%d() {}", i) }), "f7()", "g7()", 1))
		}, []string{"-M"}},
		{"pure rename", func() {
			r.Git("mv", "b.txt", "c.txt")
		}, []string{"-M"}},
		{"mode change", func() { r.WriteMode("mode.sh", "#!/bin/sh\necho hi\n", 0o755) }, nil},
		{"mode change with edit", func() { r.WriteMode("mode2.sh", "#!/bin/sh\necho TWO\n", 0o755) }, nil},
		{"binary new file", func() { r.Write("new.bin", binaryBlob(2)) }, nil},
		{"binary modify", func() { r.Write("bin.dat", binaryBlob(3)) }, nil},
		{"binary and text", func() {
			r.Write("bin.dat", binaryBlob(4))
			r.Write("c.txt", "one\nTWO\nthree\nfour\n")
		}, nil},
		{"no newline at EOF removed", func() { r.Write("eof.txt", "no newline soon\nlast") }, nil},
		{"no newline at EOF added", func() { r.Write("eof2.txt", "ends without newline\n") }, nil},
		{"CRLF", func() { r.Write("crlf.txt", "alpha\r\nBETA\r\ngamma\r\n") }, nil},
		{"whitespace only", func() { r.Write("ws.go", "func x() {\n        return 1\n}\n") }, nil},
		{"symlink added", func() { r.Symlink("link", "a.txt") }, nil},
		{"type change file to symlink", func() { r.Symlink("typechange", "c.txt") }, nil},
		{"quoted names", func() { r.Write("dir with space/ü file.txt", "quoted name\nmore\n") }, nil},
		{"copy", func() {
			r.Write("copy.txt", base)
		}, []string{"-C", "--find-copies-harder"}},
	}
}

// TestPatchIDMatchesGit builds commits of every kind with the git CLI and
// checks PatchID against `git patch-id --stable` on several renderings of
// each: the bare diff, git show with its message, format-patch, and other
// context sizes.
func TestPatchIDMatchesGit(t *testing.T) {
	r, cases := patchIDFixture(t)
	seen := map[string]string{}
	for _, c := range cases {
		c.change()
		commit := r.Commit(c.name + "\n\nA body line.\n    indented body\n(cherry picked from commit 0123456789abcdef0123456789abcdef01234567)")
		t.Run(c.name, func(t *testing.T) {
			renderings := map[string][]string{
				"diff":         append([]string{"show", "--format=", "--binary"}, c.show...),
				"show":         append([]string{"show", "--binary"}, c.show...),
				"format-patch": append([]string{"format-patch", "-1", "--stdout", "--binary"}, c.show...),
				"full-index":   append([]string{"show", "--format=", "--binary", "--full-index"}, c.show...),
				"U1":           append([]string{"show", "--format=", "--binary", "-U1"}, c.show...),
				"U7":           append([]string{"show", "--format=", "--binary", "-U7"}, c.show...),
			}
			var diffID string
			for name, args := range renderings {
				out := r.Git(append(args, commit)...) + "\n"
				id := checkPatchID(t, r.Dir, []byte(out))
				if name == "diff" {
					diffID = id
				}
			}
			if diffID == "" {
				t.Fatalf("PatchID() of %s gave no id", c.name)
			}
			if prev, ok := seen[diffID]; ok {
				t.Errorf("PatchID() of %q = %s, the same as %q", c.name, diffID, prev)
			}
			seen[diffID] = c.name
		})
	}
}

// TestPatchIDShiftedLines checks that the same change made at other line
// numbers (so with other @@ lines) has the same patch-id, as in git.
func TestPatchIDShiftedLines(t *testing.T) {
	body := lines(30, func(i int) string { return fmt.Sprintf("row %d", i) })
	change := func(s string) string { return strings.Replace(s, "row 15\n", "row fifteen\n", 1) }

	r := gittest.New(t)
	r.Write("f.txt", body)
	r.Commit("base")
	r.Write("f.txt", change(body))
	orig := r.Show(r.Commit("change"))

	r.Git("checkout", "-q", "-b", "shifted", "HEAD~1")
	pad := lines(40, func(i int) string { return fmt.Sprintf("pad %d", i) })
	r.Write("f.txt", pad+body)
	r.Commit("pad")
	r.Write("f.txt", pad+change(body))
	shifted := r.Show(r.Commit("change again"))

	if orig == shifted {
		t.Fatalf("the two diffs are identical; the test needs shifted line numbers")
	}
	if !strings.Contains(shifted, "@@ -52,7 +52,7 @@") {
		t.Fatalf("shifted diff has unexpected hunk header:\n%s", shifted)
	}
	a := checkPatchID(t, r.Dir, []byte(orig))
	b := checkPatchID(t, r.Dir, []byte(shifted))
	if a != b {
		t.Errorf("PatchID(shifted) = %s, want %s (PatchID(original))", b, a)
	}
}

// TestPatchIDEdgeCases feeds hand-made input, including malformed input, to
// both PatchID and git.
func TestPatchIDEdgeCases(t *testing.T) {
	dir := t.TempDir()
	const simple = "diff --git a/f b/f\nindex 1111111..2222222 100644\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n"
	cases := []struct{ name, in string }{
		{"simple", simple},
		{"no final newline", strings.TrimSuffix(simple, "\n")},
		{"empty", ""},
		{"no diff line", "just text\nmore\n"},
		{"traditional diff", "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n"},
		{"commit message", "commit 0123456789abcdef0123456789abcdef01234567\nAuthor: x\n\n    msg\n\n" + simple},
		{"two patches", "From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001\n\n" + simple +
			"From 1123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001\n\n" + strings.Replace(simple, "+b", "+z", 1)},
		{"NUL in line", strings.Replace(simple, "+b", "+b\x00hidden", 1)},
		{"vertical tab and form feed", strings.Replace(simple, "+b", "+b\v\f x\t\r", 1)},
		{"negative count", strings.Replace(simple, "@@ -1,2 +1,2 @@", "@@ -1,-3 +1 @@", 1)},
		{"huge count", strings.Replace(simple, "@@ -1,2 +1,2 @@", "@@ -1,99999999999999999999 +1,4294967298 @@", 1)},
		{"bad hunk header", strings.Replace(simple, "@@ -1,2 +1,2 @@", "@@ -x +y @@", 1)},
		{"count too small", strings.Replace(simple, "@@ -1,2 +1,2 @@", "@@ -1 +1 @@", 1)},
		{"binary without index", "diff --git a/f b/f\nBinary files a/f and b/f differ\n"},
		{"binary then text", "diff --git a/f b/f\nindex 1111111..2222222 100644\nGIT binary patch\nliteral 1\nIc${}\n\nliteral 0\nHcmV?d00001\n\n" + strings.Replace(simple, "a/f b/f", "a/g b/g", 1)},
		{"index without mode", strings.Replace(simple, "index 1111111..2222222 100644", "index 1111111..2222222", 1) + "diff --git a/g b/g\nindex 3..4\nBinary files differ\n"},
		{"index without dots", "diff --git a/g b/g\nindex 34\nBinary files differ\n"},
		{"index dots at end", "diff --git a/g b/g\nindex 34..\nBinary files differ\n"},
		{"long index", "diff --git a/g b/g\nindex " + strings.Repeat("a", 70) + ".." + strings.Repeat("b", 70) + "\nBinary files differ\n"},
		{"no newline marker", strings.Replace(simple, " c\n", " c\n\\ No newline at end of file\n", 1)},
		{"short backslash line", strings.Replace(simple, " c\n", " c\n\\ x\n", 1)},
		{"signature", simple + "-- \n2.39.5\n\n"},
		{"hex line in hunk region", simple + "0123456789abcdef0123456789abcdef01234567\n" + simple},
		{"diff-tree line", "diff-tree 0123456789abcdef0123456789abcdef01234567\n" + simple},
		{"garbage between files", simple + "garbage\n" + strings.Replace(simple, "a/f b/f", "a/g b/g", 1)},
		{"non-alpha header line", "diff --git a/f b/f\n1 weird\n" + simple},
		{"8-bit line", strings.Replace(simple, "+b", "+b\xff\xfe", 1)},
		{"mode only", "diff --git a/f b/f\nold mode 100644\nnew mode 100755\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkPatchID(t, dir, []byte(c.in)) })
	}
}

// TestPatchIDMutations compares PatchID with git on random corruptions of a
// real diff: dropped, doubled and altered lines.
func TestPatchIDMutations(t *testing.T) {
	r := gittest.New(t)
	r.Write("a.txt", lines(40, func(i int) string { return fmt.Sprintf("line %d", i) }))
	r.Write("bin", binaryBlob(9))
	r.Commit("base")
	r.Write("a.txt", strings.Replace(lines(40, func(i int) string { return fmt.Sprintf("line %d", i) }), "line 5\n", "line five\n\tx\n", 1)+"tail")
	r.Write("bin", binaryBlob(10))
	r.Write("n.txt", "new\n")
	commit := r.Commit("change")
	diff := strings.SplitAfter(r.Git("show", "--binary", commit)+"\n", "\n")

	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"@@ -1,3 +1,4 @@\n", "diff --git a/x b/x\n", "--- a/x\n", " \n", "\n", "+\n", "-\n", "\\ No newline at end of file\n", "index 0..1\n", "Binary files differ\n"}
	for i := 0; i < 120; i++ {
		m := append([]string(nil), diff...)
		for n := rng.IntN(3) + 1; n > 0 && len(m) > 1; n-- {
			j := rng.IntN(len(m))
			switch rng.IntN(4) {
			case 0:
				m = append(m[:j], m[j+1:]...)
			case 1:
				m = append(m[:j+1], m[j:]...)
			case 2:
				m[j] = pieces[rng.IntN(len(pieces))]
			case 3:
				if len(m[j]) > 1 {
					k := rng.IntN(len(m[j]) - 1)
					m[j] = m[j][:k] + string(rune('!'+rng.IntN(90))) + m[j][k+1:]
				}
			}
		}
		checkPatchID(t, r.Dir, []byte(strings.Join(m, "")))
	}
}

func TestCAtoi(t *testing.T) {
	cases := []struct {
		in   string
		want int
	}{
		{"12 +", 12},
		{"-3", -3},
		{" \t+7x", 7},
		{"", 0},
		{"x", 0},
		{"4294967298", 2},
		{"99999999999999999999", -1},
		{"-99999999999999999999", 0},
	}
	for _, c := range cases {
		if got := cAtoi(c.in); got != c.want {
			t.Errorf("cAtoi(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}
