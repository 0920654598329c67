package obsolete

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/spec"

	"github.com/patchkit/patchkit/internal/gittest"
)

const eBase = `package e

func f() error {
	x := 1
	return use(x)
}

func g() {}
`

// eOurs is the downstream fix: retry while the target is not scheduled.
const eOurs = `package e

func f() error {
	if target.Unscheduled() {
		log.Info("target pod not scheduled yet")
		return requeue(target)
	}
	x := 1
	return use(x)
}

func g() {}
`

// eUpstream is upstream's own version of the same fix, in another form.
const eUpstream = `package e

func f() error {
	// Wait for the target pod.
	if target.Unscheduled() {
		log.Info("target pod not scheduled yet")
		return requeue(target)
	}
	y := compute()
	return use(y)
}

func g() {}
`

// statusFixture is an upstream where v1.1.0 gives each patch of its series a
// different status, and the branch main moves on after v1.1.0.
type statusFixture struct {
	up                  *gittest.Repo
	patches             []string
	landC, landD, landE string
	v110                string
}

func newStatusFixture(t *testing.T) *statusFixture {
	t.Helper()
	r := gittest.New(t)
	a, c, d, f := numbered("a", 20), numbered("c", 10), numbered("d", 30), numbered("f", 10)
	r.Write("a.txt", a)
	r.Write("c.txt", c)
	r.Write("d.txt", d)
	r.Write("src/e.go", eBase)
	r.Write("f.txt", f)
	r.Release("initial", "v1.0.0")
	fx := &statusFixture{up: r}

	d2 := replaceLine(t, replaceLine(t, d, "d3", "D3"), "d25", "D25")
	fx.patches = []string{
		makePatch(r, "v1.0.0", "main", "applies", map[string]string{"a.txt": replaceLine(t, a, "a10", "A10")}),
		makePatch(r, "v1.0.0", "main", "present", map[string]string{"c.txt": replaceLine(t, c, "c5", "C5")}),
		makePatch(r, "v1.0.0", "main", "partial", map[string]string{"d.txt": d2}),
		makePatch(r, "v1.0.0", "main", "superseded", map[string]string{"src/e.go": eOurs}),
		makePatch(r, "v1.0.0", "main", "conflict", map[string]string{"f.txt": replaceLine(t, f, "f5", "F5")}),
	}

	r.Write("a.txt", "top1\ntop2\n"+a)
	r.Commit("a: two lines on top")
	r.Write("c.txt", replaceLine(t, c, "c5", "C5"))
	fx.landC = r.Commit("c: land C5")
	r.Write("d.txt", replaceLine(t, d, "d3", "D3"))
	fx.landD = r.Commit("d: land D3 only")
	r.Write("src/e.go", eUpstream)
	fx.landE = r.Commit("e: requeue unscheduled targets")
	r.Write("f.txt", replaceLine(t, f, "f5", "f5 changed upstream"))
	r.Release("f: change f5", "v1.1.0")
	fx.v110 = r.Head()
	r.Write("unrelated.txt", "x\n")
	r.Commit("unrelated")
	return fx
}

