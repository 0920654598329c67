package obsolete

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/patchkit/patchkit/internal/obsolete/corpus"
)

// corpusAccepted are the disagreements with the real-history labels that are
// accepted, by "case ref": what Check says there (any other answer fails the
// test, as a disagreement does), and why. docs/obsolete-check.md lists them
// too. An entry that agrees again fails the test: remove it.
var corpusAccepted = map[string]struct{ check, why string }{
	// Check is right, the label's rule is too coarse.
	"csi-rwx-validation-v3 v1.12.0": {"superseded ea2cb503af0c", "upstream took the RWX validation its own way (652756e, then ea2cb50 " +
		"moved it to pkg/utils, both by the patch's author); the label rule counts 136 of 279 changed " +
		"lines, most of the rest being the flag block the patch realigns, and says conflict"},
	// The reduced upstream loses etcd's PR #12417 merge (ae7862e8): git's
	// history simplification follows the merge's side, where 4a5e9d12
	// git-mv'd the root go.mod to server/ and 6c1efd6b made a new one
	// without gopkg.in/yaml.v2. Check takes the go.mod's absence as not
	// covered and names the re-creation; git log --no-merges -S names
	// b382429d, which dropped the line (as Check does on the real
	// upstream). Same status, another commit named.
	"eks-etcd-yaml-vendor-removed v3.5.0": {"partial 6c1efd6ba518", etcdGoModMoved},
	"eks-etcd-yaml-vendor-removed v3.5.4": {"partial 6c1efd6ba518", etcdGoModMoved},
	// After the revert (1a5ea437), db005248 ("remove no need code") added
	// the "strings" import that is the patch's first hunk, in a context the
	// patch no longer matches: Check names that hunk upstream and the rest
	// needed (partial); the label's rule sees one line of 59 upstream and
	// says conflict. Both say the fix is needed again.
	"kubeovn-gc-interface-reverted v1.14.19": {"partial db005248f5b2", revertedImport},
	"kubeovn-gc-interface-reverted v1.14.41": {"partial db005248f5b2", revertedImport},

	// Reverts cut from cert-manager, MetalLB and KubeVirt (2026-12-02).
	// None is dangerous: Check says the fix is needed where the label
	// does, or (metallb-cordon) where the label cannot see a revert.
	// 7fa9ecb7 reverted cbb36c74 by hand ("clean git revert was not
	// possible"): no "This reverts commit" line, no reversed patch-id,
	// so the label's rule still sees the patch-id commit and says
	// present. The cordon checks are gone; Check says partial.
	"metallb-cordon-reverted v0.15.0": {"partial cbb36c74d1eb", "hand revert the cutter cannot see; the label says present, the cordon checks are gone"},
	"metallb-cordon-reverted v0.16.1": {"partial cbb36c74d1eb", "hand revert the cutter cannot see; the label says present, the cordon checks are gone"},
	// After the revert only the ipfamily import of the fix stays, used
	// by later code: Check counts that hunk carried (partial), the
	// label sees 1 of 49 lines and says conflict. Both say needed.
	"metallb-nodeip-overlap-reverted v0.15.1": {"partial 2e27f1c879c2", "only the fix's import stays after the revert; both say needed"},
	"metallb-nodeip-overlap-reverted v0.16.1": {"partial 2e27f1c879c2", "only the fix's import stays after the revert; both say needed"},
	// A const hunk whose added lines were there at the pin is kept by
	// an unrelated commit: partial against conflict, both say needed.
	"kubevirt-virt-tail-timeout-reverted v1.6.0": {"partial 4c72380de3d5", "a hunk with no significant lines counts as kept; both say needed"},
	// Same status; Check credits generic "return nil" lines to another
	// commit, the label credits the reverted one through git log -S.
	"kubevirt-migration-target-expectations-reverted-main v1.9.0": {"partial 37f0fafb90f1", "same status, another commit named"},
	// Landed again at v1.6.4 (b0330235); cd3ace29 then replaced the
	// function a hunk adds, so that hunk applies again: Check says
	// partial by the new landing, the label present by the first.
	"kubevirt-memory-overcommit-reverted v1.6.4": {"partial b0330235ee46", "landed again, then a hunk's function was replaced: partial, the label present"},
	"kubevirt-memory-overcommit-reverted v1.6.6": {"partial b0330235ee46", "landed again, then a hunk's function was replaced: partial, the label present"},
	// kube-ovn backports of master's commit that left out CI or e2e
	// hunks (a workflow step, a test file release-1.14 had deleted):
	// the fix's code landed, the label says superseded, Check keeps
	// the hunks that did not (partial). Conservative, not dangerous.
	"kovn-survey-6363-ha-reverted v1.15.9":  {"partial b54aa2140294", backportLeftOut},
	"kovn-survey-6106-raft-header v1.14.25": {"partial 9a607a8bf516", backportLeftOut},
	"kovn-survey-6106-raft-header v1.14.28": {"partial 9a607a8bf516", backportLeftOut},
	"kovn-survey-6106-raft-header v1.14.41": {"partial 9a607a8bf516", backportLeftOut},
}

