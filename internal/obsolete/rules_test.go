package obsolete

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// gitPatchID is `git patch-id --stable` of commit's diff, by the git CLI.
func gitPatchID(t *testing.T, r *gittest.Repo, commit string) string {
	t.Helper()
	out, _, err := r.GitIn([]byte(r.Git("show", commit)+"\n"), "patch-id", "--stable")
	if err != nil || out == "" {
		t.Fatalf("git patch-id of %s: %v", commit, err)
	}
	return strings.Fields(out)[0]
}

// gitApplies says whether `git apply [-R] --check` of text succeeds at commit.
func gitApplies(t *testing.T, r *gittest.Repo, commit, text string, reverse bool) bool {
	t.Helper()
	f := filepath.Join(t.TempDir(), "p.diff")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(t.TempDir(), "wt")
	r.Git("worktree", "add", "-q", "--detach", wt, commit)
	defer r.Git("worktree", "remove", "--force", wt)
	args := []string{"apply", "--check"}
	if reverse {
		args = append(args, "-R")
	}
	_, _, err := gittest.Run(wt, nil, append(args, f)...)
	return err == nil
}

// hunkCommits says "status/via@commit" per hunk, the commit by its tag in
// names ("" when none).
func hunkCommits(res Result, names map[string]string) string {
	var out []string
	for _, h := range res.Hunks {
		out = append(out, fmt.Sprintf("%s/%s@%s", h.Status, h.Via, names[h.Commit]))
	}
	return strings.Join(out, " ")
}

// TestCheckPatchIDDecides: upstream lands the patch as a commit with its
// patch-id (on main, and as a cherry-pick on a release branch), then edits
// the lines around one hunk so that neither the hunk nor its lines in their
// context are there: the patch stays present by that commit, at every later
// ref that carries it, until upstream reverts a hunk.
func TestCheckPatchIDDecides(t *testing.T) {
	r := gittest.New(t)
	var b strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&b, "m%d\n", i)
		if i%10 == 0 {
			b.WriteString("return nil\n")
		}
	}
	base := b.String()
	r.Write("m.go", base)
	r.Release("initial", "v1.0.0")
	fixed := replaceLine(t, replaceLine(t, base, "m5", "m5 fixed"), "m44", "m44\nreturn nil")
	patch := makePatch(r, "v1.0.0", "main", "fix m5, return after m44", map[string]string{"m.go": fixed})

	r.Write("m.go", fixed)
	land := r.Release("fix m5, return after m44", "v1.1.0")
	edited := replaceLine(t, replaceLine(t, fixed, "m44", "m44 reworded"), "m45", "m45 reworded")
	r.Write("m.go", edited)
	r.Release("reword m44 and m45", "v1.2.0")
	r.Write("m.go", replaceLine(t, edited, "m30", "m30 reworded"))
	r.Release("reword m30", "v1.3.0")
	r.Write("m.go", replaceLine(t, replaceLine(t, edited, "m30", "m30 reworded"), "m5 fixed", "m5"))
	r.Release("revert the m5 fix", "v1.4.0")

	r.Git("checkout", "-q", "-b", "release-1.0", "v1.0.0")
	r.Git("cherry-pick", "-x", land)
	pick := r.Head()
	r.Tag("v1.0.1")
	r.Write("m.go", replaceLine(t, replaceLine(t, fixed, "m44", "m44 on the branch"), "m45", "m45 on the branch"))
	r.Release("branch rewording", "v1.0.2")
	r.Git("checkout", "-q", "main")

	patches := []string{patch}
	rep := scan{pin: "v1.0.0", releases: "v*", patches: patches}.run(t, r.URL())
	if got, want := statuses(rep, 0), "v1.0.1=present v1.0.2=present v1.1.0=present v1.2.0=present v1.3.0=present v1.4.0=partial"; got != want {
		t.Fatalf("statuses = %q, want %q", got, want)
	}
	id := parsePatches(t, patches)[0].PatchID
	if g := gitPatchID(t, r, land); g != id {
		t.Fatalf("git patch-id --stable of the landing commit = %s, the patch's = %s", g, id)
	}
	names := map[string]string{land: "land", pick: "pick", "": ""}
	tests := []struct {
		ref, via, commit, hunks string
	}{
		{"v1.0.1", ViaReverseApply, pick, ""},
		{"v1.0.2", ViaPatchID, pick, "present/reverse-apply@pick present/landed@pick"},
		{"v1.1.0", ViaReverseApply, land, ""},
		{"v1.2.0", ViaPatchID, land, "present/reverse-apply@land present/landed@land"},
		{"v1.3.0", ViaPatchID, land, "present/reverse-apply@land present/landed@land"},
		{"v1.4.0", ViaHunks, land, "applies/@ present/landed@land"},
	}
	for _, tt := range tests {
		res := result(t, rep, 0, tt.ref)
		if res.Via != tt.via || res.Commit != tt.commit || hunkCommits(res, names) != tt.hunks {
			t.Errorf("%s: %s via %s commit %s hunks %q; want via %s commit %s hunks %q (%s)",
				tt.ref, res.Status, res.Via, names[res.Commit], hunkCommits(res, names), tt.via, names[tt.commit], tt.hunks, res.Evidence)
		}
		if res.Status == StatusPresent && (len(res.Commits) != 1 || res.Commits[0].Commit != tt.commit) {
			t.Errorf("%s: commits = %+v, want the one that carries it", tt.ref, res.Commits)
		}
	}
	// The git CLI: at v1.2.0 the patch applies in neither direction, so only
	// the patch-id finds it.
	if gitApplies(t, r, "v1.2.0", patch, true) || gitApplies(t, r, "v1.2.0", patch, false) {
		t.Errorf("git applies the patch at v1.2.0 in some direction; the test needs neither")
	}
	p := rep.Patches[0]
	if p.ObsoletedBy != "v1.0.1" || p.Commit != pick || p.NeededAgainAt != "v1.4.0" {
		t.Errorf("obsoletedBy %q commit %q neededAgainAt %q; want v1.0.1 %s v1.4.0", p.ObsoletedBy, names[p.Commit], p.NeededAgainAt, "pick")
	}
	if ev := result(t, rep, 0, "v1.2.0").Evidence; !strings.Contains(ev, Short(land)) || !strings.Contains(ev, "same patch-id") {
		t.Errorf("v1.2.0 evidence = %q, want the patch-id commit", ev)
	}
	oracle(t, r, rep, patches)
}

