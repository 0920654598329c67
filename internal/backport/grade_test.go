package backport

import (
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/tree"
)

// diffF is the upstream commit's diff: a.txt lines 3 and 8 change.
const diffF = `diff --git a/a.txt b/a.txt
index 1111111..2222222 100644
--- a/a.txt
+++ b/a.txt
@@ -1,10 +1,10 @@
 1
 2
-3
+three
 4
 5
 6
 7
-8
+eight
 9
 10
`

func TestCompare(t *testing.T) {
	parentA := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
	commitA := "1\n2\nthree\n4\n5\n6\n7\neight\n9\n10\n"
	trees := &Trees{
		Parent: tree.Map{"a.txt": {Mode: tree.Regular, Data: []byte(parentA)}},
		Commit: tree.Map{"a.txt": {Mode: tree.Regular, Data: []byte(commitA)}},
	}
	header := "Subject: x\nOrigin: upstream, 635da9cc59aacfe868fd8b43ddccac9c47a9b7a3\n\n"
	// resplit is diffF with its one hunk split in two.
	const resplit = `diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -2,3 +2,3 @@
 2
-3
+three
 4
@@ -7,3 +7,3 @@
 7
-8
+eight
 9
`
	tests := []struct {
		name       string
		patch      string
		trees      *Trees
		grade      Grade
		onlyPatch  string
		onlyUp     string
		reasonPart string
	}{
		{name: "same text", patch: diffF, trees: trees, grade: Identical},
		{name: "moved line numbers, other index, signature", trees: trees, grade: Identical,
			patch: strings.NewReplacer("@@ -1,10 +1,10 @@", "@@ -41,10 +41,10 @@ func f()", "index 1111111..2222222", "index 3333333..4444444").Replace(diffF) + "-- \n2.39.5\n\n"},
		{name: "re-split hunks", trees: trees, grade: Equivalent, reasonPart: "hunks split otherwise", patch: resplit},
		{name: "re-split without trees", grade: Differs, reasonPart: "trees were not at hand", patch: resplit},
		{name: "hand-edited line", trees: trees, grade: Differs, reasonPart: "a.txt differs from the commit's",
			patch: strings.Replace(diffF, "+three\n", "+three (edited)\n", 1), onlyPatch: "a.txt: +three (edited)", onlyUp: "a.txt: +three"},
		{name: "half the change", trees: trees, grade: Differs, reasonPart: "differs from the commit's",
			patch: "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -2,3 +2,3 @@\n 2\n-3\n+three\n 4\n", onlyUp: "a.txt: -8 +eight"},
		{name: "another file too", trees: trees, grade: Differs, reasonPart: "it touches a.txt, b.txt",
			patch:     diffF + "diff --git a/b.txt b/b.txt\nnew file mode 100644\n--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+b\n",
			onlyPatch: "b.txt: new file mode 100644 +b"},
		{name: "mode differs", grade: Differs, reasonPart: "mode 100755",
			trees:     trees,
			patch:     "diff --git a/a.txt b/a.txt\nold mode 100644\nnew mode 100755\n" + strings.TrimPrefix(diffF, "diff --git a/a.txt b/a.txt\nindex 1111111..2222222 100644\n"),
			onlyPatch: "a.txt: old mode 100644 new mode 100755"},
		{name: "does not apply to the parent", trees: trees, grade: Differs, reasonPart: "does not apply to the commit's parent",
			patch: strings.Replace(diffF, " 5\n", " five\n", 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := series.Parse("patches/x/0001.diff", []byte(header+tt.patch))
			if err != nil {
				t.Fatalf("Parse() = %v", err)
			}
			v, err := Compare(p, []byte(diffF), tt.trees)
			if err != nil {
				t.Fatalf("Compare() = %v", err)
			}
			if v.Grade != tt.grade || !strings.Contains(v.Reason, tt.reasonPart) {
				t.Fatalf("Compare() = %s (%s), want %s (%q)\n%s", v.Grade, v.Reason, tt.grade, tt.reasonPart, v.Interdiff())
			}
			if got := flat(v.OnlyPatch); got != tt.onlyPatch {
				t.Errorf("OnlyPatch = %q, want %q", got, tt.onlyPatch)
			}
			if got := flat(v.OnlyUpstream); got != tt.onlyUp {
				t.Errorf("OnlyUpstream = %q, want %q", got, tt.onlyUp)
			}
			if tt.grade == Differs && (tt.onlyPatch != "" || tt.onlyUp != "") {
				inter := v.Interdiff()
				if tt.onlyPatch != "" && !strings.Contains(inter, "only in the backport") || tt.onlyUp != "" && !strings.Contains(inter, "only upstream") {
					t.Errorf("Interdiff() = %q, want both directions that have lines", inter)
				}
			}
		})
	}
}

// flat renders file lines as "path: l1 l2; path2: ...".
func flat(fs []FileLines) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, f.Path+": "+strings.Join(f.Lines, " "))
	}
	return strings.Join(parts, "; ")
}

func TestNormalize(t *testing.T) {
	// Text between file diffs and a trailing mail signature are ignored; a
	// "\ No newline" marker and binary data are kept.
	diff := "From 1234 Mon Sep 17 00:00:00 2001\nSubject: x\n---\n a.txt | 2 +-\n\n" +
		"diff --git a/a.txt b/a.txt\nindex 1..2 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n" +
		"diff --git a/bin b/bin\nnew file mode 100644\nindex 0000000..3333333\nGIT binary patch\nliteral 3\nKcmZ>\n\nliteral 0\nKcmV+b\n\n" +
		"-- \n2.39.5\n"
	fs := normalize([]byte(diff))
	if len(fs) != 2 {
		t.Fatalf("normalize() = %d files, want 2: %+v", len(fs), fs)
	}
	if got := strings.Join(fs[0].changes(), "|"); got != `-a|\ No newline at end of file|+b|\ No newline at end of file` {
		t.Errorf("changes(a.txt) = %q", got)
	}
	if got := strings.Join(fs[1].changes(), "|"); !strings.HasPrefix(got, "new file mode 100644|GIT binary patch|literal 3") || strings.Contains(got, "2.39.5") || strings.Contains(got, "index") {
		t.Errorf("changes(bin) = %q", got)
	}
}
