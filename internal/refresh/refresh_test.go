package refresh

import (
	"errors"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/tree"
)

func parse(t *testing.T, name, text string) *series.Patch {
	t.Helper()
	p, err := series.Parse(name, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCanonicalMovesHunks: a patch written against an older file (its hunk
// at line 2) applies with an offset where two lines were added above; its
// canonical text has the hunk with three lines of context at the file as it
// is (lines 2-7, as git diff writes it), applies there without an offset,
// and is canonical itself.
func TestCanonicalMovesHunks(t *testing.T) {
	src := tree.Map{"f.txt": {Mode: tree.Regular, Data: []byte("0\nnew 1\nnew 2\na\nb\nc\nd\n")}}
	p := parse(t, "0001-x.diff", "Subject: x\n\ndiff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -2,3 +2,3 @@\n a\n-b\n+B\n c\n")
	out, err := Canonical(src, []*series.Patch{p})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || !out[0].Changed || string(out[0].Read) != string(p.FileBytes()) {
		t.Fatalf("Canonical = %+v, want one changed patch", out)
	}
	q := parse(t, "0001-x.diff", string(out[0].Text))
	if !strings.Contains(string(out[0].Text), "@@ -2,6 +2,6 @@\n new 1\n new 2\n a\n-b\n+B\n c\n d\n") {
		t.Errorf("rendered:\n%s\nwant the hunk at the lines of f.txt as it is, with three lines of context", out[0].Text)
	}
	if r := apply.New(src).Apply(q); r.Status != apply.StatusApplied || r.Hunks[0].Offset != 0 {
		t.Errorf("rendered patch: %s, offset %v; want applied at its place", r.Status, r.Hunks)
	}
	again, err := Canonical(src, []*series.Patch{q})
	if err != nil || again[0].Changed {
		t.Errorf("Canonical of the canonical text: changed %v, %v; want unchanged", again[0].Changed, err)
	}
}

// TestCanonicalNotApplying: the second patch needs the first's change, which
// the series lacks; Canonical names it in a *NotApplyingError.
func TestCanonicalNotApplying(t *testing.T) {
	src := tree.Map{"f.txt": {Mode: tree.Regular, Data: []byte("a\nb\nc\n")}}
	p1 := parse(t, "0001-x.diff", "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
	p2 := parse(t, "0002-y.diff", "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-X\n+Y\n c\n")
	_, err := Canonical(src, []*series.Patch{p1, p2})
	var na *NotApplyingError
	if !errors.As(err, &na) || na.Patch != p2 || na.Result.Status != apply.StatusFailed {
		t.Fatalf("Canonical = %v, want 0002-y.diff not to apply", err)
	}
}
