package series

import (
	"bytes"
	"testing"
)

// TestPatchSlicesHaveNoSpareCapacity checks that appending to the slices a
// Patch hands out copies them: the lines and names of a parsed patch are views
// into its bytes, so an append that wrote into their spare capacity would
// change them behind the caller's back.
func TestPatchSlicesHaveNoSpareCapacity(t *testing.T) {
	text := []byte("Subject: s\n\ndiff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n" +
		"diff --git a/g b/g\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-c\n+d\n")
	raw := append(make([]byte, 0, len(text)+64), text...) // spare capacity Bytes must not hand out
	p, err := Parse("x.diff", raw)
	if err != nil {
		t.Fatal(err)
	}
	before := append([]byte(nil), p.Bytes()...)
	slices := map[string][]byte{
		"HeaderBytes": p.HeaderBytes(),
		"FileText(f)": p.FileText(p.Files[0]),
		"Diff":        p.Diff(),
		"Bytes":       p.Bytes(),
		"FileBytes":   p.FileBytes(),
	}
	for name, s := range slices {
		if cap(s) != len(s) {
			t.Errorf("%s: cap %d, len %d: want no spare capacity", name, cap(s), len(s))
		}
		_ = append(s, "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"...)
		if !bytes.Equal(p.Bytes(), before) {
			t.Fatalf("append to %s changed the patch's bytes:\n%s", name, p.Bytes())
		}
	}
}