func TestCheckStatuses(t *testing.T) {
	fx := newStatusFixture(t)
	rep := scan{pin: "v1.0.0", releases: "v*", branches: []string{"main"}, patches: fx.patches}.run(t, fx.up.URL())

	if got, want := refNames(rep), "v1.1.0 main"; got != want {
		t.Fatalf("refs = %q, want %q", got, want)
	}
	tests := []struct {
		name        string
		patch       int
		status      string
		via         string
		commit      string
		obsoletedBy string
		evidence    string
	}{
		{name: "applies with offset", patch: 0, status: StatusApplies, via: ViaApply, evidence: "applies with offsets: a.txt @@ -7,7 +7,7 @@ +2"},
		{name: "present by reverse-apply", patch: 1, status: StatusPresent, via: ViaReverseApply, commit: fx.landC, obsoletedBy: "v1.1.0", evidence: "reverse-applies cleanly"},
		{name: "partial", patch: 2, status: StatusPartial, via: ViaHunks, commit: fx.landD, evidence: "hunks already upstream: d.txt @@ -1,6 +1,6 @@"},
		{name: "superseded", patch: 3, status: StatusSuperseded, via: ViaCarried, commit: fx.landE, obsoletedBy: "v1.1.0", evidence: "every hunk's change is there (1 by their lines in their own context)"},
		{name: "conflict", patch: 4, status: StatusConflict, via: ViaApply, evidence: "hunk #1 does not apply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, ref := range []string{"v1.1.0", "main"} {
				r := result(t, rep, tt.patch, ref)
				if r.Status != tt.status || r.Via != tt.via {
					t.Errorf("%s: status = %s via %s, want %s via %s (%s)", ref, r.Status, r.Via, tt.status, tt.via, r.Evidence)
				}
				if r.Commit != tt.commit {
					t.Errorf("%s: commit = %s, want %s", ref, r.Commit, tt.commit)
				}
				if !strings.Contains(r.Evidence, tt.evidence) {
					t.Errorf("%s: evidence = %q, want it to contain %q", ref, r.Evidence, tt.evidence)
				}
			}
			p := rep.Patches[tt.patch]
			if p.ObsoletedBy != tt.obsoletedBy {
				t.Errorf("obsoletedBy = %q, want %q", p.ObsoletedBy, tt.obsoletedBy)
			}
			if tt.obsoletedBy != "" && p.Commit != tt.commit {
				t.Errorf("commit = %q, want %q", p.Commit, tt.commit)
			}
		})
	}

	partial := result(t, rep, 2, "v1.1.0")
	if len(partial.Hunks) != 2 || partial.Hunks[0].Status != StatusPresent || partial.Hunks[1].Status != StatusApplies {
		t.Errorf("partial hunks = %+v, want the first present and the second applying", partial.Hunks)
	}
	conflict := result(t, rep, 4, "v1.1.0")
	if conflict.Conflict == nil || conflict.Conflict.Hunk == "" || conflict.Conflict.File != "patches/test/0005.diff" || conflict.Conflict.Line == 0 {
		t.Errorf("conflict problem = %+v, want the failing hunk with its patch file and line", conflict.Conflict)
	}
	if !rep.Findings() {
		t.Errorf("Findings() = false, want true")
	}
}

// TestCheckPatchIDOnly: upstream lands the change, then edits the lines
// around it, so the patch no longer reverse-applies; only the patch-id of the
// commit finds it. A release branch carries the change as a cherry-pick,
// under another commit id.
func TestCheckPatchIDOnly(t *testing.T) {
	r, base := pinned(t, "x.txt", "line", 12)
	fixed := replaceLine(t, base, "line6", "line6 fixed")
	patch := makePatch(r, "v1.0.0", "main", "fix line6", map[string]string{"x.txt": fixed})

	r.Write("x.txt", fixed)
	land := r.Commit("fix line6")
	r.Write("x.txt", replaceLine(t, replaceLine(t, fixed, "line5", "line5 reworded"), "line7", "line7 reworded"))
	r.Release("reword the neighbours", "v1.1.0")

	pick := releasePick(r, land)
	r.Write("x.txt", replaceLine(t, fixed, "line7", "line7 on the branch"))
	r.Release("branch rewording", "v1.0.1")
	r.Git("checkout", "-q", "main")

	rep := scan{pin: "v1.0.0", releases: "v*", patches: []string{patch}}.run(t, r.URL())
	if got, want := refNames(rep), "v1.0.1 v1.1.0"; got != want {
		t.Fatalf("refs = %q, want %q", got, want)
	}
	for ref, want := range map[string]string{"v1.0.1": pick, "v1.1.0": land} {
		res := result(t, rep, 0, ref)
		if res.Status != StatusPresent || res.Via != ViaPatchID || res.Commit != want {
			t.Errorf("%s: %s via %s commit %s, want present via patch-id commit %s (%s)", ref, res.Status, res.Via, res.Commit, want, res.Evidence)
		}
	}
	if p := rep.Patches[0]; p.ObsoletedBy != "v1.0.1" || p.Commit != pick {
		t.Errorf("obsoletedBy = %s %s, want v1.0.1 %s", p.ObsoletedBy, p.Commit, pick)
	}
}

