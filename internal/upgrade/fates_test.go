package upgrade

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/refresh"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func numbered(prefix string, n int) string { return gittest.Numbered(prefix+" %d", n) }

func swap(tb testing.TB, s, old, new string) string {
	tb.Helper()
	if !strings.Contains(s, old+"\n") {
		tb.Fatalf("swap: %q not in text", old)
	}
	return strings.Replace(s, old+"\n", new+"\n", 1)
}

// fixture is a generated upstream with a pin v1.0.0 and a release v1.1.0,
// and a repository root whose series has one patch per fate.
type fixture struct {
	up   *gittest.Repo
	root string
}

// rootMarker is the fixture's .patchkit.yaml: a repository config with no
// keys, which marks the root of a repository of its own.
const rootMarker = "# The upgrade tests' fixture is a repository of its own (TestUpgradeFates\n" +
	"# copies it as a root): this file marks its root, so the units of the\n" +
	"# patchkit repository do not include its images/demo.\n"

// newFixture builds the upstream and the series. Each patch changes its own
// file, so that each fate is decided alone:
//
//	0001-same-commit   a commit of upstream's main after v1.0.0, backported as is
//	0002-cherry-pick   a change upstream cherry-picked with another commit id
//	0003-superseded    a change upstream made its own way (more lines, other context)
//	0004-moved         applies at v1.1.0 with an offset: refreshed
//	0005-mergeable     its context changed upstream: rebased by the three-way merge
//	0006-conflict      upstream changed its very lines: a real conflict
func newFixture(t *testing.T) *fixture {
	up := gittest.New(t)
	files := map[string]string{}
	for _, n := range []string{"same", "pick", "super", "moved", "merge", "conflict"} {
		files[n+".txt"] = numbered(n, 20)
		up.Write(n+".txt", files[n+".txt"])
	}
	pin := up.Release("initial", "v1.0.0")

	// upstream's own fix, on main after the pin: backported as 0001
	up.Write("same.txt", swap(t, files["same.txt"], "same 5", "same 5 fixed"))
	fix := up.Commit("fix same")
	patches := map[string]string{}
	patches["0001-same-commit.diff"] = "Subject: fix same\nOrigin: upstream, " + fix + "\n\n" + up.Show(fix)

	// downstream patches made at the pin
	mk := func(name, subject string, edit map[string]string) {
		up.Git("checkout", "-q", "--detach", pin)
		for p, c := range edit {
			up.Write(p, c)
		}
		c := up.Commit(subject)
		patches[name] = "Subject: " + subject + "\nOrigin: vendor\nForwarded: no\n\n" + up.Show(c)
		up.Git("checkout", "-q", "-f", "main")
	}
	pickText := swap(t, files["pick.txt"], "pick 7", "pick 7 picked")
	mk("0002-cherry-pick.diff", "pick", map[string]string{"pick.txt": pickText})
	superText := swap(t, swap(t, files["super.txt"], "super 10", "super 10\nguard a\nguard b\nguard c"), "super 9", "super 9")
	mk("0003-superseded.diff", "guard", map[string]string{"super.txt": superText})
	mk("0004-moved.diff", "moved", map[string]string{"moved.txt": swap(t, files["moved.txt"], "moved 15", "moved 15 patched")})
	mk("0005-mergeable.diff", "merge", map[string]string{"merge.txt": swap(t, files["merge.txt"], "merge 10", "merge 10 patched")})
	mk("0006-conflict.diff", "conflict", map[string]string{"conflict.txt": swap(t, files["conflict.txt"], "conflict 10", "conflict 10 ours")})

	// upstream moves on to v1.1.0
	up.Write("pick.txt", pickText)
	up.Commit("pick: the same change, another commit")
	up.Write("super.txt", swap(t, swap(t, files["super.txt"], "super 10", "super 10\nguard a\nguard b\nguard c\nguard d"), "super 11", "super 11 upstream"))
	up.Commit("super: upstream's own guard")
	up.Write("moved.txt", "header 1\nheader 2\n"+files["moved.txt"])
	up.Commit("moved: two lines on top")
	up.Write("merge.txt", swap(t, files["merge.txt"], "merge 12", "merge 12 upstream"))
	up.Commit("merge: a context line")
	up.Write("conflict.txt", swap(t, files["conflict.txt"], "conflict 10", "conflict 10 theirs"))
	up.Release("conflict: the same line", "v1.1.0")
	up.Git("tag", "-a", "-m", "rc", "v1.2.0-rc.1")

	root := t.TempDir()
	write := func(p, s string) { gittest.WriteFiles(t, root, map[string]string{p: s}) }
	write("images/demo/patchkit.yaml", "upstream:\n  url: https://example.com/demo.git\n  ref: v1.0.0   # the pin\n  releases: \"v1.*\"\npatches: patches/demo\nbuild:\n  builder: native\n  files:\n    - from: same.txt\n      to: /same.txt\nimage:\n  repository: demo\n  tag: v1.0.0\n")
	for name, text := range patches {
		write("patches/demo/"+name, text)
	}
	// The golden copy of this root lives in the patchkit repository
	// (testdata/fates): its root marker keeps images/demo out of patchkit's
	// own units, so the fixture carries it too.
	write(".patchkit.yaml", rootMarker)
	return &fixture{up: up, root: root}
}