// ownWayBase is a controller whose delete path a downstream patch changes in
// four places.
const ownWayBase = `package c

func (c *C) handleDelete(pod *Pod) error {
	ports, err := c.ports(pod)
	if err != nil {
		return err
	}
	isVM, vm := isVMPod(pod)
	if isVM && c.keepIP {
		v1()
		v2()
		v3()
		v4()
		v5()
		klog.Infof("try keep ip for vm pod %s", pod.Name)
		keep = true
	}
	if err := c.release(pod); err != nil {
		return err
	}
	a1()
	a2()
	a3()
	a4()
	a5()
	a6()
	if keep {
		// always remove lsp from port groups
		for _, port := range ports {
			klog.Infof("remove lsp %s from all port groups", port.Name)
			if err = c.removeFromGroups(port.Name); err != nil {
				return err
			}
		}
	} else {
		c.deletePorts(ports)
	}
	b1()
	b2()
	b3()
	b4()
	b5()
	b6()
	return nil
}

func isVMPod(pod *Pod) (bool, string) {
	return pod.VM != "", pod.VM
}

func other() {}
`

// ownWayOurs is the downstream patch: four hunks.
var ownWayOurs = strings.NewReplacer(
	"\tisVM, vm := isVMPod(pod)\n", "\tvar hasAliveSibling bool\n\tisVM, vm := isVMPod(pod)\n",
	"\t\tkeep = true\n", "\t\tkeep = true\n\t\tsiblings := c.pods(pod.Namespace)\n\t\thasAliveSibling = aliveSibling(siblings, vm, pod.Name)\n",
	`		// always remove lsp from port groups
		for _, port := range ports {
			klog.Infof("remove lsp %s from all port groups", port.Name)
			if err = c.removeFromGroups(port.Name); err != nil {
				return err
			}
		}
`, `		if hasAliveSibling {
			klog.Infof("skip removing lsp from port groups: vm %s has an alive pod", vm)
		} else {
			for _, port := range ports {
				klog.Infof("remove lsp %s from all port groups", port.Name)
				if err = c.removeFromGroups(port.Name); err != nil {
					return err
				}
			}
		}
`,
	"func other() {}\n", "func aliveSibling(pods []*Pod, vm, self string) bool {\n\tfor _, p := range pods {\n\t\tif p.Name != self && p.VM == vm && p.Alive {\n\t\t\treturn true\n\t\t}\n\t}\n\treturn false\n}\n\nfunc other() {}\n",
)