// TestCheckRevert: the change ships in v1.1.0 and is reverted before v1.2.0.
func TestCheckRevert(t *testing.T) {
	r, base := pinned(t, "r.txt", "l", 10)
	fixed := replaceLine(t, base, "l4", "l4 fixed")
	patch := makePatch(r, "v1.0.0", "main", "fix l4", map[string]string{"r.txt": fixed})
	r.Write("r.txt", fixed)
	land := r.Release("fix l4", "v1.1.0")
	r.Git("revert", "--no-edit", land)
	r.Tag("v1.2.0")

	rep := scan{pin: "v1.0.0", releases: "v1.*", patches: []string{patch}}.run(t, r.URL())
	if got, want := statuses(rep, 0), "v1.1.0=present v1.2.0=applies"; got != want {
		t.Errorf("statuses = %q, want %q", got, want)
	}
	p := rep.Patches[0]
	if p.ObsoletedBy != "v1.1.0" || p.Commit != land || p.NeededAgainAt != "v1.2.0" {
		t.Errorf("obsoletedBy %q commit %q neededAgainAt %q; want v1.1.0 %s v1.2.0", p.ObsoletedBy, p.Commit, p.NeededAgainAt, land)
	}
}

// TestCheckEarlierPatchPresent: the second patch was made on top of the
// first; once upstream carries the first, the second must be tested against
// upstream's version of it, not conflict with a re-applied first patch.
func TestCheckEarlierPatchPresent(t *testing.T) {
	r, base := pinned(t, "s.txt", "s", 12)
	one := replaceLine(t, base, "s5", "s5 first")
	two := replaceLine(t, one, "s6", "s6 second")
	p1 := makePatch(r, "v1.0.0", "main", "first", map[string]string{"s.txt": one})
	r.Git("checkout", "-q", "--detach", "v1.0.0")
	r.Write("s.txt", one)
	mid := r.Commit("first, downstream")
	r.Git("checkout", "-q", "main")
	p2 := makePatch(r, mid, "main", "second", map[string]string{"s.txt": two})

	r.Write("other.txt", "other\n")
	r.Release("unrelated", "v1.0.1")
	r.Write("s.txt", one)
	r.Release("upstream takes the first", "v1.1.0")

	rep := scan{pin: "v1.0.0", releases: "v*", patches: []string{p1, p2}}.run(t, r.URL())
	// At v1.0.1 the second patch applies only on top of the first; at
	// v1.1.0 it applies on upstream's copy of the first.
	if got, want := statuses(rep, 0), "v1.0.1=applies v1.1.0=present"; got != want {
		t.Errorf("patch 1: %q, want %q", got, want)
	}
	if got, want := statuses(rep, 1), "v1.0.1=applies v1.1.0=applies"; got != want {
		t.Errorf("patch 2: %q, want %q", got, want)
	}
}