const etcdGoModMoved = "the reduced history is linear through PR #12417, whose go.mod moved away and came back: Check names the re-creation 6c1efd6b, git log -S b382429d; same status"

const backportLeftOut = "the backport left out CI or e2e hunks that cannot apply on the release line; Check says partial, the label superseded"

const revertedImport = "db005248 added the import line of hunk 1 after the revert; Check says partial (the rest is needed), the label conflict"

// The classes of the corpus, in table order.
var corpusClasses = []string{
	"landed verbatim", "landed then edited", "landed its own way",
	"partly landed", "never landed", "reverted",
}

// corpusClass names the class of a case from its labels and the git CLI's
// evidence, in the order of the refs.
func corpusClass(c *corpus.Case) string {
	carried, edited, partial, superseded, reverted := false, false, false, false, false
	for _, r := range c.Refs {
		if rv := r.EvidenceOf("reverted"); rv != "" && rv != "-" {
			// git names a later commit that reverts the patch-id commit.
			reverted = true
		}
		switch r.Status {
		case StatusPresent:
			carried = true
			if r.EvidenceOf("reverse") != "ok" {
				edited = true
			}
		case StatusSuperseded:
			carried, superseded = true, true
		case StatusPartial:
			partial = true
		case StatusApplies:
			if carried {
				reverted = true
			}
		}
	}
	switch {
	case reverted:
		return "reverted"
	case partial:
		return "partly landed"
	case superseded:
		return "landed its own way"
	case edited:
		return "landed then edited"
	case carried:
		return "landed verbatim"
	}
	return "never landed"
}

var hexID = regexp.MustCompile(`^[0-9a-f]{40}$`)

