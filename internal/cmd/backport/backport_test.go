package backport_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/cmd/cmdtest"
	"github.com/patchkit/patchkit/internal/cmd/root"
	"github.com/patchkit/patchkit/internal/gittest"
)

const repoURL = "https://github.com/acme/widget"

// fixture is an upstream and a patchkit repository with one image, img,
// pinned at v1.0.0:
//
//	v1.0.0  greet.txt (line1..line40), other.txt, tool.sh
//	v1.1.0  two lines on top of greet.txt
//	        fix: line20 and a line after line26 (Fixes #12, see other/repo#3)
//	        clean: other.txt gets a line, tool.sh becomes executable
//	        conflict: changes top1, which the pin lacks
type fixture struct {
	t                         *testing.T
	up                        *gittest.Repo
	fix, clean, conflict, pin string
	gittest.Files             // the patchkit repository: Root
	cache                     string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	r := gittest.New(t)
	fx := &fixture{t: t, up: r, Files: gittest.Files{TB: t, Root: t.TempDir()}, cache: t.TempDir()}
	greet := gittest.Numbered("line%d", 40)
	r.Write("greet.txt", greet)
	r.Write("other.txt", "other\n")
	r.Write("tool.sh", "#!/bin/sh\n")
	fx.pin = r.Commit("initial")
	r.Tag("v1.0.0")
	r.Write("greet.txt", "top1\ntop2\n"+greet)
	r.Release("greet: two lines on top", "v1.1.0")
	fixed := strings.Replace(strings.Replace(greet, "line20\n", "line20 // retry\n", 1), "line26\n", "line26\nrequeue\n", 1)
	r.Write("greet.txt", "top1\ntop2\n"+fixed)
	fx.fix = r.Commit("fix: requeue while the target pod is not scheduled\n\nThe controller gave up too early.\n\nFixes #12, see other/repo#3.\nSigned-off-by: A Dev <dev@example.com>")
	r.Write("other.txt", "other\nmore\n")
	r.WriteMode("tool.sh", "#!/bin/sh\n", 0o755)
	fx.clean = r.Commit("other: one more line")
	r.Write("greet.txt", "top1 changed\ntop2\n"+fixed)
	fx.conflict = r.Commit("greet: change the top line")

	fx.Write("images/img/patchkit.yaml", `upstream:
  url: `+repoURL+`
  ref: v1.0.0
  releases: "v1.*"
patches: patches/img
image:
  repository: img
  tag: v1.0.0
`)
	fx.Write("Makefile", "build:\n\t$(MAKE) image IMAGE=img\n")
	return fx
}

func (fx *fixture) patches() []string {
	fx.t.Helper()
	entries, _ := os.ReadDir(filepath.Join(fx.Root, "patches/img"))
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

func (fx *fixture) run(args ...string) (int, string, string) {
	fx.t.Helper()
	return runPatchkit(fx.t, append([]string{"--root", fx.Root, "--cache-dir", fx.cache, "--upstream-url", fx.up.URL()}, args...)...)
}

func runPatchkit(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return cmdtest.Run(t, root.NewCmdRoot, args...)
}

type verifyJSON struct {
	OK     bool `json:"ok"`
	Checks []struct {
		Patch, Check, Status, Message string
	} `json:"checks"`
}

// verifyPasses runs verify and fails the test unless every check passes or
// is skipped; it returns the backport check's message of patch.
func (fx *fixture) verifyPasses(patch string) string {
	fx.t.Helper()
	code, stdout, stderr := fx.run("verify", "img", "-o", "json")
	var v verifyJSON
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		fx.t.Fatalf("verify: %v\n%s%s", err, stdout, stderr)
	}
	msg := ""
	for _, c := range v.Checks {
		if c.Status != "pass" && c.Status != "skip" {
			fx.t.Errorf("verify: %s %s = %s: %s", c.Patch, c.Check, c.Status, c.Message)
		}
		if c.Patch == "patches/img/"+patch && c.Check == "backport" {
			msg = c.Message
		}
	}
	if code != 0 || !v.OK {
		fx.t.Errorf("verify exit = %d, ok = %v\n%s", code, v.OK, stdout)
	}
	return msg
}

type backportJSON struct {
	Image, Commit, Subject, File, PatchID, Ref string
	Reference, Written, Applies                bool
	Errors                                     []struct {
		Kind, File, Message string
		Line                int
	}
}

