package obsolete

import (
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// helperBlock is a test helper a patch adds to srv_test.go and upstream
// later moves to helpers_test.go, as coredns #8009 deduplicated the TSIG
// test helpers of #8006 into core/dnsserver/tsig_test.go.
const helperBlock = "type tsigChecker struct {\n\tcalled *bool\n\tcheck  func(error)\n}\n\nfunc newTsigChecker(called *bool) *tsigChecker {\n\treturn &tsigChecker{called: called}\n}\n"

// movedHelpers is an upstream pinned at v1.0.0 with srv.go and srv_test.go;
// fix is the patch (it changes srv.go, adds helperBlock to srv_test.go and
// uses it); dedupe is the patch of upstream's commit that moves the helper
// to helpers_test.go.
type movedHelpers struct {
	r           *gittest.Repo
	fix, dedupe string
	// land and move are upstream's commits of fix and dedupe.
	land, move string
	test       string // srv_test.go with fix
}

// newMovedHelpers makes the upstream; onBranch lands fix on a topic branch
// merged into main with a merge commit, beside a commit of main's own.
func newMovedHelpers(t *testing.T, onBranch bool) *movedHelpers {
	t.Helper()
	fx := &movedHelpers{}
	r := gittest.New(t)
	fx.r = r
	base, testBase := numbered("s", 30), numbered("t", 30)
	r.Write("srv.go", base)
	r.Write("srv_test.go", testBase)
	r.Release("initial", "v1.0.0")
	fixed := replaceLine(t, base, "s10", "s10 verify(tsig)")
	fx.test = replaceLine(t, replaceLine(t, testBase, "t3", "t3\n\n"+helperBlock), "t30", "t30 newTsigChecker(&called)")
	files := map[string]string{"srv.go": fixed, "srv_test.go": fx.test}
	fx.fix = makePatch(r, "v1.0.0", "main", "core: add full TSIG verification", files)
	if onBranch {
		r.Git("checkout", "-q", "-b", "tsig", "v1.0.0")
	}
	for p, c := range files {
		r.Write(p, c)
	}
	fx.land = r.Commit("core: add full TSIG verification")
	if onBranch {
		r.Git("checkout", "-q", "main")
		r.Write("other.txt", "main's own\n")
		r.Commit("main's own change")
		r.Git("merge", "-q", "--no-ff", "-m", "Merge branch tsig", "tsig")
	}
	r.Tag("v1.1.0")
	r.Write("srv_test.go", replaceLine(t, fx.test, "t3\n\n"+helperBlock, "t3"))
	r.Write("helpers_test.go", "package x\n\n"+helperBlock)
	fx.move = r.Release("test: deduplicate TSIG test helpers", "v1.2.0")
	fx.dedupe = "Subject: test: deduplicate TSIG test helpers\n\n" + r.Show(fx.move)
	return fx
}

// TestCheckPatchIDHunkMoved: upstream lands the patch as a commit with its
// patch-id, then moves the helper the patch adds to another file: the hunk
// that adds it applies again, but its lines are in helpers_test.go, where the
// moving commit put them, and none of its removed lines is back: the patch-id
// commit still decides (present, the hunk moved). The next patch of the
// series, upstream's move itself, reverse-applies: present too, since the
// moved hunk is not applied for it (before, both were partial: coredns #19
// and #21 at v1.14.3). Once upstream deletes the moved helper, the lines are
// nowhere: the hunk that applies again is a revert.
func TestCheckPatchIDHunkMoved(t *testing.T) {
	fx := newMovedHelpers(t, false)
	r := fx.r
	r.Remove("helpers_test.go")
	r.Release("drop the helpers", "v1.3.0")

	patches := []string{fx.fix, fx.dedupe}
	parsed := parsePatches(t, patches)
	for k, c := range []string{fx.land, fx.move} {
		if g := gitPatchID(t, r, c); g != parsed[k].PatchID {
			t.Fatalf("git patch-id --stable of %s = %s, patch %d's = %s", c, g, k+1, parsed[k].PatchID)
		}
	}
	if !gitApplies(t, r, "v1.2.0", fx.dedupe, true) {
		t.Fatal("git apply -R --check of the dedupe patch fails at v1.2.0")
	}
	if _, unit := helperUnit(t, fx.fix); !gitApplies(t, r, "v1.2.0", unit, false) {
		t.Fatal("git apply --check of the helper hunk fails at v1.2.0: it should apply again")
	}

	rep := scan{pin: "v1.0.0", releases: "v1.*", patches: patches}.run(t, r.URL())
	for _, tc := range []struct {
		name         string
		patch        int
		ref          string
		status, via  string
		commit       string
		movedHunkVia string
	}{
		{"landed", 0, "v1.1.0", StatusPresent, ViaReverseApply, fx.land, ""},
		{"moved", 0, "v1.2.0", StatusPresent, ViaPatchID, fx.land, ViaMoved},
		{"next patch after the move", 1, "v1.2.0", StatusPresent, ViaReverseApply, fx.move, ""},
		{"moved lines deleted", 0, "v1.3.0", StatusPartial, ViaHunks, fx.land, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := result(t, rep, tc.patch, tc.ref)
			if res.Status != tc.status || res.Via != tc.via || res.Commit != tc.commit {
				t.Fatalf("%s patch %d = %s via %s commit %s, want %s via %s commit %s (%s)", tc.ref, tc.patch+1, res.Status, res.Via, Short(res.Commit), tc.status, tc.via, Short(tc.commit), res.Evidence)
			}
			if tc.movedHunkVia == "" {
				return
			}
			line, _ := helperUnit(t, fx.fix)
			for _, h := range res.Hunks {
				if h.Line == line {
					if h.Status != StatusPresent || h.Via != tc.movedHunkVia || h.Commit != fx.land {
						t.Errorf("helper hunk = %s via %s commit %s, want present via %s commit %s", h.Status, h.Via, Short(h.Commit), tc.movedHunkVia, Short(fx.land))
					}
					return
				}
			}
			t.Errorf("no helper hunk in %+v", res.Hunks)
		})
	}
	if !strings.Contains(result(t, rep, 0, "v1.2.0").Evidence, "1 moved elsewhere by upstream since") {
		t.Errorf("v1.2.0 evidence = %q, want the moved hunk named", result(t, rep, 0, "v1.2.0").Evidence)
	}
	oracle(t, r, scan{pin: "v1.0.0", releases: "v1.*", patches: patches[:1]}.run(t, r.URL()), patches[:1])
}

