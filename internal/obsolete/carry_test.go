package obsolete

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// oracle checks rep against the git CLI at every scanned ref: for each patch
// (the patches must touch separate files, so that each alone sees what the
// series sees), `git apply -R --check` and `git apply --check` of the whole
// patch, then of each of its hunks. Where git reverse-applies, patchkit must
// say present by reverse-apply; where git applies, applies; where git does
// neither, patchkit must say neither.
func oracle(t *testing.T, r *gittest.Repo, rep *Report, patches []string) {
	t.Helper()
	dir := t.TempDir()
	write := func(name, text string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	parsed := parsePatches(t, patches)
	for k, ref := range rep.Refs {
		wt := filepath.Join(t.TempDir(), "wt")
		r.Git("worktree", "add", "-q", "--detach", wt, ref.Commit)
		check := func(file string) (rev, fwd bool) {
			_, _, revErr := gittest.Run(wt, nil, "apply", "-R", "--check", file)
			_, _, fwdErr := gittest.Run(wt, nil, "apply", "--check", file)
			return revErr == nil, fwdErr == nil
		}
		for i, p := range patches {
			got := rep.Patches[i].Results[k]
			rev, fwd := check(write(fmt.Sprintf("%04d.diff", i+1), p))
			switch {
			case rev && (got.Status != StatusPresent || got.Via != ViaReverseApply):
				t.Errorf("%s patch %d: git apply -R --check succeeds, patchkit says %s via %s", ref.Name, i+1, got.Status, got.Via)
			case !rev && fwd && got.Status != StatusApplies:
				t.Errorf("%s patch %d: git apply --check succeeds, patchkit says %s (%s)", ref.Name, i+1, got.Status, got.Evidence)
			case !rev && !fwd && (got.Status == StatusApplies || got.Via == ViaReverseApply):
				t.Errorf("%s patch %d: git applies it in neither direction, patchkit says %s via %s", ref.Name, i+1, got.Status, got.Via)
			}
			units := splitUnits(parsed[i])
			for n, h := range got.Hunks {
				hrev, hfwd := check(write(fmt.Sprintf("%04d-%d.diff", i+1, n), string(units[n].patch.Bytes())))
				want := map[string]string{ViaReverseApply: "rev", ViaLines: "neither", ViaLanded: "neither", ViaMoved: "fwd"}[h.Via]
				if h.Status == StatusApplies {
					want = "fwd"
				} else if h.Status == StatusConflict || h.Status == StatusHunkSuperseded {
					want = "neither"
				}
				gotGit := "neither"
				if hrev {
					gotGit = "rev"
				} else if hfwd {
					gotGit = "fwd"
				}
				if gotGit != want {
					t.Errorf("%s patch %d hunk %d: patchkit says %s via %q, git says %s", ref.Name, i+1, n+1, h.Status, h.Via, gotGit)
				}
			}
		}
		r.Git("worktree", "remove", "--force", wt)
	}
}

// TestCheckCarriedAfterNearbyEdits: upstream lands the patch's three hunks
// (with a docs file, so under another patch-id; a release branch carries it
// as a cherry-pick), then edits lines next to them, then reverts one hunk,
// then the rest. The patch stays present, naming the commit that landed it,
// while every hunk is still there; it is partial once one hunk is reverted,
// and a conflict once nothing of it is left.
func TestCheckCarriedAfterNearbyEdits(t *testing.T) {
	r, base := pinned(t, "m.go", "m", 70)
	fixed := base
	for _, l := range []string{"m10", "m35", "m60"} {
		fixed = replaceLine(t, fixed, l, l+" fixed")
	}
	patch := makePatch(r, "v1.0.0", "main", "fix three lines", map[string]string{"m.go": fixed})

	r.Write("m.go", fixed)
	r.Write("docs.txt", "fixed\n")
	land := r.Release("fix three lines, with docs", "v1.1.0")
	cur := replaceLine(t, fixed, "m61", "m61 reworded")
	r.Write("m.go", cur)
	r.Release("reword m61", "v1.2.0")
	cur = replaceLine(t, cur, "m9", "m9 reworded")
	r.Write("m.go", cur)
	r.Release("reword m9", "v1.3.0")
	cur = replaceLine(t, cur, "m35 fixed", "m35")
	r.Write("m.go", cur)
	r.Release("revert the m35 fix", "v1.4.0")
	cur = replaceLine(t, replaceLine(t, cur, "m10 fixed", "m10"), "m60 fixed", "m60")
	r.Write("m.go", cur)
	r.Release("revert the other fixes", "v1.5.0")

	pick := releasePick(r, land)
	r.Tag("v1.0.1")
	r.Write("m.go", replaceLine(t, fixed, "m59", "m59 on the branch"))
	r.Release("branch rewording", "v1.0.2")
	r.Git("checkout", "-q", "main")

	patches := []string{patch}
	rep := scan{pin: "v1.0.0", releases: "v*", patches: patches}.run(t, r.URL())
	if got, want := statuses(rep, 0), "v1.0.1=present v1.0.2=present v1.1.0=present v1.2.0=present v1.3.0=present v1.4.0=partial v1.5.0=conflict"; got != want {
		t.Fatalf("statuses = %q, want %q", got, want)
	}
	tests := []struct {
		ref, via, commit, hunks string
	}{
		{"v1.0.1", ViaReverseApply, pick, ""},
		{"v1.0.2", ViaCarried, pick, "present/reverse-apply present/reverse-apply present/lines"},
		{"v1.1.0", ViaReverseApply, land, ""},
		{"v1.2.0", ViaCarried, land, "present/reverse-apply present/reverse-apply present/lines"},
		{"v1.3.0", ViaCarried, land, "present/lines present/reverse-apply present/lines"},
		{"v1.4.0", ViaHunks, land, "present/lines applies/ present/lines"},
		{"v1.5.0", ViaApply, "", "conflict/ applies/ conflict/"},
	}
	for _, tt := range tests {
		res := result(t, rep, 0, tt.ref)
		var hs []string
		for _, h := range res.Hunks {
			hs = append(hs, h.Status+"/"+h.Via)
		}
		if res.Via != tt.via || res.Commit != tt.commit || strings.Join(hs, " ") != tt.hunks {
			t.Errorf("%s: %s via %s commit %s hunks %q; want via %s commit %s hunks %q (%s)",
				tt.ref, res.Status, res.Via, res.Commit, strings.Join(hs, " "), tt.via, tt.commit, tt.hunks, res.Evidence)
		}
	}
	if p := rep.Patches[0]; p.ObsoletedBy != "v1.0.1" || p.Commit != pick || p.NeededAgainAt != "v1.4.0" {
		t.Errorf("obsoletedBy %q commit %q neededAgainAt %q; want v1.0.1 %s v1.4.0", p.ObsoletedBy, p.Commit, p.NeededAgainAt, pick)
	}
	if ev := result(t, rep, 0, "v1.2.0").Evidence; !strings.Contains(ev, Short(land)) || !strings.Contains(ev, "2 reverse-apply, 1 by their lines") {
		t.Errorf("v1.2.0 evidence = %q, want the landing commit and how each hunk is there", ev)
	}
	if ev := result(t, rep, 0, "v1.5.0").Evidence; strings.Contains(ev, "already upstream") {
		t.Errorf("v1.5.0 evidence = %q, want nothing upstream", ev)
	}
	oracle(t, r, rep, patches)
}

const (
	removalBase = `package r

import (
	"fmt"
	"strict"
)

// p1
// p2
// p3
// p4
// p5
// p6
// p7
// p8

func Handle(x int) error {
	if err := strict.Check(x); err != nil {
		return fmt.Errorf("strict: %w", err)
	}
	return process(x)
}
`
	// removalOurs disables the check.
	removalOurs = `package r

import (
	"fmt"
)

// p1
// p2
// p3
// p4
// p5
// p6
// p7
// p8

func Handle(x int) error {
	return process(x)
}
`
	// removalUpstream drops the check too, and renames the call after it.
	removalUpstream = `package r

import (
	"fmt"
)

// p1
// p2
// p3
// p4
// p5
// p6
// p7
// p8

func Handle(x int) error {
	return processAll(x)
}
`
	// removalMoved keeps the check, further down.
	removalMoved = `package r

import (
	"fmt"
	"strict"
)

// p1
// p2
// p3
// p4
// p5
// p6
// p7
// p8

func Handle(x int) error {
	log(x)
	if err := strict.Check(x); err != nil {
		return fmt.Errorf("strict: %w", err)
	}
	return process(x)
}
`
	// removalGone drops the import and the whole function.
	removalGone = `package r

import (
	"fmt"
)

// p1
// p2
// p3
// p4
// p5
// p6
// p7
// p8
`
)

// TestCheckRemovalSuperseded: a patch that only removes lines (a check and
// its import). Upstream removing them too, with the line after the check
// changed, supersedes it; so does a commit that removes the import and drops
// the whole function the check was in (it rewrote that hunk's region);
// upstream moving the check does not.
func TestCheckRemovalSuperseded(t *testing.T) {
	r := gittest.New(t)
	for _, f := range []string{"a.go", "b.go", "c.go"} {
		r.Write(f, removalBase)
	}
	r.Release("initial", "v1.0.0")
	var patches []string
	for _, f := range []string{"a.go", "b.go", "c.go"} {
		patches = append(patches, makePatch(r, "v1.0.0", "main", "disable the check in "+f, map[string]string{f: removalOurs}))
	}
	r.Write("a.go", removalUpstream)
	land := r.Commit("drop the strict check")
	r.Write("b.go", removalMoved)
	r.Write("c.go", removalGone)
	moved := r.Release("move the check in b, drop Handle in c", "v1.1.0")

	rep := scan{pin: "v1.0.0", releases: "v*", patches: patches}.run(t, r.URL())
	tests := []struct {
		patch               int
		status, via, commit string
	}{
		{0, StatusSuperseded, ViaCarried, land},
		{1, StatusConflict, ViaApply, ""},
		{2, StatusSuperseded, ViaRewritten, moved},
	}
	for _, tt := range tests {
		res := result(t, rep, tt.patch, "v1.1.0")
		if res.Status != tt.status || res.Via != tt.via || res.Commit != tt.commit {
			t.Errorf("patch %d: %s via %s commit %s, want %s via %s commit %s (%s)", tt.patch+1, res.Status, res.Via, res.Commit, tt.status, tt.via, tt.commit, res.Evidence)
		}
	}
	if p := rep.Patches[0]; p.ObsoletedBy != "v1.1.0" || p.Commit != land {
		t.Errorf("obsoletedBy %q %q, want v1.1.0 %s", p.ObsoletedBy, p.Commit, land)
	}
	if lm := result(t, rep, 1, "v1.1.0").AddedLines; lm != nil && lm.Gone > 0 {
		t.Errorf("moved check: %+v removed lines counted gone, want none", lm)
	}
	oracle(t, r, rep, patches)
}
