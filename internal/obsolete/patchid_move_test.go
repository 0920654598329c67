package obsolete

import (
	"testing"
)

// TestCheckPatchIDSurvivesMove: upstream lands the patch as a commit with its
// patch-id (a new file and a changed call), then a rework moves the new file
// to another directory and edits the call again: the new file's diff applies
// again and the hunk's added line is gone, but no removed line is back, so
// nothing was reverted and the patch-id commit still decides: present (as
// kilo-1 at 0.7.0 and csi-rwx-validation-v2 at v1.12.0 in the corpus). A
// later commit that brings the removed line back is a revert: that ends it.
func TestCheckPatchIDSurvivesMove(t *testing.T) {
	r, base := pinned(t, "m.go", "m", 40)
	called := replaceLine(t, base, "m5", "m5 call(a, cidrs)")
	helper := "package x\n\nfunc cidrs() []string {\n\treturn nil\n}\n"
	files := map[string]string{"m.go": called, "v.go": helper}
	patch := makePatch(r, "v1.0.0", "main", "call with cidrs", files)
	for p, c := range files {
		r.Write(p, c)
	}
	land := r.Release("call with cidrs", "v1.1.0")
	moved := replaceLine(t, called, "m5 call(a, cidrs)", "m5 call(a, cidrs, more)")
	r.Write("m.go", moved)
	r.Git("mv", "v.go", "util.go")
	r.Release("move the helper, one more argument", "v1.2.0")
	r.Write("m.go", replaceLine(t, moved, "m5 call(a, cidrs, more)", "m5"))
	r.Release("back to the plain m5", "v1.3.0")

	patches := []string{patch}
	if g := gitPatchID(t, r, land); g != parsePatches(t, patches)[0].PatchID {
		t.Fatalf("git patch-id --stable of the landing commit = %s, the patch's = %s", g, parsePatches(t, patches)[0].PatchID)
	}
	rep := scan{pin: "v1.0.0", releases: "v*", patches: patches}.run(t, r.URL())
	if got, want := statuses(rep, 0), "v1.1.0=present v1.2.0=present"; got[:len(want)] != want {
		t.Fatalf("statuses = %q, want %q then not present", got, want)
	}
	res := result(t, rep, 0, "v1.2.0")
	if res.Via != ViaPatchID || res.Commit != land {
		t.Errorf("v1.2.0: %s via %s commit %s, want present via %s commit %s (%s)", res.Status, res.Via, res.Commit, ViaPatchID, land, res.Evidence)
	}
	if res := result(t, rep, 0, "v1.3.0"); res.Status == StatusPresent {
		t.Errorf("v1.3.0: present (%s), want the revert of the removed line to end it", res.Evidence)
	}
	if p := rep.Patches[0]; p.ObsoletedBy != "v1.1.0" || p.NeededAgainAt != "v1.3.0" {
		t.Errorf("obsoletedBy %q neededAgainAt %q; want v1.1.0 v1.3.0", p.ObsoletedBy, p.NeededAgainAt)
	}
	oracle(t, r, rep, patches)
}