// ownWayUpstream is how upstream took it: three hunks verbatim, the if/else
// around the loop rewritten as a continue inside it.
var ownWayUpstream = strings.NewReplacer(
	"\tisVM, vm := isVMPod(pod)\n", "\tvar hasAliveSibling bool\n\tisVM, vm := isVMPod(pod)\n",
	"\t\tkeep = true\n", "\t\tkeep = true\n\t\tsiblings := c.pods(pod.Namespace)\n\t\thasAliveSibling = aliveSibling(siblings, vm, pod.Name)\n",
	`		// always remove lsp from port groups
		for _, port := range ports {
`, `		for _, port := range ports {
			if hasAliveSibling {
				klog.Infof("skip removing lsp %s from port groups: vm %s has an alive pod", port.Name, vm)
				continue
			}
`,
	"func other() {}\n", "func aliveSibling(pods []*Pod, vm, self string) bool {\n\tfor _, p := range pods {\n\t\tif p.Name != self && p.VM == vm && p.Alive {\n\t\t\treturn true\n\t\t}\n\t}\n\treturn false\n}\n\nfunc other() {}\n",
)

// ownWayPartial is an upstream that took the same three hunks and left the
// loop alone.
var ownWayPartial = strings.NewReplacer(
	"\tisVM, vm := isVMPod(pod)\n", "\tvar hasAliveSibling bool\n\tisVM, vm := isVMPod(pod)\n",
	"\t\tkeep = true\n", "\t\tkeep = true\n\t\tsiblings := c.pods(pod.Namespace)\n\t\thasAliveSibling = aliveSibling(siblings, vm, pod.Name)\n",
	"func other() {}\n", "func aliveSibling(pods []*Pod, vm, self string) bool {\n\tfor _, p := range pods {\n\t\tif p.Name != self && p.VM == vm && p.Alive {\n\t\t\treturn true\n\t\t}\n\t}\n\treturn false\n}\n\nfunc other() {}\n",
)

