package obsolete

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/gomod/gomodtest"
)

// bumpState is the dependency state of a generated go.mod.
type bumpState struct {
	goVer string
	reqs  map[string]string
}

func (s bumpState) with(kv ...string) bumpState {
	n := bumpState{goVer: s.goVer, reqs: map[string]string{}}
	for k, v := range s.reqs {
		n.reqs[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] == "go" {
			n.goVer = kv[i+1]
			continue
		}
		n.reqs[kv[i]] = kv[i+1]
	}
	return n
}

func (s bumpState) files() map[string]string {
	var reqs, sums []string
	for p, v := range s.reqs {
		reqs = append(reqs, p+" "+v)
		sums = append(sums, fmt.Sprintf("%s %s h1:%s=", p, v, strings.ReplaceAll(p+v, ".", "")),
			fmt.Sprintf("%s %s/go.mod h1:%s=", p, v, strings.ReplaceAll(v+p, ".", "")))
	}
	sort.Strings(sums)
	return map[string]string{
		"go.mod": gomodtest.MainGoMod("example.com/up", s.goVer, reqs...),
		"go.sum": strings.Join(sums, "\n") + "\n",
	}
}

func writeState(r *gittest.Repo, s bumpState) {
	for p, c := range s.files() {
		r.Write(p, c)
	}
}

// stacked commits each step on a detached HEAD at base, one after the other,
// and returns each commit's diff with its header; the work tree goes back to
// branch.
func stacked(r *gittest.Repo, base, branch string, steps []func() string) []string {
	r.TB.Helper()
	r.Git("checkout", "-q", "--detach", base)
	var out []string
	for _, step := range steps {
		header := step()
		c := r.Commit("downstream: " + header)
		out = append(out, "Subject: "+header+"\n\n"+r.Show(c))
	}
	r.Git("checkout", "-q", "-f", branch)
	return out
}

