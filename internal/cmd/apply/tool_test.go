package apply_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// mailSeries is an upstream released as v1 and a series written from a
// branch of it by git format-patch, as eks-distro's are: 0001 adds a line
// with trailing whitespace, 0002 is unrelated, and 0003 changes the line
// after 0001's, so its context holds 0001's line: it applies only after it.
type mailSeries struct {
	up      *gittest.Repo
	root    string
	cache   string
	dir     string   // the patch directory
	patches []string // the files, in order
}

func newMailSeries(t *testing.T, specTail string) *mailSeries {
	t.Helper()
	up := gittest.New(t)
	up.Write("a.txt", "one\ntwo\nthree\nfour\nfive\n")
	up.Write("b.txt", "alpha\nbeta\ngamma\n")
	up.Release("v1", "v1")
	up.Git("checkout", "-q", "-b", "dev")
	up.Write("a.txt", "one\ntwo \nthree\nfour\nfive\n")
	up.Commit("a: a line with trailing whitespace")
	up.Write("b.txt", "alpha\nBETA\ngamma\n")
	up.Commit("b: shout")
	up.Write("a.txt", "one\ntwo \nTHREE\nfour\nfive\n")
	up.Commit("a: shout three")
	m := &mailSeries{up: up, root: t.TempDir(), cache: t.TempDir()}
	m.dir = filepath.Join(m.root, "patches", "img")
	up.Git("format-patch", "-q", "-o", m.dir, "v1..dev")
	up.Git("checkout", "-q", "main")
	m.patches, _ = filepath.Glob(filepath.Join(m.dir, "*.patch"))
	if len(m.patches) != 3 {
		t.Fatalf("format-patch wrote %v, want 3 patches", m.patches)
	}
	m.spec(t, specTail)
	return m
}