// TestCheckOwnWay: upstream takes a four-hunk patch in one commit, three
// hunks verbatim and the fourth rewritten in its own way: superseded, naming
// that commit with the hunks it carries and the one whose region it
// rewrote, and still so after upstream edits around a carried hunk. Where
// the same commit leaves the fourth hunk's region alone, the patch is
// partial, naming the commit of each upstream hunk.
func TestCheckOwnWay(t *testing.T) {
	r := gittest.New(t)
	r.Write("own.go", ownWayBase)
	r.Write("part.go", ownWayBase)
	r.Write("late.go", ownWayBase)
	r.Release("initial", "v1.0.0")
	patches := []string{
		makePatch(r, "v1.0.0", "main", "keep port groups of a vm with an alive sibling", map[string]string{"own.go": ownWayOurs.Replace(ownWayBase)}),
		makePatch(r, "v1.0.0", "main", "keep port groups of a vm with an alive sibling", map[string]string{"part.go": ownWayOurs.Replace(ownWayBase)}),
		makePatch(r, "v1.0.0", "main", "keep port groups of a vm with an alive sibling", map[string]string{"late.go": ownWayOurs.Replace(ownWayBase)}),
	}
	r.Write("unrelated.txt", "x\n")
	r.Commit("unrelated")
	parent := r.Head()
	r.Write("own.go", ownWayUpstream.Replace(ownWayBase))
	r.Write("part.go", ownWayPartial.Replace(ownWayBase))
	r.Write("late.go", ownWayPartial.Replace(ownWayBase))
	land := r.Release("keep VM port-group memberships when a sibling pod is alive", "v1.1.0")
	edit := func(s string) string {
		return strings.Replace(s, "c.pods(pod.Namespace)", "c.podsIn(pod.Namespace)", 1)
	}
	r.Write("own.go", edit(ownWayUpstream.Replace(ownWayBase)))
	r.Write("part.go", edit(ownWayPartial.Replace(ownWayBase)))
	// A later commit, not the one that landed the others, rewrites the
	// loop of late.go: that hunk is still needed.
	r.Write("late.go", strings.Replace(ownWayPartial.Replace(ownWayBase), "\t\t// always remove lsp from port groups\n", "\t\t// remove the lsp from every port group\n", 1))
	r.Release("list siblings with podsIn", "v1.2.0")

	rep := scan{pin: "v1.0.0", releases: "v*", patches: patches}.run(t, r.URL())
	if got, want := statuses(rep, 0), "v1.1.0=superseded v1.2.0=superseded"; got != want {
		t.Errorf("own way: statuses = %q, want %q", got, want)
	}
	if got, want := statuses(rep, 1), "v1.1.0=partial v1.2.0=partial"; got != want {
		t.Errorf("partly: statuses = %q, want %q", got, want)
	}
	names := map[string]string{land: "land", "": ""}
	for _, tt := range []struct {
		patch          int
		ref, via       string
		hunks          string
		carried, redid int
	}{
		{0, "v1.1.0", ViaRewritten, "present/reverse-apply@land present/reverse-apply@land superseded/@land present/reverse-apply@land", 3, 1},
		{0, "v1.2.0", ViaRewritten, "present/reverse-apply@land present/landed@land superseded/@land present/reverse-apply@land", 3, 1},
		{1, "v1.1.0", ViaHunks, "present/reverse-apply@land present/reverse-apply@land applies/@ present/reverse-apply@land", 3, 0},
		{1, "v1.2.0", ViaHunks, "present/reverse-apply@land present/landed@land applies/@ present/reverse-apply@land", 3, 0},
	} {
		res := result(t, rep, tt.patch, tt.ref)
		if res.Via != tt.via || res.Commit != land || hunkCommits(res, names) != tt.hunks {
			t.Errorf("patch %d %s: %s via %s commit %s hunks %q; want via %s commit land hunks %q (%s)",
				tt.patch+1, tt.ref, res.Status, res.Via, names[res.Commit], hunkCommits(res, names), tt.via, tt.hunks, res.Evidence)
		}
		if len(res.Commits) != 1 || res.Commits[0].Commit != land || len(res.Commits[0].Hunks) != tt.carried || len(res.Commits[0].Rewrote) != tt.redid {
			t.Errorf("patch %d %s: commits = %+v, want land carrying %d hunks, rewriting %d", tt.patch+1, tt.ref, res.Commits, tt.carried, tt.redid)
		}
		if !strings.Contains(res.Evidence, Short(land)) {
			t.Errorf("patch %d %s: evidence %q does not name the commit", tt.patch+1, tt.ref, res.Evidence)
		}
	}
	if p := rep.Patches[0]; p.ObsoletedBy != "v1.1.0" || p.Commit != land {
		t.Errorf("own way: obsoletedBy %q commit %q, want v1.1.0 land", p.ObsoletedBy, names[p.Commit])
	}
	if p := rep.Patches[1]; p.ObsoletedBy != "" {
		t.Errorf("partly: obsoletedBy %q, want none", p.ObsoletedBy)
	}
	if got, want := statuses(rep, 2), "v1.1.0=partial v1.2.0=partial"; got != want {
		t.Errorf("rewritten later: statuses = %q, want %q", got, want)
	}
	// The problem a partial patch shows is its first hunk that needs a
	// refresh, never one that is upstream.
	late := result(t, rep, 2, "v1.2.0")
	if hs := hunkCommits(late, names); hs != "present/reverse-apply@land present/reverse-apply@land conflict/@ present/reverse-apply@land" {
		t.Errorf("rewritten later: hunks %q, want the loop's hunk in conflict, the others by land", hs)
	}
	if c := late.Conflict; c == nil || c.Line != late.Hunks[2].Line || !strings.HasPrefix(c.Message, "hunk #3 ") {
		t.Errorf("rewritten later: conflict %+v, want hunk #3 at line %d", c, late.Hunks[2].Line)
	}

	// The git CLI: the rewritten hunk applied before the landing commit and
	// applies in neither direction after it; the carried ones reverse-apply
	// there; and the landing commit is not the patch under another name.
	units := splitUnits(parsePatches(t, patches)[0])
	for k, u := range units {
		text := string(u.patch.Bytes())
		if k == 2 {
			if !gitApplies(t, r, parent, text, false) || gitApplies(t, r, land, text, false) || gitApplies(t, r, land, text, true) {
				t.Errorf("hunk 3: git does not see its region rewritten by the landing commit")
			}
			continue
		}
		if !gitApplies(t, r, land, text, true) {
			t.Errorf("hunk %d: git apply -R --check fails at the landing commit", k+1)
		}
	}
	if gitPatchID(t, r, land) == parsePatches(t, patches)[0].PatchID {
		t.Errorf("the landing commit has the patch's patch-id; the test needs another")
	}
	oracle(t, r, rep, patches)
}

