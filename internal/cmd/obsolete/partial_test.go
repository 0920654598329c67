package obsolete_test

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// gitLines runs git in dir and returns its output's fields.
func gitLines(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	out, errOut, err := gittest.Run(dir, nil, args...)
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, errOut)
	}
	return strings.Fields(out)
}

func setOf(ids []string) map[string]bool {
	set := map[string]bool{}
	for _, id := range ids {
		set[id] = true
	}
	return set
}

// cacheRepo is the one bare repository in the cache directory dir.
func cacheRepo(t *testing.T, dir string) string {
	t.Helper()
	repos, _ := filepath.Glob(filepath.Join(dir, "*.git"))
	if len(repos) != 1 {
		t.Fatalf("cache dir %s holds %v, want one bare repository", dir, repos)
	}
	return repos[0]
}

// TestColdApplyThenObsoleteCheck is a CI cache's life: the first apply
// fetches the pin and nothing else (the objects `git clone --depth 1 --branch
// v1.0.0` fetches); an offline apply of a tag never fetched fails with the way
// out; an online one fetches that tag; obsolete-check then deepens the cache
// to the upstream's whole history, and its report is the one a fresh full
// clone gives, online and offline.
func TestColdApplyThenObsoleteCheck(t *testing.T) {
	f := newFixture(t)
	if code, stdout, stderr := f.run(t, "apply", "img", "--check"); code != 0 {
		t.Fatalf("cold apply --check exit = %d, want 0\n%s%s", code, stdout, stderr)
	}
	repo := cacheRepo(t, f.cache)
	got := setOf(gitLines(t, repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"))
	want := setOf(gitLines(t, f.up.Dir, "rev-list", "--objects", "--no-object-names", "--max-count=1", "v1.0.0"))
	want[strings.TrimSpace(f.up.Git("rev-parse", "refs/tags/v1.0.0"))] = true // the annotated tag
	if !maps.Equal(got, want) {
		t.Errorf("the cache after a cold apply holds %d objects, want v1.0.0's %d at depth 1:\n got %v\nwant %v", len(got), len(want), got, want)
	}
	rework := strings.TrimSpace(f.up.Git("rev-parse", "v1.2.0:tool.txt"))
	if got[rework] {
		t.Errorf("v1.2.0's tool.txt %s came with the pin", rework)
	}

	code, stdout, stderr := f.run(t, "--offline", "apply", "img", "--check", "--ref", "v1.2.0")
	if code != 2 || !strings.Contains(stderr, `"v1.2.0"`) || !strings.Contains(stderr, "run once without --offline") {
		t.Errorf("offline apply of a tag never fetched: exit %d, want 2 naming it and the way out\n%s%s", code, stdout, stderr)
	}
	for _, offline := range []bool{false, true} {
		args := []string{"apply", "img", "--check", "--ref", "v1.2.0"}
		if offline {
			args = append([]string{"--offline"}, args...)
		}
		if code, stdout, stderr := f.run(t, args...); code != 1 {
			t.Errorf("%v: exit %d, want 1 (v1.2.0 carries the greet patch)\n%s%s", args, code, stdout, stderr)
		}
	}
	if !setOf(gitLines(t, repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"))[rework] {
		t.Errorf("v1.2.0's tool.txt %s is not in the cache after apply --ref v1.2.0", rework)
	}
	if _, err := os.Stat(filepath.Join(repo, "patchkit-shallow")); err != nil {
		t.Errorf("the cache is not marked partial after shallow runs: %v", err)
	}

	code, deepened, stderr := f.run(t, "obsolete-check", "img", "-o", "json")
	if code != 1 {
		t.Fatalf("obsolete-check on the partial cache: exit %d, want 1\n%s%s", code, deepened, stderr)
	}
	if _, err := os.Stat(filepath.Join(repo, "patchkit-shallow")); !os.IsNotExist(err) {
		t.Errorf("the cache is still marked partial after obsolete-check (%v)", err)
	}
	if got, want := gitLines(t, repo, "rev-list", "--all"), gitLines(t, f.up.Dir, "rev-list", "--all"); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the deepened cache holds commits %v, want the upstream's %v", got, want)
	}
	code, full, stderr := runPatchkit(t, "--root", f.root, "--cache-dir", t.TempDir(), "obsolete-check", "img", "-o", "json")
	if code != 1 || full != deepened {
		t.Errorf("obsolete-check with a fresh cache: exit %d\n%s%s\nwant exit 1 and the deepened cache's report\n%s", code, full, stderr, deepened)
	}
	if code, offline, stderr := f.run(t, "--offline", "obsolete-check", "img", "-o", "json"); code != 1 || offline != deepened {
		t.Errorf("offline obsolete-check after deepening: exit %d\n%s%s\nwant exit 1 and the same report", code, offline, stderr)
	}
}