// TestCheckBumpVersions: a stacked series of bump patches on a generated
// upstream that raises the same modules across tags, ahead of and behind the
// patches, in the same lines: the verdicts follow the versions, name the
// commit that raised the last module, never go back to "needed again" when
// upstream goes higher still, and a mixed patch is judged in two parts.
func TestCheckBumpVersions(t *testing.T) {
	r := gittest.New(t)
	pinState := bumpState{goVer: "1.21", reqs: map[string]string{
		"example.com/a": "v1.0.0", "example.com/b": "v1.0.0", "example.com/c": "v1.0.0", "example.com/d": "v1.0.0",
	}}
	main := "package main\n\nfunc main() {\n\tprintln(\"up\")\n}\n"
	writeState(r, pinState)
	r.Write("main.go", main)
	pin := r.Release("v1.0.0", "v1.0.0")

	fixedMain := strings.Replace(main, `println("up")`, `println("up", 1)`, 1)
	s := pinState
	patches := stacked(r, pin, "main", []func() string{
		func() string {
			s = s.with("example.com/a", "v1.1.0", "example.com/b", "v1.2.0")
			writeState(r, s)
			return "bump a and b for CVE-2025-0001"
		},
		func() string {
			s = s.with("example.com/c", "v1.3.0")
			writeState(r, s)
			return "bump c"
		},
		func() string {
			s = s.with("go", "1.22.3")
			writeState(r, s)
			return "go 1.22.3 for GO-2025-0002"
		},
		func() string {
			s = s.with("example.com/d", "v1.1.0")
			writeState(r, s)
			r.Write("main.go", fixedMain)
			return "bump d and fix main"
		},
	})

	// v1.0.1: a raised beyond the patch, b behind it.
	up := pinState.with("example.com/a", "v1.2.0", "example.com/b", "v1.1.0")
	writeState(r, up)
	raiseA := r.Release("raise a to v1.2.0, b to v1.1.0", "v1.0.1")
	// v1.0.2: b raised to a pseudo-version above the patch's; c exactly.
	up = up.with("example.com/b", "v1.2.1-0.20240301000000-abcdefabcdef")
	writeState(r, up)
	raiseB := r.Commit("raise b")
	up = up.with("example.com/c", "v1.3.0")
	writeState(r, up)
	raiseC := r.Release("raise c to v1.3.0", "v1.0.2")
	// v1.0.3: upstream goes higher still, and lands the code fix of 0004;
	// d goes to a prerelease, below the patch's version.
	up = up.with("example.com/a", "v1.4.0", "example.com/c", "v1.5.0", "example.com/d", "v1.1.0-rc.1")
	writeState(r, up)
	r.Write("main.go", fixedMain)
	r.Release("raise a, c, d; fix main", "v1.0.3")
	// v1.0.4: d at the patch's version.
	up = up.with("example.com/d", "v1.1.0")
	writeState(r, up)
	raiseD := r.Release("raise d to v1.1.0", "v1.0.4")

	rep := scan{pin: "v1.0.0", releases: "v1.*", patches: patches}.run(t, r.URL())

	wantStatus := []string{
		"v1.0.1=partial v1.0.2=present v1.0.3=present v1.0.4=present",
		"v1.0.1=conflict v1.0.2=present v1.0.3=present v1.0.4=present",
		"v1.0.1=conflict v1.0.2=conflict v1.0.3=conflict v1.0.4=conflict",
		"v1.0.1=conflict v1.0.2=conflict v1.0.3=partial v1.0.4=present",
	}
	for i, want := range wantStatus {
		if got := statuses(rep, i); got != want {
			t.Errorf("patch %d: statuses = %q, want %q", i+1, got, want)
		}
	}
	for i, want := range []struct{ by, commit string }{{"v1.0.2", raiseB}, {"v1.0.2", raiseC}, {"", ""}, {"v1.0.4", raiseD}} {
		p := rep.Patches[i]
		if p.ObsoletedBy != want.by || p.Commit != want.commit || p.NeededAgainAt != "" {
			t.Errorf("patch %d: obsoletedBy %q commit %s neededAgainAt %q, want %q %s \"\"", i+1, p.ObsoletedBy, p.Commit, p.NeededAgainAt, want.by, want.commit)
		}
	}

	partial := result(t, rep, 0, "v1.0.1")
	if partial.Bump == nil || len(partial.Bump.Modules) != 2 {
		t.Fatalf("patch 1 at v1.0.1: Bump = %+v", partial.Bump)
	}
	a, b := partial.Bump.Modules[0], partial.Bump.Modules[1]
	if !a.Covered || a.Upstream != "v1.2.0" || a.Commit != raiseA || b.Covered || b.Upstream != "v1.1.0" || b.Version != "v1.2.0" {
		t.Errorf("patch 1 at v1.0.1: modules = %+v, %+v", a, b)
	}
	if !strings.Contains(partial.Evidence, "still to raise: example.com/b v1.2.0 (upstream requires v1.1.0)") {
		t.Errorf("patch 1 at v1.0.1: evidence = %q", partial.Evidence)
	}
	goRes := result(t, rep, 2, "v1.0.4")
	if !strings.Contains(goRes.Evidence, "still to raise: go 1.22.3 (upstream requires 1.21)") || goRes.Bump == nil {
		t.Errorf("patch 3 at v1.0.4: evidence = %q", goRes.Evidence)
	}

	// The mixed patch: its code part by lines, its version part by versions.
	m := result(t, rep, 3, "v1.0.3")
	if m.Code == nil || m.Bump == nil {
		t.Fatalf("patch 4 at v1.0.3: Code %+v, Bump %+v", m.Code, m.Bump)
	}
	if m.Code.Status != StatusPresent || m.Bump.Status == StatusPresent {
		t.Errorf("patch 4 at v1.0.3: code %s, bump %s, want present and not present", m.Code.Status, m.Bump.Status)
	}
	if d := m.Bump.Modules[0]; d.Covered || d.Upstream != "v1.1.0-rc.1" {
		t.Errorf("patch 4 at v1.0.3: d = %+v, want uncovered at the prerelease", d)
	}
	m = result(t, rep, 3, "v1.0.4")
	if m.Code.Status != StatusPresent || m.Bump.Status != StatusPresent {
		t.Errorf("patch 4 at v1.0.4: code %s, bump %s, want present twice", m.Code.Status, m.Bump.Status)
	}

	// Warm runs take the line verdicts from the verdict memo (the third
	// from its bundle), and the version rules, which rewrite a result in
	// place, judge those, never their own earlier output: every run
	// reports what the cold one did.
	c := openCache(t, r.URL())
	sc := scan{pin: "v1.0.0", releases: "v1.*", patches: patches}
	for run := range 3 {
		again, err := sc.check(t, c)
		if err != nil {
			t.Fatalf("run %d: Check() = %v", run+1, err)
		}
		for i := range rep.Patches {
			got, want := again.Patches[i], rep.Patches[i]
			if !reflect.DeepEqual(got.Results, want.Results) || got.ObsoletedBy != want.ObsoletedBy || got.Commit != want.Commit {
				t.Errorf("run %d on one cache, patch %d:\n got %q %s %+v\nwant %q %s %+v", run+1, i+1,
					got.ObsoletedBy, got.Commit, got.Results, want.ObsoletedBy, want.Commit, want.Results)
			}
		}
	}
}
