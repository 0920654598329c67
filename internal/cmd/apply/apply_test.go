package apply_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// fixture is a repository with one image whose series has two patches, and an
// upstream with a release v1 and a later v2 that carries the first patch.
type fixture struct {
	up    *gittest.Repo
	root  string
	cache string
}

const fixPatch1 = `Subject: greet the world
Origin: vendor
Forwarded: no

diff --git a/greet.txt b/greet.txt
--- a/greet.txt
+++ b/greet.txt
@@ -1,3 +1,3 @@
 one
-hello
+hello world
 three
`

const fixPatch2 = `Subject: add a tool
Origin: vendor
Forwarded: no

diff --git a/tool.sh b/tool.sh
new file mode 100755
--- /dev/null
+++ b/tool.sh
@@ -0,0 +1,2 @@
+#!/bin/sh
+echo tool
`

func newFixture(t *testing.T) *fixture {
	t.Helper()
	up := gittest.New(t)
	up.Write("greet.txt", "one\nhello\nthree\n")
	up.Write("keep/data.txt", "data\n")
	up.Release("v1", "v1")
	up.Write("greet.txt", "one\nhello world\nthree\n")
	up.Release("v2", "v2")
	f := &fixture{up: up, root: t.TempDir(), cache: t.TempDir()}
	writeSpec(t, f.root, "img", up.URL())
	dir := filepath.Join(f.root, "patches", "img")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "0001-greet.diff"), []byte(fixPatch1), 0o644)
	os.WriteFile(filepath.Join(dir, "0002-tool.patch"), []byte(fixPatch2), 0o644)
	return f
}

func (f *fixture) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runPatchkit(t, append([]string{"--root", f.root, "--cache-dir", f.cache}, args...)...)
}

type applyJSON struct {
	Image    string `json:"image"`
	Upstream struct {
		URL, Ref, Commit string
	} `json:"upstream"`
	OK      bool `json:"ok"`
	Patches []struct {
		File   string `json:"file"`
		Status string `json:"status"`
		Errors []struct {
			Kind, File, Message string
			Line                int
		} `json:"errors"`
	} `json:"patches"`
}

func TestApplyWritesTree(t *testing.T) {
	f := newFixture(t)
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := f.run(t, "apply", "img", "--out", out)
	if code != 0 {
		t.Fatalf("apply exit = %d, want 0\n%s%s", code, stdout, stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(out, "greet.txt")); string(got) != "one\nhello world\nthree\n" {
		t.Errorf("greet.txt = %q", got)
	}
	st, err := os.Stat(filepath.Join(out, "tool.sh"))
	if err != nil || st.Mode().Perm()&0o111 == 0 {
		t.Errorf("tool.sh = %v, %v; want an executable", st, err)
	}
	if got, _ := os.ReadFile(filepath.Join(out, "keep/data.txt")); string(got) != "data\n" {
		t.Errorf("keep/data.txt = %q, want the upstream file", got)
	}
	// The oracle: git apply of the same glob on a checkout of v1.
	wt := t.TempDir()
	f.up.Git("worktree", "add", "-q", wt, "v1")
	patches, _ := filepath.Glob(filepath.Join(f.root, "patches/img/*"))
	if out, errOut, err := gittest.Run(wt, nil, append([]string{"apply", "--whitespace=error"}, patches...)...); err != nil {
		t.Fatalf("git apply: %v %s %s", err, out, errOut)
	}
	for _, p := range []string{"greet.txt", "tool.sh", "keep/data.txt"} {
		a, _ := os.ReadFile(filepath.Join(wt, p))
		b, _ := os.ReadFile(filepath.Join(out, p))
		if string(a) != string(b) {
			t.Errorf("%s: patchkit %q, git %q", p, b, a)
		}
	}
	if !strings.Contains(stdout, "wrote "+out) {
		t.Errorf("stdout = %q, want it to say where the tree went", stdout)
	}
}

func TestApplyCheckJSONAndOffline(t *testing.T) {
	f := newFixture(t)
	code, stdout, stderr := f.run(t, "apply", "img", "--check", "-o", "json")
	if code != 0 {
		t.Fatalf("exit = %d\n%s%s", code, stdout, stderr)
	}
	var got applyJSON
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, stdout)
	}
	if got.Image != "img" || !got.OK || got.Upstream.Ref != "v1" || len(got.Upstream.Commit) != 40 || len(got.Patches) != 2 {
		t.Errorf("json = %+v", got)
	}
	if got.Patches[0].File != "patches/img/0001-greet.diff" || got.Patches[0].Status != "applied" || got.Patches[0].Errors == nil {
		t.Errorf("patches[0] = %+v", got.Patches[0])
	}
	if _, err := os.Stat(filepath.Join(f.root, "_output")); !os.IsNotExist(err) {
		t.Errorf("--check wrote _output (err %v)", err)
	}
	// The cache holds what these runs fetched (the pin, then v2): a second
	// run needs no network. Move the upstream away and go offline.
	if code, stdout, stderr := f.run(t, "apply", "img", "--check", "--ref", "v2"); code != 1 {
		t.Fatalf("--ref v2 exit = %d, want 1 (patch 0001 is in v2)\n%s%s", code, stdout, stderr)
	}
	moved := f.up.Dir + ".moved"
	if err := os.Rename(f.up.Dir, moved); err != nil {
		t.Fatal(err)
	}
	defer os.Rename(moved, f.up.Dir)
	if code, stdout, stderr := f.run(t, "--offline", "apply", "img", "--check"); code != 0 {
		t.Fatalf("offline exit = %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := f.run(t, "--offline", "apply", "img", "--check", "--ref", "v2"); code != 1 {
		t.Fatalf("offline --ref v2 exit = %d, want 1 (patch 0001 is in v2)\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := f.run(t, "--offline", "apply", "img", "--check", "--ref", "v9"); code != 2 || !strings.Contains(stderr, "v9") {
		t.Errorf("offline --ref v9 exit = %d, want 2 naming v9\n%s", code, stderr)
	}
}

func TestApplyConflictWritesNothing(t *testing.T) {
	f := newFixture(t)
	out := filepath.Join(t.TempDir(), "out")
	os.MkdirAll(out, 0o755)
	os.WriteFile(filepath.Join(out, "old.txt"), []byte("previous tree\n"), 0o644)
	os.WriteFile(filepath.Join(out, ".patchkit-out"), nil, 0o644) // a tree patchkit wrote
	code, stdout, _ := f.run(t, "apply", "img", "--ref", "v2", "--out", out, "--force", "-o", "json")
	if code != 1 {
		t.Fatalf("exit = %d, want 1\n%s", code, stdout)
	}
	var got applyJSON
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	if got.OK || got.Patches[0].Status != "failed" || got.Patches[1].Status != "applied" {
		t.Errorf("json = %+v", got)
	}
	e := got.Patches[0].Errors[0]
	if e.Kind != "conflict" || e.File != "patches/img/0001-greet.diff" || e.Line != 8 {
		t.Errorf("error = %+v, want a conflict at patches/img/0001-greet.diff:8", e)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "old.txt")); string(b) != "previous tree\n" {
		t.Errorf("a failed apply touched --out")
	}
	if _, err := os.Stat(filepath.Join(out, "greet.txt")); !os.IsNotExist(err) {
		t.Errorf("a failed apply wrote greet.txt")
	}
	// text output names the patch, file, hunk and shows both sides
	_, text, _ := f.run(t, "apply", "img", "--ref", "v2", "--check")
	for _, want := range []string{"FAILED", "0001-greet.diff:8", "greet.txt", "@@ -1,3 +1,3 @@", "expected", "tree has at line 1"} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}
}