// helperUnit returns the hunk of patch text that adds helperBlock: its line
// in the patch, and it as a patch.
func helperUnit(t *testing.T, text string) (int, string) {
	t.Helper()
	for _, u := range splitUnits(parsePatches(t, []string{text})[0]) {
		if b := string(u.patch.Bytes()); strings.Contains(b, "+type tsigChecker struct {") {
			return u.line, b
		}
	}
	t.Fatal("no helper hunk")
	return 0, ""
}

// TestCheckPatchIDHunkMovedAcrossBranches: the same, with the patch-id
// commit on a topic branch merged into main, the pin on a release branch
// (the range crosses release branches), and again from a shallow clone whose
// boundary is the release branch's tip: the patch-id lookup finds the
// commit in each, and the move keeps it deciding.
func TestCheckPatchIDHunkMovedAcrossBranches(t *testing.T) {
	fx := newMovedHelpers(t, true)
	r := fx.r
	r.Git("checkout", "-q", "-b", "release-1.0", "v1.0.0")
	r.Write("release.txt", "backport\n")
	r.Release("release only", "v1.0.1")
	r.Git("checkout", "-q", "main")
	if out := r.Git("rev-list", "--merges", "v1.0.1..v1.2.0"); out == "" {
		t.Fatal("no merge commit in v1.0.1..v1.2.0")
	}

	shallow := t.TempDir()
	if _, errOut, err := gittest.Run(shallow, nil, "clone", "-q", "--bare", "--depth", "1", "--branch", "release-1.0", r.URL(), "up.git"); err != nil {
		t.Fatalf("git clone --depth: %v %s", err, errOut)
	}
	if _, errOut, err := gittest.Run(shallow+"/up.git", nil, "fetch", "-q", "--depth", "4", "origin", "+refs/heads/main:refs/heads/main", "+refs/tags/*:refs/tags/*"); err != nil {
		t.Fatalf("git fetch --depth: %v %s", err, errOut)
	}
	if out, _, _ := gittest.Run(shallow+"/up.git", nil, "rev-parse", "--is-shallow-repository"); strings.TrimSpace(out) != "true" {
		t.Fatal("the upstream is not shallow")
	}
	for _, tc := range []struct{ name, url string }{
		{"full", r.URL()},
		{"shallow", "file://" + shallow + "/up.git"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := scan{pin: "v1.0.1", releases: "v1.*", patches: []string{fx.fix, fx.dedupe}}.run(t, tc.url)
			for _, want := range []struct {
				patch  int
				ref    string
				via    string
				commit string
			}{
				{0, "v1.1.0", ViaReverseApply, fx.land},
				{0, "v1.2.0", ViaPatchID, fx.land},
				{1, "v1.2.0", ViaReverseApply, fx.move},
			} {
				res := result(t, rep, want.patch, want.ref)
				if res.Status != StatusPresent || res.Via != want.via || res.Commit != want.commit {
					t.Errorf("%s patch %d = %s via %s commit %s, want present via %s commit %s (%s)", want.ref, want.patch+1, res.Status, res.Via, Short(res.Commit), want.via, Short(want.commit), res.Evidence)
				}
			}
		})
	}
}