func (fx *fixture) backport(wantCode int, args ...string) backportJSON {
	fx.t.Helper()
	code, stdout, stderr := fx.run(append([]string{"backport", "img", "-o", "json"}, args...)...)
	if code != wantCode {
		fx.t.Fatalf("backport %v: exit = %d, want %d\n%s%s", args, code, wantCode, stdout, stderr)
	}
	var b backportJSON
	if err := json.Unmarshal([]byte(stdout), &b); err != nil {
		fx.t.Fatalf("backport -o json: %v\n%s", err, stdout)
	}
	return b
}

func TestBackport(t *testing.T) {
	fx := newFixture(t)

	// A clean backport: no other patch, no offset, a mode change.
	b := fx.backport(0, fx.clean[:10])
	if b.File != "patches/img/0001-other-one-more-line.diff" || !b.Written || !b.Applies || b.Reference || b.Commit != fx.clean || b.Ref != "v1.0.0" {
		t.Errorf("backport = %+v", b)
	}
	text := fx.Read(b.File)
	diff := fx.up.Show(fx.clean)
	wantHead := "Subject: other: one more line\nOrigin: upstream, " + repoURL + "/commit/" + fx.clean + "\nAuthor: Test Author <author@example.com>\n\n"
	if text != wantHead+diff {
		t.Errorf("written file =\n%s\nwant\n%s", text, wantHead+diff)
	}
	if msg := fx.verifyPasses("0001-other-one-more-line.diff"); !strings.HasPrefix(msg, "identical to upstream "+fx.clean[:12]) {
		t.Errorf("verify backport check = %q, want identical", msg)
	}

	// The fix moved: it applies with an offset, and takes the next number.
	b = fx.backport(0, fx.fix, "--name", "requeue-vmi")
	if b.File != "patches/img/0002-requeue-vmi.diff" || !b.Applies {
		t.Errorf("backport = %+v", b)
	}
	text = fx.Read(b.File)
	for _, want := range []string{
		"Subject: fix: requeue while the target pod is not scheduled\n",
		"Bug: " + repoURL + "/issues/12\nBug: https://github.com/other/repo/issues/3\n",
		"\n    The controller gave up too early.\n\n    Fixes #12, see other/repo#3.\n    Signed-off-by: A Dev <dev@example.com>\n\ndiff --git",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("written file =\n%s\nwant it to contain %q", text, want)
		}
	}
	if msg := fx.verifyPasses("0002-requeue-vmi.diff"); !strings.HasPrefix(msg, "identical to upstream "+fx.fix[:12]) {
		t.Errorf("verify backport check = %q, want identical", msg)
	}

	// The oracle: git apply of the glob on a checkout of the pin.
	wt := t.TempDir()
	fx.up.Git("worktree", "add", "-q", "--detach", wt, "v1.0.0")
	files, _ := filepath.Glob(filepath.Join(fx.Root, "patches/img/*.diff"))
	if out, errOut, err := gittest.Run(wt, nil, append([]string{"apply", "--whitespace=error"}, files...)...); err != nil {
		t.Fatalf("git apply of the written series: %v %s %s", err, out, errOut)
	}

	// The same commit again, a commit the pin has, one upstream lacks: exit 2.
	for _, args := range [][]string{{fx.fix}, {"v1.0.0"}, {"deadbeefdeadbeefdeadbeefdeadbeefdeadbeef"}, {fx.clean, "--name", "../x"}} {
		code, stdout, stderr := fx.run(append([]string{"backport", "img"}, args...)...)
		if code != 2 || stdout != "" {
			t.Errorf("backport %v: exit %d, %s%s; want 2", args, code, stdout, stderr)
		}
	}
	if got := fx.patches(); len(got) != 2 {
		t.Errorf("patches = %v, want the two backports only", got)
	}

	// A commit that does not apply to the pin is written, for a refresh by
	// hand, and the exit code is 1.
	code, stdout, _ := fx.run("backport", "img", fx.conflict)
	if code != 1 || !strings.Contains(stdout, "wrote backport patches/img/0003-greet-change-the-top-line.diff") ||
		!strings.Contains(stdout, "does not apply to v1.0.0") || !strings.Contains(stdout, "patches/img/0003-greet-change-the-top-line.diff:") {
		t.Errorf("backport of a conflicting commit: exit %d\n%s", code, stdout)
	}
	if _, err := os.Stat(filepath.Join(fx.Root, "patches/img/0003-greet-change-the-top-line.diff")); err != nil {
		t.Errorf("the conflicting backport was not written: %v", err)
	}
}

