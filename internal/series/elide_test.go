package series

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// addLines is a hunk body of n added lines: "+<prefix> 1\n" ... .
func addLines(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString("+" + prefix + " " + strings.Repeat("x", i%7) + "\n")
	}
	return b.String()
}

// elisionCases are patches whose hunks only add lines, in every shape a
// stub must parse like: at the end of the file with and without a
// newline, next to other hunks and files, and followed by each kind of
// error go-gitdiff or locate reports.
var elisionCases = map[string]string{
	"new file":              createG + "",
	"large new file":        "Subject: x\n\n" + "diff --git a/g b/g\nnew file mode 100644\n--- /dev/null\n+++ b/g\n@@ -0,0 +1,5 @@\n" + addLines("g", 5),
	"no newline at end":     "diff --git a/g b/g\nnew file mode 100644\n--- /dev/null\n+++ b/g\n@@ -0,0 +1,3 @@\n" + addLines("g", 3) + "\\ No newline at end of file\n",
	"last line unended":     "diff --git a/g b/g\nnew file mode 100644\n--- /dev/null\n+++ b/g\n@@ -0,0 +1,3 @@\n" + strings.TrimSuffix(addLines("g", 3), "\n"),
	"crlf":                  strings.ReplaceAll("diff --git a/g b/g\nnew file mode 100644\n--- /dev/null\n+++ b/g\n@@ -0,0 +1,3 @@ f()\n"+addLines("g", 3), "\n", "\r\n"),
	"two files":             modify("f", "a", "A") + "diff --git a/g b/g\nnew file mode 100644\n--- /dev/null\n+++ b/g\n@@ -0,0 +1,4 @@\n" + addLines("g", 4) + "diff --git a/h b/h\nnew file mode 100644\n--- /dev/null\n+++ b/h\n@@ -0,0 +1,2 @@\n" + addLines("h", 2) + modify("i", "a", "A"),
	"insertion hunks":       "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -2,0 +3,2 @@ ctx\n" + addLines("f", 2) + "@@ -5,0 +8,3 @@\n" + addLines("f", 3) + "@@ -9,2 +12,2 @@\n-a\n+A\n b\n",
	"traditional":           "--- /dev/null\n+++ b/data/g\n@@ -0,0 +1,6 @@\n" + addLines("g", 6) + "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n c\n",
	"long header counts":    "diff --git a/g b/g\nnew file mode 100644\n--- /dev/null\n+++ b/g\n@@ -00,0 +01,3 @@\n" + addLines("g", 3),
	"hunk too short":        "diff --git a/g b/g\nnew file mode 100644\n--- /dev/null\n+++ b/g\n@@ -0,0 +1,5 @@\n" + addLines("g", 3),
	"hunk too long":         "diff --git a/g b/g\nnew file mode 100644\n--- /dev/null\n+++ b/g\n@@ -0,0 +1,3 @@\n" + addLines("g", 5),
	"context in add hunk":   "diff --git a/g b/g\n--- a/g\n+++ b/g\n@@ -0,0 +1,3 @@\n+a\n b\n+c\n",
	"bad line after":        "diff --git a/g b/g\nnew file mode 100644\n--- /dev/null\n+++ b/g\n@@ -0,0 +1,4 @@\n" + addLines("g", 4) + "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n-a\n+A\n*b\n c\n",
	"error after two":       "diff --git a/g b/g\n--- /dev/null\n+++ b/g\n@@ -0,0 +1,4 @@\n" + addLines("g", 4) + "@@ -9,0 +5,3 @@\n" + addLines("g", 3) + "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n b\n c\n",
	"no changes after":      "diff --git a/g b/g\n--- /dev/null\n+++ b/g\n@@ -0,0 +1,4 @@\n" + addLines("g", 4) + "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n b\n c\n",
	"fragment without file": "diff --git a/g b/g\n--- /dev/null\n+++ b/g\n@@ -0,0 +1,4 @@\n" + addLines("g", 4) + "junk\n@@ -0,0 +1,3 @@\n" + addLines("g", 3),
	"deleted with content":  "diff --git a/g b/g\ndeleted file mode 100644\n--- a/g\n+++ /dev/null\n@@ -0,0 +1,4 @@\n" + addLines("g", 4),
	"miscount before":       "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n@@ -0,0 +1,4 @@\n" + addLines("g", 4),
	"past its counts":       "diff --git a/g b/g\nnew file mode 100644\n--- /dev/null\n+++ b/g\n@@ -0,0 +1,3 @@\n" + addLines("g", 3) + "\\ No newline at end of file\n+more\n",
	"unsafe path after":     "diff --git a/g b/g\nnew file mode 100644\n--- /dev/null\n+++ b/g\n@@ -0,0 +1,3 @@\n" + addLines("g", 3) + "--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n",
	"added file headers":    "diff --git a/g b/g\nnew file mode 100644\n--- /dev/null\n+++ b/g\n@@ -0,0 +1,4 @@\n+++ b/x\n+@@ -1 +1 @@\n+diff --git a/x b/x\n+--- a/x\n",
}

