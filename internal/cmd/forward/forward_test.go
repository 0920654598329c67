package forward_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/cmd/cmdtest"
	"github.com/patchkit/patchkit/internal/cmd/root"
	"github.com/patchkit/patchkit/internal/gittest"
)

// The upstream at v1.0.0 (the pin), and master, which moved on: two lines
// inserted after the package clause of guard.go (the patch no longer applies at its line
// numbers, only at an offset) and a line next to the patched one rewritten
// in merge.go (the patch does not apply; the three-way merge rebases it).
const (
	guardV1   = "package x\n\nvar p *int\n\nfunc a() error {\n\tif p == nil {\n\t\treturn nil\n\t}\n\treturn nil\n}\n"
	guardHead = "package x\n// one\n// two\n\nvar p *int\n\nfunc a() error {\n\tif p == nil {\n\t\treturn nil\n\t}\n\treturn nil\n}\n"
	guardWant = "package x\n// one\n// two\n\nvar p *int\n\nfunc a() error {\n\tif p == nil {\n\t\treturn errNotYet\n\t}\n\treturn nil\n}\n"
	mergeV1   = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"
	mergeHead = "one\ntwo\nthree\nfour\nfive\nsix upstream\nseven\n"
	mergeWant = "one\ntwo\nthree ours\nfour\nfive\nsix upstream\nseven\n"
)

const earlier = `Subject: earlier vendor change
Origin: vendor
Forwarded: not-needed

diff --git a/other.txt b/other.txt
--- a/other.txt
+++ b/other.txt
@@ -1 +1 @@
-other
+other downstream
`

const guard = `Subject: requeue while p is nil
Description: requeue while p is nil
 instead of forgetting the key.
Author: Dev One <dev@example.com>
Origin: vendor
Forwarded: no
Bug: https://github.com/up/proj/issues/5
Test: TestA/nil_p

diff --git a/guard.go b/guard.go
--- a/guard.go
+++ b/guard.go
@@ -4,7 +4,7 @@
 
 func a() error {
 	if p == nil {
-		return nil
+		return errNotYet
 	}
 	return nil
 }
`

const merge = `Subject: ours
Author: Dev One <dev@example.com>
Origin: vendor

diff --git a/merge.txt b/merge.txt
--- a/merge.txt
+++ b/merge.txt
@@ -2,5 +2,5 @@
 two
-three
+three ours
 four
 five
 six
`

const conflict = `Subject: clash
Author: Dev One <dev@example.com>
Origin: vendor

diff --git a/merge.txt b/merge.txt
--- a/merge.txt
+++ b/merge.txt
@@ -4,4 +4,4 @@
 four
 five
-six
+six ours
 seven
`

type fixture struct {
	up          *gittest.Repo
	root, cache string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	up := gittest.New(t)
	up.Write("guard.go", guardV1)
	up.Write("merge.txt", mergeV1)
	up.Write("other.txt", "other\n")
	up.Release("v1", "v1.0.0")
	up.Write("guard.go", guardHead)
	up.Write("merge.txt", mergeHead)
	up.Commit("master moves on")
	f := &fixture{up: up, root: t.TempDir(), cache: t.TempDir()}
	gittest.WriteFiles(t, f.root, map[string]string{
		"images/app/patchkit.yaml":       "upstream:\n  url: " + up.URL() + "\n  ref: v1.0.0\n  releases: \"v1.*\"\npatches: patches/app\ntest:\n  inject:\n    - from: patches/app/tests/a_test.go\n      to: a_test.go\n  package: .\n  run: '^TestA$'\n",
		"patches/app/0001-earlier.diff":  earlier,
		"patches/app/0002-guard.diff":    guard,
		"patches/app/0003-merge.diff":    merge,
		"patches/app/0004-conflict.diff": conflict,
		"patches/app/tests/a_test.go":    "package x\n",
	})
	return f
}

func (f *fixture) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return cmdtest.RunAll(t, root.NewCmdRoot, append([]string{"--root", f.root, "--cache-dir", f.cache}, args...)...)
}