// TestCheckReleaseSuffix: a project whose every release carries a suffix
// (26.3.6-edge). The suffix the releases glob names, or the one the pin
// carries, is the release line, not a prerelease: obsoletedBy names the
// first such release that carries the change; a prerelease (26.3.3-beta.1)
// is reported beside it, and other suffixes stay prereleases.
func TestCheckReleaseSuffix(t *testing.T) {
	r := gittest.New(t)
	base := numbered("e", 12)
	r.Write("e.txt", base)
	r.Release("initial", "26.3.1-edge")
	fixed := replaceLine(t, base, "e6", "e6 fixed")
	patch := makePatch(r, "26.3.1-edge", "main", "fix e6", map[string]string{"e.txt": fixed})
	r.Write("other.txt", "1\n")
	r.Release("other", "26.3.2-edge")
	r.Write("e.txt", fixed)
	r.Release("fix e6", "26.3.3-beta.1")
	r.Tag("26.3.3-edge")
	r.Write("other.txt", "2\n")
	r.Release("more", "26.3.4-edge")

	for _, tt := range []struct {
		releases, obsoletedBy, pre string
	}{
		{"*-edge", "26.3.3-edge", ""},
		{"26.*", "26.3.3-edge", "26.3.3-beta.1"},
	} {
		rep := scan{pin: "26.3.1-edge", releases: tt.releases, patches: []string{patch}}.run(t, r.URL())
		p := rep.Patches[0]
		if p.ObsoletedBy != tt.obsoletedBy || p.ObsoletedByPrerelease != tt.pre {
			t.Errorf("releases %q: obsoletedBy %q (prerelease %q), want %q (%q); refs %s, statuses %s",
				tt.releases, p.ObsoletedBy, p.ObsoletedByPrerelease, tt.obsoletedBy, tt.pre, refNames(rep), statuses(rep, 0))
		}
	}
	for _, tt := range []struct {
		tag, releases, pin string
		want               bool
	}{
		{"26.3.3-edge", "*-edge", "26.3.1-edge", false},
		{"26.3.3-edge", "26.*", "26.3.1-edge", false},
		{"26.3.3-edge", "2*-edge", "26.3.1", false},
		{"26.3.3-edge", "*", "26.3.1", true},
		{"26.3.3-rc.1", "*", "26.3.1-edge", true},
		{"26.3.3-rc.1-edge", "*-edge", "26.3.1-edge", true},
		{"v1.2.0-rc.1", "v1.*", "v1.1.0", true},
		{"v1.2.0", "v1.*", "v1.1.0", false},
	} {
		if got := IsPrerelease(tt.tag, tt.releases, tt.pin); got != tt.want {
			t.Errorf("IsPrerelease(%q, %q, %q) = %v, want %v", tt.tag, tt.releases, tt.pin, got, tt.want)
		}
	}
}