func (m *mailSeries) spec(t *testing.T, tail string) {
	t.Helper()
	writeSpec(t, m.root, "img", m.up.URL())
	f := filepath.Join(m.root, "images", "img", "patchkit.yaml")
	data, _ := os.ReadFile(f)
	if err := os.WriteFile(f, append(data, tail...), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (m *mailSeries) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runPatchkit(t, append([]string{"--root", m.root, "--cache-dir", m.cache}, args...)...)
}

// stripSignature turns the "-- " signature line of a patch file into "--",
// as an editor that strips trailing spaces does.
func stripSignature(t *testing.T, file string) {
	t.Helper()
	data, _ := os.ReadFile(file)
	stripped := bytes.Replace(data, []byte("\n-- \n"), []byte("\n--\n"), 1)
	if bytes.Equal(stripped, data) {
		t.Fatalf("%s has no signature line", file)
	}
	os.WriteFile(file, stripped, 0o644)
}

// gitAm is the oracle: a scratch clone of up at v1 with `git am args
// files` run in it, read back as a tree.
func gitAm(t *testing.T, up *gittest.Repo, args []string, files ...string) map[string]gittest.Entry {
	t.Helper()
	wt := filepath.Join(t.TempDir(), "wt")
	if out, errOut, err := gittest.Run(up.Dir, nil, "clone", "-q", up.Dir, wt); err != nil {
		t.Fatalf("git clone: %v %s %s", err, out, errOut)
	}
	gittest.Run(wt, nil, "checkout", "-q", "v1")
	if out, errOut, err := gittest.Run(wt, nil, append(append([]string{"am"}, args...), files...)...); err != nil {
		t.Fatalf("git am: %v\n%s%s", err, out, errOut)
	}
	return gittest.Checkout(t, wt)
}

// sameTree compares patchkit's --out tree with the oracle's, byte for byte.
func sameTree(t *testing.T, got, want map[string]gittest.Entry) {
	t.Helper()
	var paths []string
	for p := range want {
		paths = append(paths, p)
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		g, gok := got[p]
		w, wok := want[p]
		switch {
		case !gok:
			t.Errorf("%s: missing from patchkit's tree", p)
		case !wok:
			t.Errorf("%s: in patchkit's tree, not in the oracle's", p)
		case g.Mode != w.Mode || !bytes.Equal(g.Data, w.Data):
			t.Errorf("%s: patchkit %v %q, oracle %v %q", p, g.Mode, g.Data, w.Mode, w.Data)
		}
	}
}

const gitAmSpec = "apply:\n  tool: git-am\n  args: [--committer-date-is-author-date]\n"

// TestApplyGitAm: with tool git-am, a series git am applies (a whitespace
// error, which git am warns about, and a signature whose trailing space was
// stripped) passes apply --check, and --out writes git am's tree.
func TestApplyGitAm(t *testing.T) {
	m := newMailSeries(t, gitAmSpec)
	stripSignature(t, m.patches[1])
	want := gitAm(t, m.up, []string{"--committer-date-is-author-date"}, m.patches...)

	code, stdout, stderr := m.run(t, "apply", "img", "--check")
	if code != 0 {
		t.Fatalf("apply --check exit = %d, want 0 (git am applies the series)\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "warning: patches/img/"+filepath.Base(m.patches[0])+":") || !strings.Contains(stdout, "trailing whitespace.") {
		t.Errorf("apply --check output =\n%s\nwant the whitespace error as a warning, as git am gives it", stdout)
	}
	out := filepath.Join(t.TempDir(), "out")
	if code, stdout, stderr := m.run(t, "apply", "img", "--out", out); code != 0 {
		t.Fatalf("apply --out exit = %d\n%s%s", code, stdout, stderr)
	}
	sameTree(t, gittest.Checkout(t, out), want)
}

// TestApplyDefaultToolStrict: without apply, the same series applies as
// git apply --whitespace=error of the glob: the whitespace error fails
// (and 0003, which needs it, with it), and a stripped signature is bad
// input, as before.
func TestApplyDefaultToolStrict(t *testing.T) {
	m := newMailSeries(t, "")
	code, stdout, _ := m.run(t, "apply", "img", "--check")
	if code != 1 || !strings.Contains(stdout, "patches/img/"+filepath.Base(m.patches[0])+":") || !strings.Contains(stdout, "trailing whitespace.") {
		t.Errorf("apply --check exit = %d, output:\n%s\nwant exit 1 and the trailing whitespace error", code, stdout)
	}
	stripSignature(t, m.patches[1])
	code, stdout, stderr := m.run(t, "apply", "img", "--check")
	if code != 2 || !strings.Contains(stderr, "goes on past") {
		t.Errorf("apply --check with a stripped signature exit = %d, want 2 (bad input)\n%s%s", code, stdout, stderr)
	}
}

// TestApplyGitAmMailbox: a file holding several mails is split as git
// mailsplit splits it, each mail a patch of the series.
func TestApplyGitAmMailbox(t *testing.T) {
	m := newMailSeries(t, gitAmSpec)
	var all []byte
	for _, p := range m.patches {
		data, _ := os.ReadFile(p)
		all = append(all, data...)
		os.Remove(p)
	}
	mbox := filepath.Join(m.dir, "0001-all.patch")
	os.WriteFile(mbox, all, 0o644)
	want := gitAm(t, m.up, nil, mbox)

	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := m.run(t, "apply", "img", "--out", out)
	if code != 0 {
		t.Fatalf("apply --out exit = %d, want 0\n%s%s", code, stdout, stderr)
	}
	for i := 1; i <= 3; i++ {
		if name := "patches/img/0001-all.patch#" + string(rune('0'+i)); !strings.Contains(stdout, "applied  "+name) {
			t.Errorf("output =\n%s\nwant mail %s applied", stdout, name)
		}
	}
	sameTree(t, gittest.Checkout(t, out), want)
}

// TestApplySeriesOrder: with order: series, a quilt series file gives the
// order, which here is not the glob's: 0003 first would not apply.
func TestApplySeriesOrder(t *testing.T) {
	m := newMailSeries(t, "")
	// Rename so that the glob puts the dependent patch first.
	names := []string{"c-whitespace.patch", "b-shout.patch", "a-three.patch"}
	var renamed []string
	for i, p := range m.patches {
		to := filepath.Join(m.dir, names[i])
		os.Rename(p, to)
		renamed = append(renamed, to)
	}
	series := "# the order git am is given\nc-whitespace.patch\nb-shout.patch -p1 # a comment\n\na-three.patch\n"
	os.WriteFile(filepath.Join(m.dir, "series"), []byte(series), 0o644)
	want := gitAm(t, m.up, nil, renamed...)

	m.spec(t, gitAmSpec+"  order: series\n")
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := m.run(t, "apply", "img", "--out", out)
	if code != 0 {
		t.Fatalf("apply --out exit = %d, want 0\n%s%s", code, stdout, stderr)
	}
	if i, j := strings.Index(stdout, "c-whitespace.patch"), strings.Index(stdout, "a-three.patch"); i < 0 || j < i {
		t.Errorf("output =\n%s\nwant the series file's order", stdout)
	}
	sameTree(t, gittest.Checkout(t, out), want)

	// The glob's order fails: a-three.patch needs c-whitespace.patch.
	m.spec(t, gitAmSpec)
	if code, stdout, _ := m.run(t, "apply", "img", "--check"); code != 1 || !strings.Contains(stdout, "FAILED   patches/img/a-three.patch") {
		t.Errorf("apply --check in glob order exit = %d, output:\n%s\nwant a-three.patch to fail", code, stdout)
	}

	// A series file that names a missing patch is bad input at its line.
	os.WriteFile(filepath.Join(m.dir, "series"), []byte("c-whitespace.patch\nnope.patch\n"), 0o644)
	m.spec(t, gitAmSpec+"  order: series\n")
	if code, _, stderr := m.run(t, "apply", "img", "--check"); code != 2 || !strings.Contains(stderr, "patches/img/series:2: nope.patch: no such patch") {
		t.Errorf("apply --check with a missing patch exit = %d, stderr %q; want 2 naming series:2", code, stderr)
	}
}

// TestApplyGNUPatchFuzz: with tool patch, a hunk whose first context line
// changed upstream applies with fuzz 1, as `patch -p1` applies it, and the
// tree is GNU patch's; with -F0, and with the default tool, it fails.
func TestApplyGNUPatchFuzz(t *testing.T) {
	if _, err := exec.LookPath("patch"); err != nil {
		t.Fatalf("GNU patch is the oracle of this test: install it with hack/install-deps.sh (%v)", err)
	}
	up := gittest.New(t)
	up.Write("a.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n")
	up.Release("v1", "v1")
	root, cache := t.TempDir(), t.TempDir()
	// Made against a tree whose line 2 read "two": fuzz 1 at v1.
	diff := "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -2,7 +2,7 @@\n two\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n"
	dir := filepath.Join(root, "patches", "img")
	os.MkdirAll(dir, 0o755)
	file := filepath.Join(dir, "0001-five.patch")
	os.WriteFile(file, []byte("Subject: five\n\n"+diff), 0o644)
	run := func(tail string, args ...string) (int, string, string) {
		writeSpec(t, root, "img", up.URL())
		f := filepath.Join(root, "images", "img", "patchkit.yaml")
		data, _ := os.ReadFile(f)
		os.WriteFile(f, append(data, tail...), 0o644)
		return runPatchkit(t, append([]string{"--root", root, "--cache-dir", cache}, args...)...)
	}

	// The oracle: GNU patch in a checkout of v1.
	wt := filepath.Join(t.TempDir(), "wt")
	gittest.Run(up.Dir, nil, "clone", "-q", up.Dir, wt)
	gittest.Run(wt, nil, "checkout", "-q", "v1")
	cmd := exec.Command("patch", "-p1", "--no-backup-if-mismatch", "-i", file)
	cmd.Dir = wt
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "with fuzz 1") {
		t.Fatalf("patch: %v\n%s", err, out)
	}

	out := filepath.Join(t.TempDir(), "out")
	if code, stdout, stderr := run("apply:\n  tool: patch\n  args: [-p1, --no-backup-if-mismatch]\n", "apply", "img", "--out", out); code != 0 || !strings.Contains(stdout, "with fuzz 1") {
		t.Fatalf("apply --out with tool patch exit = %d, want 0 and the fuzz reported\n%s%s", code, stdout, stderr)
	}
	sameTree(t, gittest.Checkout(t, out), gittest.Checkout(t, wt))

	if code, stdout, _ := run("apply:\n  tool: patch\n  args: [-p1, -F, \"0\"]\n", "apply", "img", "--check"); code != 1 || !strings.Contains(stdout, "fuzz 1") {
		t.Errorf("apply --check with -F0 exit = %d, output:\n%s\nwant exit 1 (patch -F0 rejects the hunk)", code, stdout)
	}
	cmd = exec.Command("patch", "-p1", "-F0", "--dry-run", "-i", file)
	cmd.Dir = wt
	gittest.Run(wt, nil, "checkout", "-q", "--", ".")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("patch -F0 applied the hunk, the test expects it to fail:\n%s", out)
	}
	if code, stdout, _ := run("", "apply", "img", "--check"); code != 1 || !strings.Contains(stdout, "applies only with fuzz 1") {
		t.Errorf("apply --check with the default tool exit = %d, output:\n%s\nwant the fuzz finding", code, stdout)
	}
}