// TestCorpus replays every real-history case of testdata/corpus (see its
// README) through Check, the scan obsolete-check runs, and compares each
// ref's status and commit with the label the git CLI gave.
func TestCorpus(t *testing.T) {
	cases, err := corpus.ReadAll(filepath.Join("testdata", "corpus"))
	if err != nil {
		t.Fatalf("corpus.ReadAll() = %v", err)
	}
	if len(cases) == 0 {
		t.Fatal("no corpus cases")
	}
	type tally struct{ cases, refs, agree, accepted int }
	byClass := map[string]*tally{}
	projects := map[string]bool{}
	keys := map[string]bool{}
	var mu sync.Mutex // guards the tallies from the parallel subtests
	t.Run("cases", func(t *testing.T) {
		for _, c := range cases {
			class := corpusClass(c)
			projects[c.Upstream] = true
			tl := byClass[class]
			if tl == nil {
				tl = &tally{}
				byClass[class] = tl
			}
			tl.cases++
			for _, r := range c.Refs {
				keys[c.Name+" "+r.Name] = true
			}
			t.Run(c.Name, func(t *testing.T) {
				t.Parallel()
				got := replayCase(t, c)
				mu.Lock()
				defer mu.Unlock()
				for _, r := range c.Refs {
					tl.refs++
					key := c.Name + " " + r.Name
					want := r.Status
					if r.Commit != "" {
						want += " " + Short(r.Commit)
					}
					have := got[r.Name]
					acc, accepted := corpusAccepted[key]
					switch {
					case have == want && accepted:
						tl.agree++
						t.Errorf("%s: agrees now (%s); remove it from corpusAccepted", key, have)
					case have == want:
						tl.agree++
					case accepted && have == acc.check:
						tl.accepted++
						t.Logf("%s: Check() = %q, label %q (accepted: %s)", key, have, want, acc.why)
					case accepted:
						t.Errorf("%s [%s]: Check() = %q, label %q, accepted %q; git: %s", key, class, have, want, acc.check, r.Evidence)
					default:
						t.Errorf("%s [%s]: Check() = %q, label %q; git: %s", key, class, have, want, r.Evidence)
					}
				}
			})
		}
	})
	for key := range corpusAccepted {
		if !keys[key] {
			t.Errorf("corpusAccepted names %q, no case and ref of the corpus", key)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-20s %5s %5s %5s %8s\n", "class", "cases", "refs", "agree", "accepted")
	total := tally{}
	for _, cl := range corpusClasses {
		tl := byClass[cl]
		if tl == nil {
			tl = &tally{}
		}
		fmt.Fprintf(&b, "%-20s %5d %5d %5d %8d\n", cl, tl.cases, tl.refs, tl.agree, tl.accepted)
		total.cases += tl.cases
		total.refs += tl.refs
		total.agree += tl.agree
		total.accepted += tl.accepted
	}
	t.Logf("agreement with real history by class:\n%s", b.String())
	t.Logf("corpus: %d cases from %d upstream projects, %d/%d refs agree, %d accepted disagreements",
		total.cases, len(projects), total.agree, total.refs, total.accepted)
}

// replayCase rebuilds the case's reduced upstream, checks that it is the one
// the cutter built and that its patch-ids are faithful, runs Check on it and
// returns "status [commit]" per ref name, the commit as the real upstream id
// (shortened).
func replayCase(t *testing.T, c *corpus.Case) map[string]string {
	t.Helper()
	ctx := context.Background()
	nodes, err := corpus.ReadHistory(filepath.Join(c.Dir, "history"))
	if err != nil {
		t.Fatalf("ReadHistory() = %v", err)
	}
	gitDir := filepath.Join(t.TempDir(), "upstream.git")
	ids, err := corpus.Build(ctx, gitDir, nodes)
	if err != nil {
		t.Fatalf("corpus.Build() = %v", err)
	}
	real := map[string]string{}
	for _, nd := range nodes {
		if want := c.Reduced[nd.N]; ids[nd.N] != want {
			t.Fatalf("node %d rebuilt as %s, the cutter built %s", nd.N, ids[nd.N], want)
		}
		real[ids[nd.N]] = nd.Real
	}
	patch, err := os.ReadFile(filepath.Join(c.Dir, "patch.diff"))
	if err != nil {
		t.Fatal(err)
	}
	// A reduced commit has the patch's patch-id exactly when the real full
	// commit has it.
	var single []string
	for _, nd := range nodes {
		if nd.Kind == corpus.KindCommit && len(nd.Parents) == 1 {
			single = append(single, ids[nd.N])
		}
	}
	pids := patchIDsOf(t, gitDir, single)
	for _, nd := range nodes {
		if nd.Kind != corpus.KindCommit || len(nd.Parents) != 1 {
			continue
		}
		if pid := pids[ids[nd.N]]; (pid == c.PatchID) != (nd.PatchID == c.PatchID) {
			t.Fatalf("node %d (%s): reduced patch-id %s, real %s, patch %s", nd.N, nd.Real, pid, nd.PatchID, c.PatchID)
		}
	}
	pin := c.Pin
	if hexID.MatchString(pin) {
		pin = ids[c.PinNode]
	} else {
		gitRef(t, gitDir, "refs/tags/"+pin, ids[c.PinNode])
	}
	var branches []string
	for _, r := range c.Refs {
		if b := r.Branch(); b != "" {
			branches = append(branches, b)
			gitRef(t, gitDir, "refs/heads/"+b, ids[r.Node])
		} else {
			gitRef(t, gitDir, "refs/tags/"+r.Name, ids[r.Node])
		}
	}
	// A HEAD for the clone; not scanned (no spec branch names it).
	gitRef(t, gitDir, "refs/heads/corpus-head", ids[c.Refs[len(c.Refs)-1].Node])
	if out, err := exec.Command("git", "--git-dir="+gitDir, "symbolic-ref", "HEAD", "refs/heads/corpus-head").CombinedOutput(); err != nil {
		t.Fatalf("git symbolic-ref: %v: %s", err, out)
	}
	labelled := map[string]string{} // result ref name -> the label's short commit
	for _, r := range c.Refs {
		name := r.Name
		if b := r.Branch(); b != "" {
			name = b
		}
		if r.Commit != "" {
			labelled[name] = Short(r.Commit)
		}
	}
	rep := scan{pin: pin, releases: c.Releases, branches: branches, patches: []string{string(patch)}}.run(t, "file://"+gitDir)
	// A merge is never the commit named: not for the result, nor for a
	// version part or any module of it (git log --no-merges -S names the
	// commit that brought a line).
	merges := map[string]string{} // reduced id -> real id
	for _, nd := range nodes {
		if len(nd.Parents) > 1 {
			merges[ids[nd.N]] = nd.Real
		}
	}
	got := map[string]string{}
	for _, res := range rep.Patches[0].Results {
		for what, id := range namedCommits(res) {
			if r, ok := merges[id]; ok {
				t.Errorf("%s: Check() names merge %s for %s, want the non-merge commit that brought it", res.Ref, Short(r), what)
			}
		}
		if gone := removedAt(t, gitDir, pin, res.Ref, patch); len(gone) > 0 && res.Status != StatusPresent && res.Status != StatusSuperseded {
			for _, f := range gone {
				if !saysRemoved(res, f) {
					t.Errorf("%s: Check() does not say %s removed (the pin has it, the ref has nothing at that path), status %s", res.Ref, f, res.Status)
				}
			}
		}
		s := res.Status
		if res.Status == StatusPresent || res.Status == StatusSuperseded || res.Status == StatusPartial {
			// The label's commit must be one the result names: Commit, or
			// one of Commits (a patch can land in several).
			var named []string
			for _, id := range append([]string{res.Commit}, carrierIDs(res.Commits)...) {
				if id == "" {
					continue
				}
				r := real[id]
				if r == "" {
					r = "reduced:" + id
				}
				named = append(named, Short(r))
			}
			if want := labelled[res.Ref]; want != "" && slices.Contains(named, want) {
				named = []string{want}
			}
			if len(named) > 0 {
				s += " " + strings.Join(dedupe(named), ",")
			}
		}
		name := res.Ref
		for _, r := range c.Refs {
			if r.Branch() == res.Ref {
				name = r.Name
			}
		}
		got[name] = s
	}
	for _, r := range c.Refs {
		if _, ok := got[r.Name]; !ok {
			got[r.Name] = "not scanned"
		}
	}
	var names []string
	for n := range got {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("%s: %s", n, got[n])
	}
	return got
}

func gitRef(t *testing.T, gitDir, ref, id string) {
	t.Helper()
	if out, err := exec.Command("git", "--git-dir="+gitDir, "update-ref", ref, id).CombinedOutput(); err != nil {
		t.Fatalf("git update-ref %s: %v: %s", ref, err, out)
	}
}

func carrierIDs(cs []Carrier) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Commit)
	}
	return out
}