// am applies the mail with `git am` on a clone of the upstream's master and
// returns file's content there: git is the oracle of the format-patch output.
func (f *fixture) am(t *testing.T, mail, file string) string {
	t.Helper()
	dir := t.TempDir()
	if _, e, err := gittest.Run(dir, nil, "clone", "-q", f.up.Dir, "c"); err != nil {
		t.Fatalf("clone: %v: %s", err, e)
	}
	c := filepath.Join(dir, "c")
	if _, e, err := gittest.Run(c, []byte(mail), "am", "-q"); err != nil {
		t.Fatalf("git am of the forwarded mail: %v: %s\n%s", err, e, mail)
	}
	author, _, _ := gittest.Run(c, nil, "log", "-1", "--format=%an <%ae> %at")
	if got, want := strings.TrimSpace(author), "Dev One <dev@example.com> 1764547200"; got != want {
		t.Errorf("the commit's author = %q, want %q", got, want)
	}
	b, err := os.ReadFile(filepath.Join(c, file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestForward(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1764547200")
	tests := []struct {
		name, patch, file, want, fate string
	}{
		{"offset", "patches/app/0002-guard.diff", "guard.go", guardWant, "refreshed"},
		{"three-way merge", "patches/app/0003-merge.diff", "merge.txt", mergeWant, "merged"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			out := filepath.Join(t.TempDir(), "fwd")
			code, stdout, errOut := f.run(t, "forward", tt.patch, "--out", out, "-o", "json")
			if code != 0 {
				t.Fatalf("forward = exit %d\n%s%s", code, stdout, errOut)
			}
			var res struct {
				Fate, To, Name string
				Files          []string
			}
			if err := json.Unmarshal([]byte(stdout), &res); err != nil {
				t.Fatalf("%v\n%s", err, stdout)
			}
			if res.Fate != tt.fate || res.To != "main" || len(res.Files) != 2 {
				t.Errorf("forward = fate %s to %s files %v, want %s main and 2 files", res.Fate, res.To, res.Files, tt.fate)
			}
			mail, err := os.ReadFile(filepath.Join(out, res.Name))
			if err != nil {
				t.Fatal(err)
			}
			if got := f.am(t, string(mail), tt.file); got != tt.want {
				t.Errorf("%s after git am = %q, want %q", tt.file, got, tt.want)
			}
		})
	}
}

func TestForwardBody(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1764547200")
	f := newFixture(t)
	out := t.TempDir()
	if code, stdout, errOut := f.run(t, "forward", "patches/app/0002-guard.diff", "--out", out); code != 0 {
		t.Fatalf("forward = exit %d\n%s%s", code, stdout, errOut)
	}
	bodies, _ := filepath.Glob(filepath.Join(out, "*.pr.md"))
	if len(bodies) != 1 {
		t.Fatalf("PR bodies = %v, want 1", bodies)
	}
	b, _ := os.ReadFile(bodies[0])
	for _, want := range []string{"## requeue while p is nil", "instead of forgetting the key", "https://github.com/up/proj/issues/5", "`TestA/nil_p`", "patches/app/tests/a_test.go"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("PR body lacks %q:\n%s", want, b)
		}
	}
	mails, _ := filepath.Glob(filepath.Join(out, "*.patch"))
	m, _ := os.ReadFile(mails[0])
	if !strings.Contains(string(m), "Subject: [PATCH] requeue while p is nil") || !strings.Contains(string(m), "instead of forgetting the key.") {
		t.Errorf("the mail lacks the subject or the description:\n%s", m)
	}
}

// TestForwardConflict: a change the branch clashes with is a finding, and
// nothing is written.
func TestForwardConflict(t *testing.T) {
	f := newFixture(t)
	out := filepath.Join(t.TempDir(), "fwd")
	code, stdout, errOut := f.run(t, "forward", "patches/app/0004-conflict.diff", "--out", out)
	if code != 1 || !strings.Contains(stdout, "conflict") {
		t.Fatalf("forward of a clash = exit %d, want 1 naming the conflict\n%s%s", code, stdout, errOut)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("forward of a clash wrote %s", out)
	}
}

func TestForwardBadInput(t *testing.T) {
	f := newFixture(t)
	gittest.WriteFiles(t, f.root, map[string]string{
		"patches/app/0005-backport.diff": "Subject: b\nOrigin: upstream, 1234567890123456789012345678901234567890\n\n" + strings.SplitN(merge, "\n\n", 2)[1],
		"patches/app/0006-anon.diff":     "Subject: anon\nOrigin: vendor\n\n" + strings.SplitN(merge, "\n\n", 2)[1],
	})
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"forward", "patches/app/0005-backport.diff"}, "nothing to forward"},
		{[]string{"forward", "patches/app/0006-anon.diff"}, "no author"},
		{[]string{"forward", "patches/nowhere/x.diff"}, "not in the patch directory"},
		{[]string{"forward", "patches/app/0002-guard.diff", "--pr", "not-a-url"}, "want the pull request"},
		{[]string{"forward", "patches/app/0002-guard.diff", "--pr", "https://github.com/up/proj/pull/9", "--to", "main"}, "--pr records the URL only"},
	} {
		code, _, errOut := f.run(t, tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.msg) {
			t.Errorf("%v = exit %d %q, want 2 and %q", tt.args, code, errOut, tt.msg)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(f.root, "patches/app/0002-guard.diff")); string(b) != guard {
		t.Errorf("a refused --pr changed the patch")
	}
}