// TestApplyGitAmCRLF: git am drops the CR of CRLF lines (git mailsplit), so
// a patch to a CRLF file fails unless --keep-cr, as with git am itself.
func TestApplyGitAmCRLF(t *testing.T) {
	up := gittest.New(t)
	up.Write("f.txt", "a\r\nb\r\n")
	up.Release("v1", "v1")
	up.Git("checkout", "-q", "-b", "dev")
	up.Write("f.txt", "a\r\nB\r\n")
	up.Commit("f: shout b")
	m := &mailSeries{up: up, root: t.TempDir(), cache: t.TempDir()}
	m.dir = filepath.Join(m.root, "patches", "img")
	up.Git("format-patch", "-q", "-o", m.dir, "v1..dev")
	up.Git("checkout", "-q", "main")
	m.patches, _ = filepath.Glob(filepath.Join(m.dir, "*.patch"))

	wt := filepath.Join(t.TempDir(), "wt")
	gittest.Run(up.Dir, nil, "clone", "-q", up.Dir, wt)
	gittest.Run(wt, nil, "checkout", "-q", "v1")
	if _, _, err := gittest.Run(wt, nil, append([]string{"am"}, m.patches...)...); err == nil {
		t.Fatal("git am applied the CRLF patch without --keep-cr; the test expects it to fail")
	}
	m.spec(t, gitAmSpec)
	if code, stdout, _ := m.run(t, "apply", "img", "--check"); code != 1 {
		t.Errorf("apply --check without --keep-cr exit = %d, want 1 as git am fails\n%s", code, stdout)
	}
	want := gitAm(t, up, []string{"--keep-cr"}, m.patches...)
	m.spec(t, "apply:\n  tool: git-am\n  args: [--keep-cr]\n")
	out := filepath.Join(t.TempDir(), "out")
	if code, stdout, stderr := m.run(t, "apply", "img", "--out", out); code != 0 {
		t.Fatalf("apply --out with --keep-cr exit = %d, want 0\n%s%s", code, stdout, stderr)
	}
	sameTree(t, gittest.Checkout(t, out), want)
}