// handlerFile is a.go at the pin: handle between filler lines; fn is
// handle's body with extra inserted after its validation.
func handlerFile(fn string) string {
	return "package x\n\n" + numbered("a", 20) + fn + numbered("b", 20)
}

// handleFunc is handle with extra after its validation.
func handleFunc(extra string) string {
	return "func handle(req *Request) error {\n\tif err := validate(req); err != nil {\n\t\treturn err\n\t}\n" + extra + "\treturn serve(req)\n}\n"
}

// TestCheckSupersededSurvivesMove: upstream lands the patch's fix its own way
// (its check with a metrics line in the middle: superseded by the changed
// lines, naming that commit), then a refactor moves handle() to handler.go.
// The lines are found where the refactor moved them (as `git log -S` follows
// them): still superseded, naming the commit that landed them. Once upstream
// drops the check from handler.go, nothing of it is left: conflict.
func TestCheckSupersededSurvivesMove(t *testing.T) {
	r := gittest.New(t)
	base := handlerFile(handleFunc(""))
	r.Write("a.go", base)
	r.Release("initial", "v1.0.0")
	check := "\tif req.Tsig != nil && !verify(req.Tsig) {\n\t\tlog.Printf(\"bad tsig from %s\", req.From)\n\t\treturn errBadTsig\n\t}\n"
	patch := makePatch(r, "v1.0.0", "main", "verify tsig", map[string]string{"a.go": handlerFile(handleFunc(check))})
	own := "\tif req.Tsig != nil && !verify(req.Tsig) {\n\t\tmetrics.BadTsig.Inc()\n\t\tlog.Printf(\"bad tsig from %s\", req.From)\n\t\treturn errBadTsig\n\t}\n"
	r.Write("a.go", handlerFile(handleFunc(own)))
	land := r.Release("verify tsig, counted", "v1.1.0")
	r.Write("a.go", "package x\n\n"+numbered("a", 20)+numbered("b", 20))
	r.Write("handler.go", "package x\n\n"+handleFunc(own))
	move := r.Release("refactor: handle in its own file", "v1.2.0")
	r.Write("handler.go", "package x\n\n"+handleFunc(""))
	r.Release("drop the tsig check", "v1.3.0")

	// git's view: the pickaxe finds the landing commit first, then the
	// move, which adds the line to handler.go.
	first := "if req.Tsig != nil && !verify(req.Tsig) {"
	if got, want := strings.Fields(r.Git("log", "--reverse", "--format=%H", "-S"+first, "v1.0.0..v1.2.0")), []string{land, move}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("git log -S = %v, want the landing then the move %v", got, want)
	}
	if got := strings.TrimSpace(r.Git("log", "--format=%H", "-S"+first, "v1.0.0..v1.2.0", "--", "handler.go")); got != move {
		t.Fatalf("git log -S -- handler.go = %q, want the move %s", got, move)
	}
	if gitApplies(t, r, "v1.2.0", patch, false) || gitApplies(t, r, "v1.2.0", patch, true) {
		t.Fatal("git applies the patch at v1.2.0 in some direction")
	}

	rep := scan{pin: "v1.0.0", releases: "v1.*", patches: []string{patch}}.run(t, r.URL())
	for _, tc := range []struct {
		name, ref, status, commit string
	}{
		{"landed its own way", "v1.1.0", StatusSuperseded, land},
		{"moved to another file", "v1.2.0", StatusSuperseded, land},
		{"dropped from the file it moved to", "v1.3.0", StatusConflict, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := result(t, rep, 0, tc.ref)
			if res.Status != tc.status || res.Commit != tc.commit {
				t.Errorf("%s = %s commit %s, want %s commit %s (%s)", tc.ref, res.Status, Short(res.Commit), tc.status, Short(tc.commit), res.Evidence)
			}
		})
	}
	if p := rep.Patches[0]; p.ObsoletedBy != "v1.1.0" || p.NeededAgainAt != "v1.3.0" {
		t.Errorf("obsoletedBy %q neededAgainAt %q, want v1.1.0 v1.3.0", p.ObsoletedBy, p.NeededAgainAt)
	}
	oracle(t, r, rep, []string{patch})
}