func (f *fixture) env(t *testing.T) pipeline.Env {
	return pipeline.Env{Root: f.root, CacheDir: t.TempDir(), UpstreamURL: f.up.URL()}
}

// plan runs Target and Plan as the command does.
func plan(t *testing.T, f *fixture, to string) *Result {
	t.Helper()
	ctx := context.Background()
	im, err := pipeline.Prepare(ctx, f.env(t), "demo", "")
	if err != nil {
		t.Fatalf("Prepare() = %v", err)
	}
	t.Cleanup(func() { im.Close() })
	if err := im.Cache.Fetch(ctx); err != nil {
		t.Fatal(err)
	}
	target, err := Target(im.Cache, im.Spec, to)
	if err != nil {
		t.Fatalf("Target() = %v", err)
	}
	commit, err := im.Cache.Resolve(target)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Plan(ctx, Input{Cache: im.Cache, Spec: im.Spec, PinCommit: im.Commit, Patches: im.Patches, To: target,
		Pin: SpecPin{Root: f.root, Spec: im.Spec}}, commit)
	if err != nil {
		t.Fatalf("Plan() = %v", err)
	}
	return res
}

// snapshot reads every file under root except the cache.
func snapshot(t *testing.T, root string) map[string]string {
	out := map[string]string{}
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestUpgradeFates(t *testing.T) {
	f := newFixture(t)
	res := plan(t, f, "")
	if res.Pin.To != "v1.1.0" {
		t.Errorf("target = %s, want v1.1.0 (the newest final release)", res.Pin.To)
	}
	want := map[string]string{
		"patches/demo/0001-same-commit.diff": FateDropped,
		"patches/demo/0002-cherry-pick.diff": FateDropped,
		"patches/demo/0003-superseded.diff":  FateDropped,
		"patches/demo/0004-moved.diff":       FateRefreshed,
		"patches/demo/0005-mergeable.diff":   FateMerged,
		"patches/demo/0006-conflict.diff":    FateConflict,
	}
	for _, p := range res.Patches {
		if p.Fate != want[p.File] {
			t.Errorf("%s: fate %s (status %s: %s), want %s", p.File, p.Fate, p.Status, p.Evidence, want[p.File])
		}
	}
	if res.OK() {
		t.Error("OK() = true with a conflict")
	}
	for _, p := range res.Patches[:2] {
		if p.Commit == "" {
			t.Errorf("%s dropped without the commit that carries it", p.File)
		}
	}
	before := snapshot(t, f.root)
	if err := res.Apply(f.root); err != nil {
		t.Fatalf("Apply() = %v", err)
	}
	after := snapshot(t, f.root)
	checkGolden(t, "fates", after)
	if after["patches/demo/0006-conflict.diff"] != before["patches/demo/0006-conflict.diff"] {
		t.Error("the conflicting patch was rewritten")
	}
	js, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "fates.json", map[string]string{"plan.json": string(js) + "\n"})

	// The result is what git apply makes of the kept series on v1.1.0.
	f.up.Git("checkout", "-q", "v1.1.0")
	for _, name := range []string{"0004-moved.diff", "0005-mergeable.diff"} {
		if _, errOut, err := f.up.GitIn(nil, "apply", "--check", filepath.Join(f.root, "patches/demo", name)); err != nil {
			t.Errorf("git apply --check %s at v1.1.0: %v\n%s", name, err, errOut)
		}
	}
}

// TestUpgradeFatesIdempotentRefresh: the refreshed and merged patches are
// canonical at the new ref; Canonical rewrites nothing.
func TestUpgradeFatesIdempotentRefresh(t *testing.T) {
	f := newFixture(t)
	res := plan(t, f, "")
	if err := res.Apply(f.root); err != nil {
		t.Fatal(err)
	}
	// drop the conflicting patch, then refresh at the new pin
	if err := os.Remove(filepath.Join(f.root, "patches/demo/0006-conflict.diff")); err != nil {
		t.Fatal(err)
	}
	im, err := pipeline.Prepare(context.Background(), f.env(t), "demo", "")
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	src, err := im.Cache.Source(im.Commit)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := refresh.Canonical(src, im.Patches)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Changed {
			t.Errorf("%s is not canonical after the upgrade:\n%s", r.Patch.Path, r.Text)
		}
	}
}

func TestUpgradeToPrerelease(t *testing.T) {
	f := newFixture(t)
	res := plan(t, f, "v1.2.0-rc.1")
	if res.Pin.To != "v1.2.0-rc.1" {
		t.Errorf("target = %s, want the prerelease --to names", res.Pin.To)
	}
}

// checkGolden compares files with testdata/<dir>/, rewriting it with -update.
func checkGolden(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	gdir := filepath.Join("testdata", dir)
	if *update {
		os.RemoveAll(gdir)
		gittest.WriteFiles(t, gdir, files)
	}
	golden := snapshot(t, gdir)
	var names []string
	for p := range files {
		names = append(names, p)
	}
	for p := range golden {
		if _, ok := files[p]; !ok {
			names = append(names, p)
		}
	}
	sort.Strings(names)
	for _, p := range names {
		if files[p] != golden[p] {
			t.Errorf("%s differs from testdata/%s/%s (run go test -update):\n got: %q\nwant: %q", p, dir, p, files[p], golden[p])
		}
	}
}