// TestRefreshAndUpgradeGitAm: refresh and upgrade apply the series as the
// unit's tool does: under git am a patch with whitespace errors is carried,
// not a conflict, and the files they write are mails real git am applies.
func TestRefreshAndUpgradeGitAm(t *testing.T) {
	m := newMailSeries(t, gitAmSpec)
	m.up.Write("c.txt", "new upstream file\n")
	m.up.Release("v2", "v2")

	if code, stdout, stderr := m.run(t, "refresh", "img"); code != 0 {
		t.Fatalf("refresh exit = %d, want 0\n%s%s", code, stdout, stderr)
	}
	gitAm(t, m.up, nil, m.patches...) // still mails git am applies at v1
	if code, stdout, stderr := m.run(t, "upgrade", "img", "--to", "v2"); code != 0 {
		t.Fatalf("upgrade --to v2 exit = %d, want 0\n%s%s", code, stdout, stderr)
	}
	spec, _ := os.ReadFile(filepath.Join(m.root, "images", "img", "patchkit.yaml"))
	if !strings.Contains(string(spec), "ref: v2") {
		t.Fatalf("spec after upgrade =\n%s\nwant the pin at v2", spec)
	}
	patches, _ := filepath.Glob(filepath.Join(m.dir, "*.patch"))
	wt := filepath.Join(t.TempDir(), "wt")
	gittest.Run(m.up.Dir, nil, "clone", "-q", m.up.Dir, wt)
	gittest.Run(wt, nil, "checkout", "-q", "v2")
	if o, e, err := gittest.Run(wt, nil, append([]string{"am"}, patches...)...); err != nil || len(patches) != 3 {
		t.Fatalf("git am of the upgraded series (%d files) at v2: %v\n%s%s", len(patches), err, o, e)
	}
}