// TestCheckTagOrder: tags created out of version order are scanned in
// version order; tags that are not semantic versions come after, by commit
// date, flagged.
func TestCheckTagOrder(t *testing.T) {
	r, base := pinned(t, "t.txt", "t", 10)
	fixed := replaceLine(t, base, "t3", "t3 fixed")
	patch := makePatch(r, "v1.0.0", "main", "fix t3", map[string]string{"t.txt": fixed})

	r.Write("n.txt", "1\n")
	r.Release("for v1.10.0", "v1.10.0") // created first
	r.Write("t.txt", fixed)
	r.Release("fix t3", "nightly-b") // not semver, older commit
	r.Write("n.txt", "2\n")
	r.Release("more", "v1.11.0")
	r.Tag("nightly-a") // not semver, newer commit, sorts first by name

	r.Git("checkout", "-q", "-b", "release-1.9", "v1.0.0")
	r.Write("t.txt", fixed)
	r.Release("fix t3 on 1.9", "v1.9.0") // created last
	r.Write("n.txt", "9\n")
	r.Release("1.9.1", "v1.9.1")
	r.Tag("1.9.2") // no leading v: still semver
	r.Git("checkout", "-q", "main")

	rep := scan{pin: "v1.0.0", releases: "*", patches: []string{patch}}.run(t, r.URL())
	if got, want := refNames(rep), "v1.9.0 v1.9.1 1.9.2 v1.10.0 v1.11.0 nightly-b* nightly-a*"; got != want {
		t.Errorf("refs = %q, want %q", got, want)
	}
	if got, want := statuses(rep, 0), "v1.9.0=present v1.9.1=present 1.9.2=present v1.10.0=applies v1.11.0=present nightly-b=present nightly-a=present"; got != want {
		t.Errorf("statuses = %q, want %q", got, want)
	}
	if p := rep.Patches[0]; p.ObsoletedBy != "v1.9.0" || p.NeededAgainAt != "v1.10.0" {
		t.Errorf("obsoletedBy %q, neededAgainAt %q; want v1.9.0 and v1.10.0", p.ObsoletedBy, p.NeededAgainAt)
	}
}

// TestCheckShallow: a cache of a shallow upstream, whose range walk meets
// the shallow boundary, gives verdicts without error.
func TestCheckShallow(t *testing.T) {
	r := gittest.New(t)
	base := numbered("h", 10)
	r.Write("h.txt", base)
	r.Commit("c1")
	r.Write("h.txt", replaceLine(t, base, "h9", "h9 c2"))
	c2 := r.Commit("c2")
	r.Write("z.txt", "z\n")
	r.Release("c3", "v1.0.0")
	fixed := replaceLine(t, replaceLine(t, base, "h9", "h9 c2"), "h2", "h2 fixed")
	patch := makePatch(r, "v1.0.0", "main", "fix h2", map[string]string{"h.txt": fixed})
	r.Write("h.txt", fixed)
	r.Release("c4: fix h2", "v1.1.0")
	r.Git("checkout", "-q", "-b", "other", c2)
	r.Write("o.txt", "o\n")
	r.Release("o1", "v1.0.1")
	r.Git("checkout", "-q", "main")

	shallow := t.TempDir()
	if _, errOut, err := gittest.Run(shallow, nil, "clone", "-q", "--bare", "--depth", "2", "--no-single-branch", r.URL(), "up.git"); err != nil {
		t.Fatalf("git clone --depth: %v %s", err, errOut)
	}
	url := "file://" + shallow + "/up.git"
	if out, _, _ := gittest.Run(shallow+"/up.git", nil, "rev-parse", "--is-shallow-repository"); strings.TrimSpace(out) != "true" {
		t.Fatalf("the upstream is not shallow")
	}
	rep := scan{pin: "v1.0.0", releases: "v*", patches: []string{patch}}.run(t, url)
	if got, want := statuses(rep, 0), "v1.0.1=applies v1.1.0=present"; got != want {
		t.Errorf("statuses = %q, want %q", got, want)
	}
}

// TestCheckExplicitRefs: --refs replaces the releases and branches, in the
// order given.
func TestCheckExplicitRefs(t *testing.T) {
	fx := newStatusFixture(t)
	rep := scan{pin: "v1.0.0", releases: "v*", branches: []string{"main"}, refs: []string{"main", fx.v110, "v1.1.0", "main"}, patches: fx.patches[:2]}.run(t, fx.up.URL())
	var got []string
	for _, r := range rep.Refs {
		got = append(got, r.Name+":"+r.Kind)
	}
	if want := "main:branch " + fx.v110 + ":commit v1.1.0:tag"; strings.Join(got, " ") != want {
		t.Errorf("refs = %q, want %q", strings.Join(got, " "), want)
	}
	if p := rep.Patches[1]; p.ObsoletedBy != "v1.1.0" {
		t.Errorf("obsoletedBy = %q, want v1.1.0 (branches and commits are not releases)", p.ObsoletedBy)
	}
}

