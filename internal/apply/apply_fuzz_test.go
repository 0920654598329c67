package apply

import (
	"testing"

	"github.com/patchkit/patchkit/internal/tree"
)

// FuzzApply applies arbitrary patch text to a small tree, forward and in
// reverse: it must never panic, and a successful patch may only change clean
// paths inside the tree.
func FuzzApply(f *testing.F) {
	seeds := []string{
		conflictPatch,
		"diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
		"diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -2,2 +2,2 @@\n b\n-c\n\\ No newline at end of file\n+C\n",
		"diff --git a/n.txt b/n.txt\nnew file mode 100755\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+x \n+\n",
		"diff --git a/a.txt b/a.txt\ndeleted file mode 100644\n--- a/a.txt\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-a\n-b\n-c\n",
		"diff --git a/a.txt b/d/e.txt\nsimilarity index 90%\nrename from a.txt\nrename to d/e.txt\n--- a/a.txt\n+++ b/d/e.txt\n@@ -1,3 +1,3 @@\n a\n b\n-c\n+C\n",
		"diff --git a/a.txt b/c.txt\nsimilarity index 100%\ncopy from a.txt\ncopy to c.txt\n",
		"diff --git a/a.txt b/a.txt\nold mode 100644\nnew mode 100755\n",
		"diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+dir\n\\ No newline at end of file\n",
		"diff --git a/link/x b/link/x\nnew file mode 100644\n--- /dev/null\n+++ b/link/x\n@@ -0,0 +1 @@\n+x\n",
		"diff --git a/b.bin b/b.bin\nindex 735a95829dd77133742c0416d45e0e0de7153ef6..b2b70d3c7bca986fe443c3d1dca325ba3cc33839 100644\nGIT binary patch\nliteral 10\nRcmYdHVn|L&O=C#U000ph10?_e\n\nliteral 5\nMcmYdHVn|K_00f)?ivR!s\n\n",
		"--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n",
		"diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,0 +2 @@\n+new\n@@ -3 +3,0 @@\n-c\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	base := tree.Map{
		"a.txt":     {Mode: tree.Regular, Data: []byte("a\nb\nc")},
		"dir/x.txt": {Mode: tree.Executable, Data: []byte("x\r\ny\r\n")},
		"b.bin":     {Mode: tree.Regular, Data: []byte("ab\x00cd")},
		"link":      {Mode: tree.Symlink, Data: []byte("dir")},
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := parsePatch("fuzz.patch", raw)
		if err != nil {
			return
		}
		for _, opts := range [][]Option{
			{withMaxBinaryBytes(1 << 20)},
			{withMaxBinaryBytes(1 << 20), WithReverse()},
			{withMaxBinaryBytes(1 << 20), WithoutWhitespaceCheck()},
		} {
			a := New(base, opts...)
			res := a.Apply(p)
			res2 := a.Apply(p)
			for _, r := range []PatchResult{res, res2} {
				if (r.Status == StatusApplied) != (len(r.Errors) == 0) {
					t.Fatalf("status %s with problems %+v", r.Status, r.Errors)
				}
			}
			for path := range a.Changes() {
				if err := tree.Clean(path); err != nil {
					t.Fatalf("patch changed unsafe path %q: %v", path, err)
				}
				dir := path
				for i := len(dir) - 1; i > 0; i-- {
					if dir[i] == '/' {
						if f, ok, _ := a.Read(dir[:i]); ok && f.Mode == tree.Symlink {
							t.Fatalf("patch wrote %q through symlink %q", path, dir[:i])
						}
					}
				}
			}
		}
	})
}