func TestApplyWhitespaceError(t *testing.T) {
	f := newFixture(t)
	bad := strings.Replace(fixPatch1, "+hello world\n", "+hello world \n", 1)
	os.WriteFile(filepath.Join(f.root, "patches/img/0001-greet.diff"), []byte(bad), 0o644)
	code, stdout, _ := f.run(t, "apply", "img", "--check")
	if code != 1 || !strings.Contains(stdout, "patches/img/0001-greet.diff:11: trailing whitespace.\n") {
		t.Errorf("exit = %d, output:\n%s\nwant exit 1 and git's patch:line: trailing whitespace", code, stdout)
	}
	code, stdout, _ = f.run(t, "apply", "img", "--check", "-o", "github")
	if code != 1 || !strings.Contains(stdout, "::error file=patches/img/0001-greet.diff,line=11") {
		t.Errorf("github output = %q", stdout)
	}
}

func TestApplyBadInvocation(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no image with --out", []string{"apply", "--out", "x"}, "--out names the tree of one image"},
		{"two images", []string{"apply", "img", "img"}, "accepts at most 1 arg"},
		{"unknown image", []string{"apply", "nope"}, "no image \"nope\""},
		{"bad output", []string{"-o", "yaml", "apply", "img"}, "-o \"yaml\""},
		{"check with out", []string{"apply", "img", "--check", "--out", "x"}, "exclude each other"},
		{"unknown flag", []string{"apply", "img", "--frobnicate"}, "unknown flag"},
		{"bad root", []string{"--root", "/nonexistent/x", "apply", "img"}, "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := f.run(t, tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit = %d, stderr = %q; want 2 and %q", code, stderr, tt.want)
			}
		})
	}
	// a spec error names the file and line
	os.WriteFile(filepath.Join(f.root, "images/img/patchkit.yaml"), []byte("upstream:\n  url: x\n  ref: v1\n  colour: red\npatches: p\n"), 0o644)
	code, _, stderr := f.run(t, "apply", "img")
	if code != 2 || !strings.Contains(stderr, "images/img/patchkit.yaml:4: upstream.colour: unknown key") {
		t.Errorf("exit = %d, stderr = %q", code, stderr)
	}
}

func TestApplyRedactsToken(t *testing.T) {
	f := newFixture(t)
	t.Setenv("GITHUB_TOKEN", "ghp_supersecrettoken123")
	url := "https://x-access-token:ghp_supersecrettoken123@127.0.0.1:1/nothing.git"
	code, stdout, stderr := f.run(t, "--upstream-url", url, "apply", "img", "--check")
	if code != 2 {
		t.Errorf("exit = %d, want 2 for an unreachable upstream", code)
	}
	if strings.Contains(stdout+stderr, "supersecret") {
		t.Errorf("the token leaked:\n%s%s", stdout, stderr)
	}
}