func TestBackportReference(t *testing.T) {
	fx := newFixture(t)
	b := fx.backport(0, fx.fix, "--reference")
	if b.File != "patches/img/0001-fix-requeue-while-the-target-pod-is-not-scheduled.ref.diff" || !b.Reference || !b.Written || !b.Applies {
		t.Fatalf("backport --reference = %+v", b)
	}
	pidOut, _, err := fx.up.GitIn([]byte(fx.up.Show(fx.fix)), "patch-id", "--stable")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Fields(pidOut)[0]; b.PatchID != want {
		t.Errorf("patch-id = %s, git patch-id --stable says %s", b.PatchID, want)
	}
	text := fx.Read(b.File)
	if strings.Contains(text, "diff --git") || !strings.Contains(text, "\nReference: "+fx.fix+"\nPatch-Id: "+b.PatchID+"\n") ||
		!strings.Contains(text, "Origin: upstream, "+repoURL+"/commit/"+fx.fix+"\n") {
		t.Errorf("reference file =\n%s", text)
	}
	// A second, ordinary backport after the reference keeps the order.
	b2 := fx.backport(0, fx.clean)
	if b2.File != "patches/img/0002-other-one-more-line.diff" {
		t.Errorf("backport after a reference = %s", b2.File)
	}
	if msg := fx.verifyPasses(filepath.Base(b.File)); !strings.HasPrefix(msg, "identical to upstream "+fx.fix[:12]) {
		t.Errorf("verify of the reference = %q", msg)
	}

	// patchkit apply materializes it; the tree is the one git gives for the
	// documented recipe (each file, or the referenced commit's diff).
	out := filepath.Join(t.TempDir(), "out")
	if code, stdout, stderr := fx.run("apply", "img", "--out", out); code != 0 {
		t.Fatalf("apply with a reference: exit %d\n%s%s", code, stdout, stderr)
	}
	wt := t.TempDir()
	fx.up.Git("worktree", "add", "-q", "--detach", wt, "v1.0.0")
	files, _ := filepath.Glob(filepath.Join(fx.Root, "patches/img/*.diff"))
	if _, _, err := gittest.Run(wt, nil, append([]string{"apply"}, files...)...); err == nil {
		t.Errorf("git apply of a glob with a reference succeeded; it must fail rather than skip the reference")
	}
	recipe := `set -e
for p in $(LC_ALL=C ls "$PATCHES" | grep -E '\.(diff|patch)$'); do
  id=$(sed -n 's/^Reference: *\([0-9a-f]\{40\}\) *$/\1/p' "$PATCHES/$p")
  if [ -n "$id" ]; then git show --format= --binary "$id"; else cat "$PATCHES/$p"; fi |
    git apply --whitespace=error || exit 1
done`
	if o, e, err := runShell(wt, recipe, "PATCHES="+filepath.Join(fx.Root, "patches/img")); err != nil {
		t.Fatalf("the documented recipe: %v\n%s%s", err, o, e)
	}
	for _, p := range []string{"greet.txt", "other.txt", "tool.sh"} {
		a, _ := os.ReadFile(filepath.Join(wt, p))
		b, _ := os.ReadFile(filepath.Join(out, p))
		if string(a) != string(b) {
			t.Errorf("%s: patchkit apply %q, the recipe %q", p, b, a)
		}
	}

	// A reference whose patch-id no longer matches is bad input for apply,
	// naming the file and the Patch-Id line, and a verify failure.
	bad := strings.Replace(text, "Patch-Id: "+b.PatchID, "Patch-Id: "+strings.Repeat("a", 40), 1)
	fx.Write(b.File, bad)
	code, stdout, stderr := fx.run("apply", "img", "--check")
	if code != 2 || !strings.Contains(stderr, b.File+":7: the diff's patch-id is "+b.PatchID+", not "+strings.Repeat("a", 40)) {
		t.Errorf("apply with a stale reference: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = fx.run("verify", "img")
	if code != 1 || !strings.Contains(stdout, "FAIL backport         line 7: differs: the diff's patch-id is "+b.PatchID) {
		t.Errorf("verify with a stale reference: exit %d\n%s", code, stdout)
	}

	// A reference that does not apply is not written.
	fx.Write(b.File, text)
	code, stdout, _ = fx.run("backport", "img", fx.conflict, "--reference")
	if code != 1 || !strings.Contains(stdout, "did not write reference patches/img/0003-greet-change-the-top-line.ref.diff") {
		t.Errorf("backport --reference of a conflicting commit: exit %d\n%s", code, stdout)
	}
	if got := fx.patches(); len(got) != 2 {
		t.Errorf("patches = %v, want no new file", got)
	}
}

// runShell runs script with sh in dir, with git's test environment.
func runShell(dir, script string, env ...string) (string, string, error) {
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = gittest.Env(env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	return o.String(), e.String(), err
}