// TestCheckLandedStaysPresent: upstream lands the patch in a commit with a
// docs file (so under another patch-id); the patch reverse-applies at the
// release that took it. A later release edits one of the lines a hunk adds:
// the hunk is neither there nor applying, but the commit that landed it is
// still in the ref and most of its own lines are there, so the patch stays
// present, naming that commit. Reverting the other hunk ends it.
func TestCheckLandedStaysPresent(t *testing.T) {
	r, base := pinned(t, "k.go", "k", 40)
	fixed := replaceLine(t, replaceLine(t, base, "k8", "k8\nguard(a)\nguard(b)"), "k30", "k30 fixed")
	patch := makePatch(r, "v1.0.0", "main", "guard a and b, fix k30", map[string]string{"k.go": fixed})
	r.Write("k.go", fixed)
	r.Write("docs.txt", "guards\n")
	land := r.Release("guard a and b, fix k30, with docs", "v1.1.0")
	edited := replaceLine(t, fixed, "guard(b)", "guard(b, strict)")
	r.Write("k.go", edited)
	r.Release("strict guard for b", "v1.2.0")
	r.Write("k.go", replaceLine(t, edited, "k30 fixed", "k30"))
	r.Release("revert the k30 fix", "v1.3.0")

	patches := []string{patch}
	rep := scan{pin: "v1.0.0", releases: "v*", patches: patches}.run(t, r.URL())
	if got, want := statuses(rep, 0), "v1.1.0=present v1.2.0=present v1.3.0=partial"; got != want {
		t.Fatalf("statuses = %q, want %q", got, want)
	}
	if gitPatchID(t, r, land) == parsePatches(t, patches)[0].PatchID {
		t.Fatalf("the landing commit has the patch's patch-id; the test needs another")
	}
	names := map[string]string{land: "land", "": ""}
	for _, tt := range []struct{ ref, via, hunks string }{
		{"v1.2.0", ViaCarried, "present/landed@land present/reverse-apply@land"},
		{"v1.3.0", ViaHunks, "present/landed@land applies/@"},
	} {
		res := result(t, rep, 0, tt.ref)
		if res.Via != tt.via || res.Commit != land || hunkCommits(res, names) != tt.hunks {
			t.Errorf("%s: %s via %s commit %s hunks %q; want via %s commit land hunks %q (%s)",
				tt.ref, res.Status, res.Via, names[res.Commit], hunkCommits(res, names), tt.via, tt.hunks, res.Evidence)
		}
	}
	if p := rep.Patches[0]; p.ObsoletedBy != "v1.1.0" || p.Commit != land || p.NeededAgainAt != "v1.3.0" {
		t.Errorf("obsoletedBy %q commit %q neededAgainAt %q; want v1.1.0 land v1.3.0", p.ObsoletedBy, names[p.Commit], p.NeededAgainAt)
	}
	oracle(t, r, rep, patches)
}

// TestCheckRevertCommitEndsPatchID: upstream lands the fix as a commit with
// the patch's patch-id, reverts it (git revert, or by hand with another
// subject: a diff that is the fix's reversed), and then rewrites the
// restored lines, so that no hunk applies again and no removed line comes
// back as it was (cert-manager's ACME Ingress pathType fix, reverted and
// put behind a feature gate). The revert ends the patch-id commit's word:
// the patch is not present after it, as `git apply` shows, and it is
// present again once a later commit lands it anew (kubevirt's memory
// overcommit fix, reverted and cherry-picked again).
func TestCheckRevertCommitEndsPatchID(t *testing.T) {
	for _, how := range []string{"git revert", "by hand"} {
		t.Run(how, func(t *testing.T) {
			r := gittest.New(t)
			var b strings.Builder
			for i := 1; i <= 30; i++ {
				fmt.Fprintf(&b, "line %d\n", i)
			}
			base := b.String()
			r.Write("ingress.go", base)
			r.Release("initial", "v1.0.0")
			fixed := replaceLine(t, base, "line 10", "pathType := Exact")
			patch := makePatch(r, "v1.0.0", "main", "use Exact", map[string]string{"ingress.go": fixed})
			r.Write("ingress.go", fixed)
			land := r.Release("use Exact", "v1.1.0")
			if how == "git revert" {
				r.Git("revert", "--no-edit", land)
			} else {
				r.Write("ingress.go", base)
				r.Commit("go back to the old pathType")
			}
			r.Write("ingress.go", replaceLine(t, base, "line 10", "pathType := gated(Exact, ImplementationSpecific)"))
			r.Release("gate the pathType", "v1.2.0")
			r.Write("ingress.go", fixed)
			again := r.Release("use Exact again", "v1.3.0")

			rep := scan{pin: "v1.0.0", releases: "v*", patches: []string{patch}}.run(t, r.URL())
			if got, want := statuses(rep, 0), "v1.1.0=present v1.2.0=conflict v1.3.0=present"; got != want {
				t.Errorf("statuses = %q, want %q", got, want)
			}
			for _, res := range rep.Patches[0].Results {
				if res.Ref == "v1.3.0" && res.Commit != again {
					t.Errorf("v1.3.0: present by %s, want the commit that landed it again, %s", res.Commit, again)
				}
			}
			// The oracle: at v1.2.0 the patch neither applies nor
			// reverse-applies, and the fix's line is not there.
			for _, args := range [][]string{{"apply", "--check"}, {"apply", "-R", "--check"}} {
				r.Git("-c", "advice.detachedHead=false", "checkout", "-q", "v1.2.0")
				if _, _, err := r.GitIn([]byte(patch), args...); err == nil {
					t.Errorf("git %s at v1.2.0 succeeds: the fixture changed", strings.Join(args, " "))
				}
			}
			r.Git("checkout", "-q", "main")
		})
	}
}
