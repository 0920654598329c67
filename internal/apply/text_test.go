package apply

import (
	"bytes"
	"testing"
)

// TestFillEmpty checks fillEmpty against applyHunk on an empty file: the
// same content, the same expected line, the same new blank line at EOF.
func TestFillEmpty(t *testing.T) {
	tests := []struct {
		name    string
		patch   string
		reverse bool
	}{
		{name: "new file", patch: "diff --git a/g b/g\nnew file mode 100644\n--- /dev/null\n+++ b/g\n@@ -0,0 +1,3 @@\n+a\n+b\n+c\n"},
		{name: "no newline at end", patch: "diff --git a/g b/g\nnew file mode 100644\n--- /dev/null\n+++ b/g\n@@ -0,0 +1,2 @@\n+a\n+b\n\\ No newline at end of file\n"},
		{name: "blank lines at end", patch: "diff --git a/g b/g\nnew file mode 100644\n--- /dev/null\n+++ b/g\n@@ -0,0 +1,4 @@\n+a\n+\n+  \n+\n"},
		{name: "blank line then text", patch: "diff --git a/g b/g\nnew file mode 100644\n--- /dev/null\n+++ b/g\n@@ -0,0 +1,3 @@\n+\n+a\n+b\n"},
		{name: "only blank lines", patch: "diff --git a/g b/g\nnew file mode 100644\n--- /dev/null\n+++ b/g\n@@ -0,0 +1,2 @@\n+\n+\r\n"},
		{name: "insertion further down", patch: "diff --git a/g b/g\n--- a/g\n+++ b/g\n@@ -4,0 +5,2 @@\n+a\n+\n"},
		{name: "insertion at line 1", patch: "diff --git a/g b/g\n--- a/g\n+++ b/g\n@@ -1,0 +1,2 @@\n+a\n+b\n"},
		{name: "deletion reversed", patch: "diff --git a/g b/g\ndeleted file mode 100644\n--- a/g\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-a\n-b\n-\n", reverse: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := parsePatchForTest(t, "p.diff", []byte(tc.patch))
			fr := filePatches(p, tc.reverse)[0].frags[0]
			if pre, _ := fr.counts(); pre != 0 {
				t.Fatalf("fragment has %d preimage lines, want none", pre)
			}
			im := newImage(nil)
			at, wantExpected, wantEOF := applyHunk(im, fr)
			out, expected, eofLine := fillEmpty(fr)
			if at != 0 || !bytes.Equal(out, im.bytes()) || expected != wantExpected || eofLine != wantEOF {
				t.Errorf("fillEmpty() = %q, %d, %d; applyHunk() applied at %d: %q, %d, %d",
					out, expected, eofLine, at, im.bytes(), wantExpected, wantEOF)
			}
		})
	}
}
