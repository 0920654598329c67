package apply

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/tree"
)

type buildFunc = func(t *testing.T, r *gittest.Repo) (tree.Map, []string)

// simple makes a patch that turns before into after at path, and a base
// tree where path holds base.
func simple(path, before, after, base string, formatArgs ...string) buildFunc {
	return func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
		if before != "\x00" {
			r.Write(path, before)
		}
		r.Commit("before")
		if after == "\x00" {
			r.Remove(path)
		} else {
			r.Write(path, after)
		}
		p := commitPatch(t, r, formatArgs...)
		if base == "\x00" {
			r.Remove(path)
		} else {
			r.Write(path, base)
		}
		return snap(t, r.Dir), []string{p}
	}
}

// absent marks a missing file for simple.
const absent = "\x00"

// hand returns a base tree made by setup and hand-written patches.
func hand(setup func(r *gittest.Repo), patches ...string) buildFunc {
	return func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
		setup(r)
		return snap(t, r.Dir), patches
	}
}

// binaryData returns n pseudo-random bytes with a NUL, so git sees binary.
func binaryData(seed int64, n int) string {
	rng := rand.New(rand.NewSource(seed))
	b := make([]byte, n)
	rng.Read(b)
	b[0] = 0
	return string(b)
}

func parityCases() []parityCase {
	ten := num(1, 10)
	twenty := num(1, 20)
	return []parityCase{
		{name: "clean apply", build: simple("a.txt", ten, setLine(ten, 5, "five"), ten)},
		{name: "offset down", build: simple("a.txt", twenty, setLine(twenty, 10, "ten"), insertAt(twenty, 1, "x\ny\nz\n"))},
		{name: "offset up", build: simple("a.txt", twenty, setLine(twenty, 10, "ten"), deleteLines(twenty, 1, 3))},
		{name: "several hunks with offsets", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			before := num(1, 60)
			after := setLine(setLine(setLine(before, 10, "ten"), 30, "thirty"), 50, "fifty")
			r.Write("a.txt", before)
			r.Commit("before")
			r.Write("a.txt", after)
			p := commitPatch(t, r)
			r.Write("a.txt", deleteLines(insertAt(before, 1, "top 1\ntop 2\n"), 42, 1))
			return snap(t, r.Dir), []string{p}
		}},
		{name: "exact place beats earlier duplicate", build: func() buildFunc {
			block := "a\nb\nc\nd\ne\n"
			before := block + num(1, 5) + block + num(6, 8)
			after := block + num(1, 5) + strings.Replace(block, "c\n", "C\n", 1) + num(6, 8)
			return simple("a.txt", before, after, before)
		}()},
		{name: "nearest match forward first", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			block := "k1\nk2\nk3\nk4\nk5\nk6\nk7\n"
			before := num(1, 10) + block + num(11, 20)
			r.Write("a.txt", before)
			r.Commit("before")
			r.Write("a.txt", strings.Replace(before, "k4\n", "K4\n", 1))
			p := commitPatch(t, r)
			r.Write("a.txt", num(1, 7)+block+"middle\n"+block+num(11, 20))
			return snap(t, r.Dir), []string{p}
		}},
		{name: "context mismatch", build: simple("a.txt", ten, setLine(ten, 5, "five"), setLine(ten, 4, "changed"))},
		{name: "removed line mismatch", build: simple("a.txt", ten, setLine(ten, 5, "five"), setLine(ten, 5, "other"))},
		{name: "new file", build: simple("new.txt", absent, "hello\nworld\n", absent)},
		{name: "new file that already exists", build: simple("new.txt", absent, "hello\n", "already\n")},
		{name: "new file in new directory", build: simple("d/e/new.txt", absent, "hello\n", absent)},
		{name: "delete", build: simple("a.txt", ten, absent, ten)},
		{name: "delete with wrong content", build: simple("a.txt", ten, absent, setLine(ten, 3, "x"))},
		{name: "delete with extra content", build: simple("a.txt", ten, absent, ten+"more\n")},
		{name: "delete missing file", build: simple("a.txt", ten, absent, absent)},
		{name: "modify missing file", build: simple("a.txt", ten, setLine(ten, 2, "two"), absent)},
		{name: "rename", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("old.txt", twenty)
			r.Commit("before")
			base := snap(t, r.Dir)
			r.Remove("old.txt")
			r.Write("sub/new.txt", twenty)
			return base, []string{commitPatch(t, r, "-M")}
		}},
		{name: "rename with edits", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("old.txt", twenty)
			r.Commit("before")
			r.Remove("old.txt")
			r.Write("new.txt", setLine(twenty, 7, "seven"))
			p := commitPatch(t, r, "-M")
			r.Remove("new.txt")
			r.Write("old.txt", insertAt(twenty, 1, "top\n"))
			return snap(t, r.Dir), []string{p}
		}},
		{name: "rename onto existing file", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("old.txt", twenty)
			r.Commit("before")
			r.Remove("old.txt")
			r.Write("new.txt", twenty)
			p := commitPatch(t, r, "-M")
			r.Write("old.txt", twenty)
			r.Write("new.txt", "in the way\n")
			return snap(t, r.Dir), []string{p}
		}},
		{name: "copy", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("src.txt", twenty)
			r.Commit("before")
			base := snap(t, r.Dir)
			r.Write("copy.txt", setLine(twenty, 3, "three"))
			return base, []string{commitPatch(t, r, "-C", "-C")}
		}},
		{name: "mode +x", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("run.sh", "echo hi\n")
			r.Commit("before")
			base := snap(t, r.Dir)
			r.WriteMode("run.sh", "echo hi\n", 0o755)
			return base, []string{commitPatch(t, r)}
		}},
		{name: "mode -x", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.WriteMode("run.sh", "echo hi\n", 0o755)
			r.Commit("before")
			base := snap(t, r.Dir)
			r.Write("run.sh", "echo hi\n")
			return base, []string{commitPatch(t, r)}
		}},
		{name: "mode change and edit", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("run.sh", ten)
			r.Commit("before")
			base := snap(t, r.Dir)
			r.WriteMode("run.sh", setLine(ten, 4, "four"), 0o755)
			return base, []string{commitPatch(t, r)}
		}},
		{name: "edit keeps executable bit", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.WriteMode("run.sh", ten, 0o755)
			r.Commit("before")
			base := snap(t, r.Dir)
			r.WriteMode("run.sh", setLine(ten, 4, "four"), 0o755)
			return base, []string{commitPatch(t, r)}
		}},
		{name: "no newline at EOF added", build: simple("a.txt", "a\nb\nc", "a\nb\nc\n", "a\nb\nc")},
		{name: "no newline at EOF removed", build: simple("a.txt", "a\nb\nc\n", "a\nb\nc", "a\nb\nc\n")},
		{name: "no newline at EOF kept", build: simple("a.txt", "a\nb\nc\nd", "a\nB\nc\nd", "a\nb\nc\nd")},
		{name: "no newline at EOF but base has one", build: simple("a.txt", "a\nb\nc\nd", "a\nb\nC\nd", "a\nb\nc\nd\n")},
		{name: "CRLF file edits", build: simple("a.txt", "l1\r\nl2\r\nl3\r\nl4\r\n", "l1\r\nL2\r\nl3\r\nl4\r\n", "l1\r\nl2\r\nl3\r\nl4\r\n")},
		{name: "CRLF added line before any CRLF context", build: simple("a.txt", "a\r\nb\r\n", "x\r\na\r\nb\r\n", "a\r\nb\r\n")},
		{name: "CRLF new file", build: simple("a.txt", absent, "one\r\ntwo\r\n", absent)},
		{name: "CRLF line with trailing space", build: simple("a.txt", "a\r\nb\r\n", "a\r\nx \r\nb\r\n", "a\r\nb\r\n")},
		{name: "trailing whitespace", build: simple("a.txt", ten, setLine(setLine(ten, 3, "three  "), 6, "six\t"), ten)},
		{name: "space before tab", build: simple("a.go", "func f() {\n}\n", "func f() {\n \treturn\n}\n", "func f() {\n}\n")},
		{name: "trailing whitespace and space before tab on one line", build: simple("a.txt", ten, setLine(ten, 3, "  \tx "), ten)},
		{name: "blank at EOF", build: simple("a.txt", ten, ten+"\n\n", ten)},
		{name: "blank at EOF after blank context", build: simple("a.txt", ten+"\n", ten+"\n\n", ten+"\n")},
		{name: "blank line in the middle", build: simple("a.txt", ten, insertAt(ten, 5, "\n"), ten)},
		{name: "whitespace on removed line is fine", build: simple("a.txt", setLine(ten, 4, "four "), ten, setLine(ten, 4, "four "))},
		{name: "binary new file", build: simple("b.bin", absent, binaryData(1, 3000), absent)},
		{name: "binary modify", build: func() buildFunc {
			d := binaryData(2, 4000)
			return simple("b.bin", d, d[:1000]+"changed"+d[1000:], d)
		}()},
		{name: "binary delete", build: func() buildFunc {
			d := binaryData(3, 500)
			return simple("b.bin", d, absent, d)
		}()},
		{name: "binary without data", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			d := binaryData(4, 800)
			r.Write("b.bin", d)
			r.Commit("before")
			base := snap(t, r.Dir)
			r.Write("b.bin", d+"more")
			r.Commit("after")
			return base, []string{gitOut(t, r, "diff", "HEAD~1", "HEAD")}
		}},
		{name: "binary wrong preimage", build: func() buildFunc {
			d := binaryData(5, 900)
			return simple("b.bin", d, d+"x", d+"y")
		}()},
		{name: "multi-file patch", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("a.txt", ten)
			r.Write("dir/b.txt", twenty)
			r.Write("gone.txt", "bye\n")
			r.Commit("before")
			base := snap(t, r.Dir)
			r.Write("a.txt", setLine(ten, 2, "two"))
			r.Write("dir/b.txt", setLine(twenty, 18, "eighteen"))
			r.Remove("gone.txt")
			r.Write("dir/c.txt", "new\n")
			return base, []string{commitPatch(t, r)}
		}},
		{name: "series where patch 2 depends on patch 1", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("a.txt", ten)
			r.Commit("before")
			base := snap(t, r.Dir)
			r.Write("a.txt", setLine(ten, 5, "five"))
			p1 := commitPatch(t, r)
			r.Write("a.txt", setLine(setLine(ten, 5, "FIVE"), 6, "six"))
			r.Write("new.txt", "x\n")
			p2 := commitPatch(t, r)
			r.Write("new.txt", "x\ny\n")
			p3 := commitPatch(t, r)
			return base, []string{p1, p2, p3}
		}},
		{name: "series where patch 2 conflicts", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("a.txt", ten)
			r.Write("b.txt", twenty)
			r.Commit("before")
			base := snap(t, r.Dir)
			r.Write("a.txt", setLine(ten, 5, "five"))
			p1 := commitPatch(t, r)
			r.Write("b.txt", setLine(twenty, 5, "five"))
			p2 := commitPatch(t, r)
			r.Write("a.txt", setLine(ten, 9, "nine"))
			p3 := commitPatch(t, r)
			b := base["b.txt"]
			base["b.txt"] = &tree.File{Mode: b.Mode, Data: []byte(setLine(twenty, 6, "changed"))}
			return base, []string{p1, p2, p3}
		}},
		{name: "two diffs of the same file in one patch", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("a.txt", twenty)
			r.Commit("before")
			base := snap(t, r.Dir)
			r.Write("a.txt", setLine(twenty, 5, "five"))
			r.Commit("one")
			r.Write("a.txt", setLine(setLine(twenty, 5, "five"), 6, "six"))
			r.Commit("two")
			p := gitOut(t, r, "diff", "HEAD~2", "HEAD~1") + gitOut(t, r, "diff", "HEAD~1", "HEAD")
			return base, []string{p}
		}},
		{name: "empty file created", build: simple("empty.txt", absent, "", absent)},
		{name: "empty file deleted", build: simple("empty.txt", "", absent, "")},
		{name: "empty file deleted but the tree has content", build: simple("empty.txt", "", absent, "content\n")},
		{name: "symlink created", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("target.txt", "t\n")
			r.Commit("before")
			base := snap(t, r.Dir)
			r.Symlink("link", "target.txt")
			return base, []string{commitPatch(t, r)}
		}},
		{name: "symlink target changed", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Symlink("link", "one")
			r.Commit("before")
			base := snap(t, r.Dir)
			r.Symlink("link", "two")
			return base, []string{commitPatch(t, r)}
		}},
		{name: "symlink replaced by file", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Symlink("thing", "elsewhere")
			r.Commit("before")
			base := snap(t, r.Dir)
			r.Remove("thing")
			r.Write("thing", "now a file\n")
			return base, []string{commitPatch(t, r)}
		}},
		{name: "new file where a symlink is", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Commit("before")
			r.Write("thing", "a file\n")
			p := commitPatch(t, r)
			r.Remove("thing")
			r.Symlink("thing", "elsewhere")
			return snap(t, r.Dir), []string{p}
		}},
		{name: "modify through a symlinked directory", build: hand(func(r *gittest.Repo) {
			r.Write("dir/a.txt", "x\n")
			r.Symlink("link", "dir")
		}, "diff --git a/link/a.txt b/link/a.txt\n--- a/link/a.txt\n+++ b/link/a.txt\n@@ -1 +1 @@\n-x\n+y\n")},
		{name: "create through a symlinked directory", build: hand(func(r *gittest.Repo) {
			r.Write("dir/a.txt", "x\n")
			r.Symlink("link", "dir")
		}, "diff --git a/link/new.txt b/link/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/link/new.txt\n@@ -0,0 +1 @@\n+evil\n")},
		{name: "create through a symlink out of the tree", build: hand(func(r *gittest.Repo) {
			r.Symlink("out", "/nonexistent-patchkit-dir")
		}, "diff --git a/out/x b/out/x\nnew file mode 100644\n--- /dev/null\n+++ b/out/x\n@@ -0,0 +1 @@\n+evil\n")},
		{name: "create inside .git", build: hand(func(r *gittest.Repo) {
			r.Write("a.txt", "a\n")
		}, "diff --git a/.git/evil b/.git/evil\nnew file mode 100644\n--- /dev/null\n+++ b/.git/evil\n@@ -0,0 +1 @@\n+evil\n")},
		{name: "hunk at top must match at the beginning", build: simple("a.txt", ten, setLine(ten, 1, "one"), insertAt(ten, 1, "new top\n"))},
		{name: "hunk at top applies", build: simple("a.txt", ten, setLine(ten, 2, "two"), ten)},
		{name: "hunk at end matches at the end", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			before := num(1, 5) + "x\ny\n"
			r.Write("a.txt", before)
			r.Commit("before")
			r.Write("a.txt", before+"z\n")
			p := commitPatch(t, r)
			r.Write("a.txt", before+"mid\nline 5\nx\ny\n")
			return snap(t, r.Dir), []string{p}
		}},
		{name: "hunk at end fails with lines after it", build: simple("a.txt", ten, ten+"eleven\n", ten+"more\n")},
		{name: "overlapping hunks", build: hand(func(r *gittest.Repo) {
			r.Write("a.txt", "a\nb\nc\nd\n")
		}, "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n@@ -2,2 +2,2 @@\n b\n-c\n+C\n")},
		{name: "pure insertion with context", build: simple("a.txt", ten, insertAt(ten, 6, "inserted 1\ninserted 2\n"), insertAt(ten, 1, "shift\n"))},
		{name: "unicode content", build: simple("ü/日本.txt", "héllo\nwörld\n日本語\n€\n", "héllo\nWÖRLD\n日本語\n€\n", "héllo\nwörld\n日本語\n€\n")},
		{name: "large file with many hunks", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			before := num(1, 3000)
			after := before
			for i := 50; i <= 2950; i += 97 {
				after = setLine(after, i, fmt.Sprintf("changed %d", i))
			}
			r.Write("big.txt", before)
			r.Commit("before")
			r.Write("big.txt", after)
			p := commitPatch(t, r)
			r.Write("big.txt", deleteLines(insertAt(insertAt(before, 1500, "mid a\nmid b\nmid c\n"), 1, "top\n"), 2500, 4))
			return snap(t, r.Dir), []string{p}
		}},
		{name: "U0 hunk in the middle", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("a.txt", ten)
			r.Commit("before")
			base := snap(t, r.Dir)
			r.Write("a.txt", setLine(ten, 5, "five"))
			r.Commit("after")
			return base, []string{gitOut(t, r, "diff", "-U0", "HEAD~1", "HEAD")}
		}},
		{name: "U0 append at the end", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("a.txt", ten)
			r.Commit("before")
			base := snap(t, r.Dir)
			r.Write("a.txt", ten+"eleven\n")
			r.Commit("after")
			return base, []string{gitOut(t, r, "diff", "-U0", "HEAD~1", "HEAD")}
		}},
		{name: "U0 delete at the end", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("a.txt", ten)
			r.Commit("before")
			base := snap(t, r.Dir)
			r.Write("a.txt", num(1, 8))
			r.Commit("after")
			return base, []string{gitOut(t, r, "diff", "-U0", "HEAD~1", "HEAD")}
		}},
		{name: "whitespace errors in two patches", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("a.txt", ten)
			r.Commit("before")
			base := snap(t, r.Dir)
			r.Write("a.txt", setLine(ten, 2, "two "))
			p1 := commitPatch(t, r)
			r.Write("a.txt", setLine(setLine(ten, 2, "two "), 8, "eight\t"))
			p2 := commitPatch(t, r)
			return base, []string{p1, p2}
		}},
		{name: "conflict then whitespace", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("a.txt", ten)
			r.Commit("before")
			r.Write("a.txt", setLine(ten, 2, "two"))
			p1 := commitPatch(t, r)
			r.Write("b.txt", "b \n")
			p2 := commitPatch(t, r)
			r.Write("a.txt", setLine(ten, 3, "other"))
			r.Remove("b.txt")
			return snap(t, r.Dir), []string{p1, p2}
		}},
		{name: "whitespace then conflict", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("a.txt", ten)
			r.Commit("before")
			base := snap(t, r.Dir)
			r.Write("b.txt", "b \n")
			p1 := commitPatch(t, r)
			r.Write("a.txt", setLine(ten, 2, "two"))
			p2 := commitPatch(t, r)
			a := base["a.txt"]
			base["a.txt"] = &tree.File{Mode: a.Mode, Data: []byte(setLine(ten, 3, "other"))}
			return base, []string{p1, p2, p1}
		}},
		{name: "blank at EOF and a conflict in one patch", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("a.txt", ten)
			r.Write("b.txt", ten)
			r.Commit("before")
			r.Write("a.txt", ten+"\n")
			r.Write("b.txt", setLine(ten, 5, "five"))
			p := commitPatch(t, r)
			r.Write("b.txt", setLine(ten, 5, "other"))
			return snap(t, r.Dir), []string{p}
		}},
		{name: "directory replaced by file", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("thing/a.txt", "a\n")
			r.Commit("before")
			base := snap(t, r.Dir)
			r.Remove("thing")
			r.Write("thing", "file now\n")
			return base, []string{commitPatch(t, r)}
		}},
		{name: "file where a directory remains", build: hand(func(r *gittest.Repo) {
			r.Write("thing/a.txt", "a\n")
		}, "diff --git a/thing b/thing\nnew file mode 100644\n--- /dev/null\n+++ b/thing\n@@ -0,0 +1 @@\n+file\n")},
		{name: "file under a file", build: hand(func(r *gittest.Repo) {
			r.Write("thing", "a\n")
		}, "diff --git a/thing/x b/thing/x\nnew file mode 100644\n--- /dev/null\n+++ b/thing/x\n@@ -0,0 +1 @@\n+file\n")},
		{name: "traditional unified diff", build: hand(func(r *gittest.Repo) {
			r.Write("a.txt", num(1, 10))
		}, "--- a/a.txt\t2024-01-01 00:00:00.000000000 +0000\n+++ b/a.txt\t2024-01-02 00:00:00.000000000 +0000\n@@ -3,3 +3,3 @@\n line 3\n-line 4\n+four\n line 5\n")},
		{name: "traditional new file", build: hand(func(r *gittest.Repo) {
			r.Write("a.txt", "a\n")
		}, "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n")},
		{name: "traditional diff without directories", build: hand(func(r *gittest.Repo) {
			r.Write("a.txt", num(1, 10))
		}, "--- a.txt.orig\n+++ a.txt\n@@ -3,3 +3,3 @@\n line 3\n-line 4\n+four\n line 5\n")},
		{name: "traditional diff that creates by adding", build: hand(func(r *gittest.Repo) {
			r.Write("a.txt", "a\n")
		}, "--- a/sub/made.txt\n+++ b/sub/made.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n")},
		{name: "GNU empty context line", build: hand(func(r *gittest.Repo) {
			r.Write("a.txt", "a\n\nb\nc\n")
		}, "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,4 +1,4 @@\n a\n\n-b\n+B\n c\n")},
		{name: "rename swap", build: hand(func(r *gittest.Repo) {
			r.Write("a.txt", "a\n")
			r.Write("b.txt", "b\n")
		}, "diff --git a/a.txt b/b.txt\nsimilarity index 100%\nrename from a.txt\nrename to b.txt\ndiff --git a/b.txt b/a.txt\nsimilarity index 100%\nrename from b.txt\nrename to a.txt\n")},
		{name: "copy with modified source", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("src.txt", twenty)
			r.Commit("before")
			base := snap(t, r.Dir)
			r.Write("copy.txt", setLine(twenty, 3, "three"))
			r.Write("src.txt", setLine(twenty, 15, "fifteen"))
			return base, []string{commitPatch(t, r, "-C", "-C")}
		}},
		{name: "mode change when the mode already changed", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("run.sh", ten)
			r.Commit("before")
			r.WriteMode("run.sh", ten, 0o755)
			p := commitPatch(t, r)
			return snap(t, r.Dir), []string{p}
		}},
		{name: "modify a file an earlier diff deleted", build: hand(func(r *gittest.Repo) {
			r.Write("a.txt", "a\nb\n")
		}, "diff --git a/a.txt b/a.txt\ndeleted file mode 100644\n--- a/a.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n"+
			"diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n")},
		{name: "two commits in one patch file", build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("a.txt", ten)
			r.Commit("before")
			base := snap(t, r.Dir)
			r.Write("a.txt", setLine(ten, 2, "two"))
			r.Commit("one")
			r.Write("a.txt", setLine(setLine(ten, 2, "two"), 3, "three"))
			r.Write("b.txt", "b\n")
			r.Commit("two")
			return base, []string{gitOut(t, r, "format-patch", "--stdout", "HEAD~2..HEAD")}
		}},
		{name: "delete file without newline at EOF", build: simple("a.txt", "a\nb", absent, "a\nb")},
		{name: "CRLF blank lines at EOF", build: simple("a.txt", "a\r\n", "a\r\n\r\n\r\n", "a\r\n")},
		{name: "tabs and spaces that are fine", build: simple("a.txt", ten, setLine(setLine(ten, 2, "\t x"), 3, "x \ty"), ten)},
		{name: "only whitespace line added", build: simple("a.txt", ten, setLine(ten, 4, "   "), ten)},
		{name: "file emptied but kept", build: simple("a.txt", ten, "", ten)},

		// Reverse.
		{name: "reverse edit", reverse: true, build: simple("a.txt", ten, setLine(ten, 5, "five"), setLine(ten, 5, "five"))},
		{name: "reverse with offset", reverse: true, build: simple("a.txt", twenty, setLine(twenty, 12, "twelve"), insertAt(setLine(twenty, 12, "twelve"), 2, "x\n"))},
		{name: "reverse new file", reverse: true, build: simple("new.txt", absent, "hello\n", "hello\n")},
		{name: "reverse delete", reverse: true, build: simple("a.txt", ten, absent, absent)},
		{name: "reverse rename", reverse: true, build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("old.txt", twenty)
			r.Commit("before")
			r.Remove("old.txt")
			r.Write("new.txt", setLine(twenty, 4, "four"))
			return snap(t, r.Dir), []string{commitPatch(t, r, "-M")}
		}},
		{name: "reverse mode change", reverse: true, build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("run.sh", ten)
			r.Commit("before")
			r.WriteMode("run.sh", setLine(ten, 1, "#!/bin/sh"), 0o755)
			p := commitPatch(t, r)
			return snap(t, r.Dir), []string{p}
		}},
		{name: "reverse edit of an executable", reverse: true, build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.WriteMode("run.sh", ten, 0o755)
			r.Commit("before")
			r.WriteMode("run.sh", setLine(ten, 1, "#!/bin/sh"), 0o755)
			p := commitPatch(t, r)
			return snap(t, r.Dir), []string{p}
		}},
		{name: "reverse binary", reverse: true, build: func() buildFunc {
			d := binaryData(6, 2000)
			return simple("b.bin", d, d[:500]+d[600:], d[:500]+d[600:])
		}()},
		{name: "reverse of a patch that is not applied", reverse: true, build: simple("a.txt", ten, setLine(ten, 5, "five"), ten)},
		{name: "reverse removed line with trailing whitespace", reverse: true, build: simple("a.txt", setLine(ten, 3, "three "), ten, ten)},
		{name: "reverse two diffs of the same file", reverse: true, build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("a.txt", twenty)
			r.Commit("before")
			r.Write("a.txt", setLine(twenty, 5, "five"))
			r.Commit("one")
			r.Write("a.txt", setLine(setLine(twenty, 5, "five"), 6, "six"))
			r.Commit("two")
			p := gitOut(t, r, "diff", "HEAD~2", "HEAD~1") + gitOut(t, r, "diff", "HEAD~1", "HEAD")
			return snap(t, r.Dir), []string{p}
		}},
		{name: "reverse series", reverse: true, build: func(t *testing.T, r *gittest.Repo) (tree.Map, []string) {
			r.Write("a.txt", ten)
			r.Commit("before")
			r.Write("a.txt", setLine(ten, 5, "five"))
			p1 := commitPatch(t, r)
			r.Write("a.txt", setLine(setLine(ten, 5, "five"), 6, "six"))
			r.Write("n.txt", "n\n")
			p2 := commitPatch(t, r)
			return snap(t, r.Dir), []string{p2, p1}
		}},
	}
}
