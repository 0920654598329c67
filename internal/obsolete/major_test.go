package obsolete

import (
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// TestCheckModuleMovedToNewMajor: a downstream patch migrates a project to Go
// modules (raises the go directive and two requirements of its go.mod,
// deletes Gopkg.toml and edits the dep helper script); upstream did the
// migration its own way on a branch, as module /v3 (go 1.13), deleted the
// script there, merged main into that branch (a merge whose go.mod differs from
// both parents: git log -- go.mod lists it) and merged the branch into main.
// The version part is partial (one requirement is still to raise), and
// every commit it names is the non-merge commit that brought the line, as
// `git log --no-merges -S` names it: never the merge that combined the
// branches (the old walk over every commit in topological order named the
// merge for the go directive). The code part's one modified file, the
// script, is gone: its target is removed, naming the commit that deleted
// it, as git log --diff-filter=D does.
func TestCheckModuleMovedToNewMajor(t *testing.T) {
	r := gittest.New(t)
	gomod := func(module, goLine, y, z string) string {
		s := "module " + module + "\n\n"
		if goLine != "" {
			s += "go " + goLine + "\n\n"
		}
		return s + "require (\n\tgithub.com/x/y " + y + "\n\tgithub.com/x/z " + z + "\n)\n"
	}
	deps := numbered("deps", 12)
	r.Write("main.go", "package main\n\nimport \"example.com/proj/pkg/a\"\n\nfunc main() { a.Run() }\n")
	r.Write("go.mod", gomod("example.com/proj", "", "v1.1.0", "v1.0.0"))
	r.Write("Gopkg.toml", "[[constraint]]\n  name = \"github.com/x/y\"\n  version = \"1.1.0\"\n")
	r.Write("scripts/deps.sh", deps)
	r.Release("initial", "v1.0.0")

	r.Git("checkout", "-q", "--detach", "v1.0.0")
	r.Write("go.mod", gomod("example.com/proj", "1.12", "v1.2.0", "v1.5.0"))
	r.Remove("Gopkg.toml")
	r.Write("scripts/deps.sh", replaceLine(t, deps, "deps6", "deps6 go mod download"))
	patch := "Subject: Migrate to Go modules\n\n" + r.Show(r.Commit("downstream: Migrate to Go modules"))
	r.Git("checkout", "-q", "-f", "main")

	r.Git("checkout", "-q", "-b", "v3", "main")
	r.Write("go.mod", gomod("example.com/proj/v3", "1.13", "v1.1.0", "v1.0.0"))
	r.Remove("Gopkg.toml")
	r.Write("main.go", "package main\n\nimport \"example.com/proj/v3/pkg/a\"\n\nfunc main() { a.Run() }\n")
	v3 := r.Commit("Go modules, as module /v3")
	r.Remove("scripts/deps.sh")
	rmScript := r.Commit("drop the dep helper")
	r.Git("checkout", "-q", "main")
	r.Write("go.mod", gomod("example.com/proj", "", "v1.3.0", "v1.0.0"))
	bumpY := r.Commit("bump y to v1.3.0")
	r.Git("checkout", "-q", "v3")
	r.Git("merge", "-q", "--no-ff", "--no-commit", "main")
	r.Write("go.mod", gomod("example.com/proj/v3", "1.13", "v1.3.0", "v1.0.0"))
	mergeMain := r.Commit("Merge branch 'main' into v3")
	r.Git("checkout", "-q", "main")
	r.Git("merge", "-q", "--no-ff", "-m", "Merge branch 'v3'", "v3")
	r.Tag("v3.0.0")

	// The oracle: git lists the merge among go.mod's commits, and names the
	// non-merge commits that brought each line.
	if log := r.Git("log", "--format=%H", "v1.0.0..v3.0.0", "--", "go.mod"); !strings.Contains(log, mergeMain) {
		t.Fatalf("git log -- go.mod =\n%s\nwant the merge %s listed (the fixture's point)", log, mergeMain)
	}
	pickaxe := func(line string) string {
		return r.Git("log", "--no-merges", "--format=%H", "-S"+line, "v1.0.0..v3.0.0", "--", "go.mod")
	}
	if got := pickaxe("go 1.13"); got != v3 {
		t.Fatalf("git log --no-merges -S'go 1.13' = %q, want %s", got, v3)
	}
	if got := pickaxe("github.com/x/y v1.3.0"); got != bumpY {
		t.Fatalf("git log --no-merges -S'y v1.3.0' = %q, want %s", got, bumpY)
	}
	if got := gitDeletedBy(t, r, "v1.0.0", "v3.0.0", "scripts/deps.sh"); got != rmScript {
		t.Fatalf("git log --diff-filter=D of scripts/deps.sh = %s, want %s", got, rmScript)
	}
	nonMerges := r.Git("rev-list", "--no-merges", "v1.0.0..v3.0.0")

	rep := scan{pin: "v1.0.0", releases: "v*", patches: []string{patch}}.run(t, r.URL())
	res := result(t, rep, 0, "v3.0.0")
	if res.Status != StatusPartial || res.Bump == nil || res.Bump.Status != StatusPartial {
		t.Fatalf("v3.0.0: %s (%s), want partial with a partial version part", res.Status, res.Evidence)
	}
	if res.Commit != "" && !strings.Contains(nonMerges, res.Commit) {
		t.Errorf("v3.0.0: commit %s, want a non-merge commit (%s)", res.Commit, res.Evidence)
	}
	want := map[string]string{"go": v3, "github.com/x/y": bumpY, "github.com/x/z": ""}
	for _, m := range res.Bump.Modules {
		if w, ok := want[m.Path]; !ok || m.Commit != w {
			t.Errorf("v3.0.0: %s covered %v since %s, want since %q (git log --no-merges -S)", m.Path, m.Covered, Short(m.Commit), Short(w))
		}
	}
	if strings.Contains(res.Evidence, Short(mergeMain)) {
		t.Errorf("v3.0.0: evidence names the merge %s: %s", Short(mergeMain), res.Evidence)
	}
	if res.Code == nil {
		t.Fatalf("v3.0.0: no code part (%s)", res.Evidence)
	}
	var vias []string
	for _, h := range res.Code.Hunks {
		vias = append(vias, h.Path+"="+h.Status+"/"+h.Via)
	}
	if got, want := strings.Join(vias, " "), "Gopkg.toml=present/reverse-apply scripts/deps.sh=conflict/removed"; got != want {
		t.Errorf("v3.0.0: code hunks %s, want %s", got, want)
	}
	if w := "target removed: scripts/deps.sh deleted by upstream commit " + Short(rmScript); res.Code.Status != StatusConflict || res.Code.Via != ViaRemoved || !strings.HasPrefix(res.Code.Evidence, w) {
		t.Errorf("v3.0.0: code part %s via %s: %q, want conflict via removed: %q", res.Code.Status, res.Code.Via, res.Code.Evidence, w)
	}
}