// TestElisionParsesAlike parses every case and the FuzzParse seeds with
// every hunk that only adds lines elided, and with none: the patches, or
// the errors, must be the same.
func TestElisionParsesAlike(t *testing.T) {
	inputs := map[string]string{}
	for name, raw := range elisionCases {
		inputs[name] = raw
	}
	for i, raw := range parseSeeds {
		inputs["seed "+strconv.Itoa(i)] = raw
	}
	for name, raw := range inputs {
		t.Run(name, func(t *testing.T) { checkElisionAlike(t, []byte(raw)) })
	}
}

// checkElisionAlike parses raw with and without elision and compares.
func checkElisionAlike(t *testing.T, raw []byte) {
	t.Helper()
	defer func(old int) { elideMin = old }(elideMin)
	elideMin = 1 << 30
	want, wantErr := Parse("p.diff", raw)
	elideMin = 1
	got, gotErr := Parse("p.diff", raw)
	if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
		t.Fatalf("Parse() with elision error = %v, without = %v", gotErr, wantErr)
	}
	if gotErr != nil {
		return
	}
	if !reflect.DeepEqual(got.Files, want.Files) {
		t.Fatalf("Parse() with elision Files = %#v, without = %#v", got.Files, want.Files)
	}
	if got.PatchID != want.PatchID || !reflect.DeepEqual(got.Header, want.Header) {
		t.Errorf("Parse() with elision PatchID, Header = %s, %+v; without %s, %+v", got.PatchID, got.Header, want.PatchID, want.Header)
	}
	for i, f := range got.Files {
		if got.FileLine[f] != want.FileLine[want.Files[i]] {
			t.Errorf("FileLine of file %d = %d with elision, %d without", i, got.FileLine[f], want.FileLine[want.Files[i]])
		}
		for j, frag := range f.TextFragments {
			if g, w := got.HunkLine[frag], want.HunkLine[want.Files[i].TextFragments[j]]; g != w {
				t.Errorf("HunkLine of file %d hunk %d = %d with elision, %d without", i, j, g, w)
			}
		}
	}
	checkHunkLines(t, got)
}

// TestElisionLargeHunk checks that a hunk of elideMin added lines is
// elided, so that its lines take one slice of their exact size.
func TestElisionLargeHunk(t *testing.T) {
	n := elideMin
	raw := "diff --git a/g b/g\nnew file mode 100644\n--- /dev/null\n+++ b/g\n@@ -0,0 +1," + strconv.Itoa(n) + " @@\n" + addLines("g", n)
	p, err := Parse("p.diff", []byte(raw))
	if err != nil {
		t.Fatalf("Parse() error = %v", err)
	}
	lines := p.Files[0].TextFragments[0].Lines
	if len(lines) != n || cap(lines) != n {
		t.Errorf("Parse() hunk lines len, cap = %d, %d, want %d, %d", len(lines), cap(lines), n, n)
	}
	checkElisionAlike(t, []byte(raw))
}
