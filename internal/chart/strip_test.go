package chart

import "testing"

// TestGNUPatchRepeatedSlashes pins chart's use of series.StripGNU against
// GNU patch: a run of slashes is one separator when stripping, and one left
// in the name reaches the file the file system would open ("a/b//c.txt"
// -p1 patches b/c.txt).
func TestGNUPatchRepeatedSlashes(t *testing.T) {
	base := "l1\nl2\nl3\nl4\n"
	hunk := "@@ -1,4 +1,4 @@\n l1\n-l2\n+two\n l3\n l4\n"
	for _, tc := range []struct {
		name, file, header string
		strip              int
		arg                string
	}{
		{"run before the stripped part", "b/c.txt", "a//b/c.txt", 1, "-p1"},
		{"run counts once", "c.txt", "a//b/c.txt", 2, "-p2"},
		{"run left in the name", "b/c.txt", "a/b//c.txt", 1, "-p1"},
		{"leading run", "b/c.txt", "//b/c.txt", 1, "-p1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := Files{tc.file: []byte(base)}
			patch := "--- " + tc.header + "\n+++ " + tc.header + "\n" + hunk
			res := checkAgainstGNU(t, tc.name, files, []byte(patch), PatchOptions{Strip: tc.strip, Fuzz: 2, NoBackup: true}, tc.arg, "--no-backup-if-mismatch")
			if !res.OK() {
				t.Errorf("GNUPatch(%s %s) not OK: %v", tc.header, tc.arg, res.Problems())
			}
		})
	}
}
