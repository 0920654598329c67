package obsolete

import (
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// TestCheckBumpHolds: go.mod lines that hold a module down (issue U). A
// downstream lowers a require line (to an older pseudo-version, as
// aws/eks-distro did for github.com/safchain/ethtool) or adds a replace
// below what the pin requires. Upstream raising those modules further is
// exactly what the holds protect against: they stay needed (partial beside
// covered raises, conflict alone), never present, until upstream itself
// requires the module at the held version or lower, or drops it.
func TestCheckBumpHolds(t *testing.T) {
	r := gittest.New(t)
	pinState := bumpState{goVer: "1.21", reqs: map[string]string{
		"example.com/a": "v1.0.0", "example.com/h": "v0.2.0", "example.com/r": "v1.5.0",
	}}
	writeState(r, pinState)
	pin := r.Release("v1.0.0", "v1.0.0")

	withReplace := func(s bumpState, line string) {
		files := s.files()
		r.Write("go.mod", files["go.mod"]+"\n"+line+"\n")
		r.Write("go.sum", files["go.sum"])
	}
	s := pinState
	patches := stacked(r, pin, "main", []func() string{
		func() string {
			s = s.with("example.com/a", "v1.1.0", "example.com/h", "v0.0.0-20190326074333-42ed695e3de8")
			writeState(r, s)
			return "bump a for CVE-2025-0001, keep h below v0.2.0"
		},
		func() string {
			withReplace(s, "replace example.com/r => example.com/r v1.4.0")
			return "hold r at v1.4.0"
		},
	})

	// v1.0.1: upstream raises a past the patch, and raises h and r further.
	up := pinState.with("example.com/a", "v1.2.0", "example.com/h", "v0.3.0", "example.com/r", "v1.6.0")
	writeState(r, up)
	r.Release("raise a, h, r", "v1.0.1")
	// v1.0.2: upstream itself goes back to h's old pseudo-version, and
	// drops r.
	up = up.with("example.com/h", "v0.0.0-20190326074333-42ed695e3de8")
	delete(up.reqs, "example.com/r")
	writeState(r, up)
	lowerH := r.Commit("go back to h's old pseudo-version, drop r")
	r.Git("tag", "v1.0.2")

	rep := scan{pin: "v1.0.0", releases: "v1.*", patches: patches}.run(t, r.URL())
	for i, want := range []string{
		"v1.0.1=partial v1.0.2=present",
		"v1.0.1=conflict v1.0.2=present",
	} {
		if got := statuses(rep, i); got != want {
			t.Errorf("patch %d: statuses = %q, want %q", i+1, got, want)
		}
	}
	if p := rep.Patches[0]; p.ObsoletedBy != "v1.0.2" || p.Commit != lowerH {
		t.Errorf("patch 1: obsoletedBy %q commit %s, want v1.0.2 %s", p.ObsoletedBy, p.Commit, lowerH)
	}

	at := result(t, rep, 0, "v1.0.1")
	if at.Bump == nil || len(at.Bump.Modules) != 2 {
		t.Fatalf("patch 1 at v1.0.1: Bump = %+v", at.Bump)
	}
	a, h := at.Bump.Modules[0], at.Bump.Modules[1]
	if a.Hold || !a.Covered || !h.Hold || h.Covered || h.Upstream != "v0.3.0" || h.From != "v0.2.0" {
		t.Errorf("patch 1 at v1.0.1: modules = %+v, %+v; want a raised and covered, h held and not", a, h)
	}
	if want := "still needed, upstream does not hold it down: holds example.com/h at v0.0.0-20190326074333-42ed695e3de8 (upstream requires v0.3.0)"; !strings.Contains(at.Evidence, want) {
		t.Errorf("patch 1 at v1.0.1: evidence = %q, want it to contain %q", at.Evidence, want)
	}
	rr := result(t, rep, 1, "v1.0.1")
	if rr.Bump == nil || len(rr.Bump.Modules) != 1 || !rr.Bump.Modules[0].Hold || rr.Bump.Modules[0].Replace != "example.com/r" {
		t.Fatalf("patch 2 at v1.0.1: Bump = %+v, want the replace told a hold by the pin", rr.Bump)
	}
	if got := result(t, rep, 1, "v1.0.2"); !strings.Contains(got.Evidence, "holds example.com/r at v1.4.0 (upstream requires none; no longer required") {
		t.Errorf("patch 2 at v1.0.2: evidence = %q", got.Evidence)
	}
}