// patchIDsOf is the git CLI's `git patch-id --stable` of commits, by id,
// from one `git log -p` piped into one `git patch-id`.
func patchIDsOf(t *testing.T, gitDir string, ids []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	if len(ids) == 0 {
		return out
	}
	log := exec.Command("git", append([]string{"--git-dir=" + gitDir, "log", "--no-walk=unsorted", "-p", "--full-index", "--no-color"}, ids...)...)
	diff, err := log.Output()
	if err != nil {
		t.Fatalf("git log -p: %v", err)
	}
	pid := exec.Command("git", "patch-id", "--stable")
	pid.Stdin = strings.NewReader(string(diff))
	res, err := pid.Output()
	if err != nil {
		t.Fatalf("git patch-id: %v", err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(res)), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			out[f[1]] = f[0]
		}
	}
	return out
}

// namedCommits are the commits a result names, by what they are named for:
// the result's, its version part's and each module's.
func namedCommits(res Result) map[string]string {
	named := map[string]string{}
	add := func(what, id string) {
		if id != "" {
			named[what] = id
		}
	}
	add("the result", res.Commit)
	if b := res.Bump; b != nil {
		add("the version part", b.Commit)
		for _, m := range b.Modules {
			add("module "+m.Path, m.Commit)
		}
	}
	if c := res.Code; c != nil {
		add("the code part", c.Commit)
	}
	return named
}

// removedAt are the files the patch modifies that the pin has and the ref
// (a tag or a branch of the reduced upstream) has not; go.mod, go.sum and
// vendor/modules.txt are versions, judged as such, not targets.
func removedAt(t *testing.T, gitDir, pin, ref string, patch []byte) []string {
	t.Helper()
	var gone []string
	seen := map[string]bool{}
	for _, line := range strings.Split(string(patch), "\n") {
		f, ok := strings.CutPrefix(line, "--- a/")
		if !ok || seen[f] || versionFile(f) {
			continue
		}
		seen[f] = true
		has := func(rev string) bool {
			return exec.Command("git", "--git-dir="+gitDir, "cat-file", "-e", rev+":"+f).Run() == nil
		}
		if has(pin) && !has(ref) {
			gone = append(gone, f)
		}
	}
	return gone
}

// saysRemoved reports whether the result says file f was removed: its own
// removed files, or a hunk of f (of the result or of its code part) by way
// of removed.
func saysRemoved(res Result, f string) bool {
	if res.Removed != nil && slices.Contains(res.Removed.Paths, f) {
		return true
	}
	hunks := res.Hunks
	if res.Code != nil {
		hunks = append(slices.Clone(hunks), res.Code.Hunks...)
	}
	for _, h := range hunks {
		if h.Path == f && h.Via == ViaRemoved {
			return true
		}
	}
	return false
}

func versionFile(f string) bool {
	base := path.Base(f)
	return base == "go.mod" || base == "go.sum" || f == "vendor/modules.txt" || strings.HasSuffix(f, "/vendor/modules.txt")
}