// TestCheckLandedHunkSurvivesMove: upstream lands both hunks of the patch
// verbatim (with a docs file: another patch-id), then a refactor moves
// handle(), where the first hunk is, to handler.go. The first hunk is in
// conflict in a.go, but its own lines are in handler.go, where the refactor
// moved them: still carried, landed by the same commit, so the patch stays
// present (it was partial, the moved hunk taken as needed).
func TestCheckLandedHunkSurvivesMove(t *testing.T) {
	r := gittest.New(t)
	r.Write("a.go", handlerFile(handleFunc("")))
	r.Release("initial", "v1.0.0")
	check := "\tif req.Tsig != nil && !verify(req.Tsig) {\n\t\tlog.Printf(\"bad tsig from %s\", req.From)\n\t\treturn errBadTsig\n\t}\n"
	fixed := replaceLine(t, handlerFile(handleFunc(check)), "b15", "b15 fixed")
	patch := makePatch(r, "v1.0.0", "main", "verify tsig", map[string]string{"a.go": fixed})
	r.Write("a.go", fixed)
	r.Write("NEWS", "tsig verified\n")
	land := r.Release("verify tsig (#12)", "v1.1.0")
	r.Write("a.go", replaceLine(t, "package x\n\n"+numbered("a", 20)+numbered("b", 20), "b15", "b15 fixed"))
	r.Write("handler.go", "package x\n\n"+handleFunc(check))
	r.Release("refactor: handle in its own file", "v1.2.0")

	if g := gitPatchID(t, r, land); g == parsePatches(t, []string{patch})[0].PatchID {
		t.Fatal("the landing commit has the patch's patch-id; the test needs another")
	}
	rep := scan{pin: "v1.0.0", releases: "v1.*", patches: []string{patch}}.run(t, r.URL())
	res := result(t, rep, 0, "v1.2.0")
	if res.Status != StatusPresent || res.Commit != land {
		t.Fatalf("v1.2.0 = %s via %s commit %s, want present commit %s (%s)", res.Status, res.Via, Short(res.Commit), Short(land), res.Evidence)
	}
	if got, want := hunkCommits(res, map[string]string{land: "land"}), "present/landed@land present/reverse-apply@land"; got != want {
		t.Errorf("hunks = %s, want %s", got, want)
	}
	oracle(t, r, rep, []string{patch})
}
