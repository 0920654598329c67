package obsolete

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// TestCheckAgreesWithGit checks patchkit's verdicts against the loop a
// reviewer would script: for each tag, check it out, then `git apply -R
// --check` and `git apply --check` each patch. The patches touch separate
// files, so testing each alone (git) and in series (patchkit) see the same
// files. Where git's two checks decide (one of them succeeds), patchkit must
// agree: reverse-applies means present; else applies means applies. Where
// both fail, patchkit must not say applies, and a present verdict must come
// from a patch-id or the hunks.
func TestCheckAgreesWithGit(t *testing.T) {
	r := gittest.New(t)
	const nFiles = 7
	files := make([]string, nFiles)
	for i := range files {
		files[i] = numbered(fmt.Sprintf("f%d-", i), 40)
		r.Write(fmt.Sprintf("dir%d/file.txt", i), files[i])
	}
	r.Release("initial", "v1.0.0")
	name := func(i int) string { return fmt.Sprintf("dir%d/file.txt", i) }
	fix := func(i int, s string) string {
		return replaceLine(t, s, fmt.Sprintf("f%d-20", i), fmt.Sprintf("f%d-20 fixed", i))
	}
	var patches []string
	for i := 0; i < nFiles; i++ {
		want := fix(i, files[i])
		if i == 6 {
			want = replaceLine(t, want, "f6-3", "f6-3 fixed")
		}
		patches = append(patches, makePatch(r, "v1.0.0", "main", fmt.Sprintf("fix file %d", i), map[string]string{name(i): want}))
	}
	cur := append([]string(nil), files...)
	write := func(i int, s string) { cur[i] = s; r.Write(name(i), s) }
	var landed4 string
	events := map[int]func(){
		2: func() { write(3, "top\n"+cur[3]) },                                    // offsets
		3: func() { write(0, fix(0, cur[0])) },                                    // present
		4: func() { write(2, replaceLine(t, cur[2], "f2-21", "f2-21 upstream")) }, // conflict
		5: func() { write(1, fix(1, cur[1])) },                                    // present ...
		6: func() { write(4, fix(4, cur[4])); landed4 = r.Commit("land 4") },      // present ...
		7: func() { write(4, replaceLine(t, cur[4], "f4-19", "f4-19 reworded")) }, // ... by patch-id only
		8: func() { write(1, files[1]) },                                          // ... reverted
		9: func() { write(6, replaceLine(t, cur[6], "f6-3", "f6-3 fixed")) },      // partial
	}
	for tag := 1; tag <= 10; tag++ {
		if ev := events[tag]; ev != nil {
			ev()
		}
		r.Write("release.txt", fmt.Sprintf("%d\n", tag))
		r.Release(fmt.Sprintf("release %d", tag), fmt.Sprintf("v1.0.%d", tag))
	}
	rep := scan{pin: "v1.0.0", releases: "v1.0.*", patches: patches}.run(t, r.URL())
	if len(rep.Refs) != 10 {
		t.Fatalf("refs = %s, want v1.0.1 ... v1.0.10", refNames(rep))
	}
	dir := t.TempDir()
	var pfiles []string
	for i, p := range patches {
		f := filepath.Join(dir, fmt.Sprintf("%04d.diff", i+1))
		if err := os.WriteFile(f, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
		pfiles = append(pfiles, f)
	}
	seen := map[string]bool{}
	for k, ref := range rep.Refs {
		wt := filepath.Join(t.TempDir(), "wt")
		r.Git("worktree", "add", "-q", "--detach", wt, ref.Name)
		for i, pf := range pfiles {
			_, _, revErr := gittest.Run(wt, nil, "apply", "-R", "--check", pf)
			_, _, fwdErr := gittest.Run(wt, nil, "apply", "--check", pf)
			got := rep.Patches[i].Results[k]
			seen[got.Status+"/"+got.Via] = true
			switch {
			case revErr == nil:
				if got.Status != StatusPresent {
					t.Errorf("%s patch %d: git apply -R --check succeeds, patchkit says %s (%s)", ref.Name, i+1, got.Status, got.Evidence)
				}
			case fwdErr == nil:
				if got.Status != StatusApplies {
					t.Errorf("%s patch %d: git apply --check succeeds, patchkit says %s (%s)", ref.Name, i+1, got.Status, got.Evidence)
				}
			default:
				if got.Status == StatusApplies || got.Status == StatusPresent && got.Via == ViaReverseApply {
					t.Errorf("%s patch %d: git applies it in neither direction, patchkit says %s via %s", ref.Name, i+1, got.Status, got.Via)
				}
			}
		}
		r.Git("worktree", "remove", "--force", wt)
	}
	for _, want := range []string{"applies/apply", "present/reverse-apply", "present/patch-id", "conflict/apply", "partial/hunks"} {
		if !seen[want] {
			t.Errorf("no verdict %s in the scan; the fixture should produce one", want)
		}
	}
	if got, want := statuses(rep, 1), "v1.0.1=applies v1.0.2=applies v1.0.3=applies v1.0.4=applies v1.0.5=present v1.0.6=present v1.0.7=present v1.0.8=applies v1.0.9=applies v1.0.10=applies"; got != want {
		t.Errorf("reverted patch: %q, want %q", got, want)
	}
	if got := result(t, rep, 4, "v1.0.7"); got.Via != ViaPatchID || got.Commit != landed4 {
		t.Errorf("patch 5 at v1.0.7: %s via %s commit %s, want present via patch-id commit %s", got.Status, got.Via, got.Commit, landed4)
	}
}