// TestForwardRecord: --pr sets Forwarded: in place, and only that.
func TestForwardRecord(t *testing.T) {
	f := newFixture(t)
	const url = "https://github.com/up/proj/pull/9"
	code, out, errOut := f.run(t, "forward", "patches/app/0002-guard.diff", "--pr", url)
	if code != 0 || !strings.Contains(out, "now says Forwarded: "+url) {
		t.Fatalf("forward --pr = exit %d\n%s%s", code, out, errOut)
	}
	b, _ := os.ReadFile(filepath.Join(f.root, "patches/app/0002-guard.diff"))
	if want := strings.Replace(guard, "Forwarded: no", "Forwarded: "+url, 1); string(b) != want {
		t.Errorf("the patch after --pr =\n%s\nwant\n%s", b, want)
	}
	if code, out, _ := f.run(t, "forward", "patches/app/0002-guard.diff", "--pr", url); code != 0 || !strings.Contains(out, "already says") {
		t.Errorf("a second --pr = exit %d %q, want 0 and already says", code, out)
	}
}

// TestForwardWithTest: --with-test puts the injected test file into the
// commit, at its place in the tree, beside the change.
func TestForwardWithTest(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1764547200")
	f := newFixture(t)
	out := t.TempDir()
	code, stdout, errOut := f.run(t, "forward", "patches/app/0002-guard.diff", "--with-test", "--out", out, "-o", "json")
	if code != 0 {
		t.Fatalf("forward --with-test = exit %d\n%s%s", code, stdout, errOut)
	}
	var res struct {
		Name  string
		Tests []string
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Tests, ",") != "a_test.go" {
		t.Errorf("tests = %v, want [a_test.go]", res.Tests)
	}
	mail, _ := os.ReadFile(filepath.Join(out, res.Name))
	if got := f.am(t, string(mail), "a_test.go"); got != "package x\n" {
		t.Errorf("a_test.go after git am = %q, want the injected file", got)
	}
	if got := f.am(t, string(mail), "guard.go"); got != guardWant {
		t.Errorf("guard.go after git am = %q, want %q", got, guardWant)
	}
	body, _ := os.ReadFile(filepath.Join(out, strings.TrimSuffix(res.Name, ".patch")+".pr.md"))
	if !strings.Contains(string(body), "The commit adds the test as `a_test.go`") {
		t.Errorf("the PR body does not say the test is in the commit:\n%s", body)
	}
}