// TestCheckMemoIsExact: refs whose touched files are the same get the same
// verdicts, and the commit evidence still follows each ref.
func TestCheckMemoIsExact(t *testing.T) {
	r, base := pinned(t, "m.txt", "m", 10)
	fixed := replaceLine(t, base, "m4", "m4 fixed")
	patch := makePatch(r, "v1.0.0", "main", "fix m4", map[string]string{"m.txt": fixed})
	for _, v := range []string{"v1.0.1", "v1.0.2"} {
		r.Write("other.txt", v+"\n")
		r.Release(v, v)
	}
	r.Write("m.txt", fixed)
	land := r.Release("fix m4", "v1.0.3")
	r.Write("other.txt", "v1.0.4\n")
	r.Release("v1.0.4", "v1.0.4")
	rep := scan{pin: "v1.0.0", releases: "v*", patches: []string{patch}}.run(t, r.URL())
	if got, want := statuses(rep, 0), "v1.0.1=applies v1.0.2=applies v1.0.3=present v1.0.4=present"; got != want {
		t.Errorf("statuses = %q, want %q", got, want)
	}
	for _, ref := range []string{"v1.0.3", "v1.0.4"} {
		if res := result(t, rep, 0, ref); res.Commit != land {
			t.Errorf("%s: commit = %s, want %s", ref, res.Commit, land)
		}
	}
}

// TestCheckNeedsGit: without the git CLI, Check says what it needs.
func TestCheckNeedsGit(t *testing.T) {
	fx := newStatusFixture(t)
	c, pin := fx.openPinned(t)
	in := Input{Cache: c, Spec: &spec.Spec{Upstream: spec.Upstream{Ref: "v1.0.0", Releases: "v*"}}, PinCommit: pin, Patches: parsePatches(t, fx.patches)}
	_, err := Check(context.Background(), in, withGit(filepath.Join(t.TempDir(), "no-git")))
	if err == nil || !strings.Contains(err.Error(), "needs the git CLI") {
		t.Errorf("Check() without git = %v, want an error saying it needs the git CLI", err)
	}
}

// TestCheckMissingBranch: a configured branch the upstream lacks is bad
// input naming the spec key.
func TestCheckMissingBranch(t *testing.T) {
	fx := newStatusFixture(t)
	_, err := scan{pin: "v1.0.0", releases: "v*", branches: []string{"release-9"}, patches: fx.patches}.check(t, openCache(t, fx.up.URL()))
	var ie *diag.InputError
	if !errors.As(err, &ie) || ie.Key != "upstream.branches[0]" {
		t.Errorf("Check() = %v, want an InputError for upstream.branches[0]", err)
	}
}

// TestCheckPresentNamesCommit: upstream lands the change together with other
// files, so no commit has the patch's patch-id; the result still names the
// commit after which the patch reverse-applies.
func TestCheckPresentNamesCommit(t *testing.T) {
	r, base := pinned(t, "k.txt", "k", 10)
	fixed := replaceLine(t, base, "k5", "k5 fixed")
	patch := makePatch(r, "v1.0.0", "main", "fix k5", map[string]string{"k.txt": fixed})
	r.Write("k.txt", replaceLine(t, base, "k5", "k5 half"))
	r.Commit("a first attempt")
	r.Write("k.txt", fixed)
	r.Write("docs.txt", "k5 is fixed\n")
	land := r.Commit("fix k5, with docs")
	r.Write("other.txt", "x\n")
	r.Release("later", "v1.1.0")

	rep := scan{pin: "v1.0.0", releases: "v*", patches: []string{patch}}.run(t, r.URL())
	res := result(t, rep, 0, "v1.1.0")
	if res.Status != StatusPresent || res.Via != ViaReverseApply || res.Commit != land || res.Subject != "fix k5, with docs" {
		t.Errorf("v1.1.0: %s via %s commit %s %q, want present via reverse-apply commit %s", res.Status, res.Via, res.Commit, res.Subject, land)
	}
	if !strings.Contains(res.Evidence, "brought the change") {
		t.Errorf("evidence = %q, want it to name the commit that brought the change", res.Evidence)
	}
}
