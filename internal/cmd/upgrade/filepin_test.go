package upgrade_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/cmd/cmdtest"
	rootcmd "github.com/patchkit/patchkit/internal/cmd/root"
	"github.com/patchkit/patchkit/internal/gittest"
)

const eksSpec = `upstream:
  url: https://github.com/o/r.git
  ref:
    file: ./GIT_TAG
  releases: "v1.*"
  versions:
    - file: ./GOLANG_VERSION
      whole-file: true
patches: ./patches
`

// eksRepo generates a downstream of aws/eks-distro's shape: the project
// Makefile reads projects/o/r/<branch>/GIT_TAG and GOLANG_VERSION, and each
// branch directory holds them beside patches/ (one patch written by git
// format-patch against v1.0.0) and a spec. The upstream, reached through
// insteadOf, has v1.0.0 (go 1.24.0) and v1.1.0 (go 1.25.0, and lines moved
// under the patch). spec is the spec of every branch in branches.
func eksRepo(t *testing.T, spec string, branches ...string) (root, cache, upstream string) {
	t.Helper()
	up := gittest.New(t)
	up.Write("go.mod", "module example.com/r\n\ngo 1.24.0\n")
	up.Write("main.go", "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n")
	up.Release("v1.0.0", "v1.0.0")
	up.Git("checkout", "-q", "-b", "fix")
	up.Write("main.go", "package main\n\nfunc main() {\n\tprintln(\"hello, fixed\")\n}\n")
	up.Commit("Fix the greeting")
	patch := up.Git("format-patch", "-1", "--stdout")
	up.Git("checkout", "-q", "-")
	up.Write("go.mod", "module example.com/r\n\ngo 1.25.0\n")
	up.Write("main.go", "// Package main greets.\npackage main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n")
	up.Release("v1.1.0", "v1.1.0")

	root, cache = eksDownstream(t, up, branches, func(down *gittest.Repo, d string) {
		down.Write(d+"patches/0001-x.patch", strings.TrimSuffix(patch, "\n")+"\n")
		down.Write(d+"patchkit.yaml", spec)
	})
	return root, cache, up.Dir
}

// eksDownstream is a downstream of eks-distro's shape over upstream up,
// reached as https://github.com/o/r.git through git's insteadOf: the
// project Makefile that reads each branch's GIT_TAG and GOLANG_VERSION,
// and for each branch those two files at v1.0.0 and Go 1.24, and what
// files writes under d (projects/o/r/<branch>/). It returns the
// downstream's root and a cache directory.
func eksDownstream(t *testing.T, up *gittest.Repo, branches []string, files func(down *gittest.Repo, d string)) (root, cache string) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gitconfig")
	if err := os.WriteFile(cfg, []byte("[url \""+up.URL()+"\"]\n\tinsteadOf = https://github.com/o/r.git\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", cfg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")

	down := gittest.New(t)
	down.Write("projects/o/r/Makefile", "GIT_TAG?=$(shell cat $(RELEASE_BRANCH)/GIT_TAG)\nGOLANG_VERSION?=$(shell cat $(RELEASE_BRANCH)/GOLANG_VERSION)\nREPO=r\nREPO_OWNER=o\ninclude $(BASE_DIRECTORY)/Common.mk\n")
	for _, b := range branches {
		d := "projects/o/r/" + b + "/"
		down.Write(d+"GIT_TAG", "v1.0.0\n")
		down.Write(d+"GOLANG_VERSION", "1.24\n")
		files(down, d)
	}
	down.Commit("eks-distro's shape")
	return down.Dir, filepath.Join(dir, "cache")
}

type verifyJSON struct {
	OK     bool
	Checks []struct{ Patch, Check, Status, Message string }
}

func verifyUnit(t *testing.T, pk func(...string) (int, string, string), unit string) (int, verifyJSON) {
	t.Helper()
	code, out, errOut := pk("-o", "json", "verify", unit)
	var res []verifyJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res) != 1 {
		var one verifyJSON
		if err2 := json.Unmarshal([]byte(out), &one); err2 != nil {
			t.Fatalf("verify -o json: %v\n%s%s", err, out, errOut)
		}
		return code, one
	}
	return code, res[0]
}

func check(v verifyJSON, name string) (status, msg string) {
	for _, c := range v.Checks {
		if c.Check == name {
			return c.Status, c.Message
		}
	}
	return "", ""
}

// TestUpgradeMovesPinFile is issue V's pin in a plain file: upgrade --to
// writes the new tag into GIT_TAG, in the write set of the series, and
// raises GOLANG_VERSION to the new ref's go directive; --dry-run writes
// nothing; verify then passes, its pin check naming GIT_TAG.
func TestUpgradeMovesPinFile(t *testing.T) {
	const unit = "projects/o/r/1-30"
	root, cache, upstream := eksRepo(t, eksSpec, "1-30")
	pk := func(args ...string) (int, string, string) {
		return cmdtest.Run(t, rootcmd.NewCmdRoot, append([]string{"--root", root, "--cache-dir", cache}, args...)...)
	}
	read := func(name string) string { return gittest.ReadFile(t, root, unit+"/"+name) }
	patchBefore := read("patches/0001-x.patch")
	gitAm := func(tag string) error {
		work := t.TempDir()
		if _, errOut, err := gittest.Run(work, nil, "clone", "-q", upstream, "."); err != nil {
			t.Fatal(errOut)
		}
		if _, errOut, err := gittest.Run(work, nil, "checkout", "-q", tag); err != nil {
			t.Fatal(errOut)
		}
		_, _, err := gittest.Run(work, nil, "am", "-q", filepath.Join(root, unit, "patches", "0001-x.patch"))
		return err
	}
	if gitAm("v1.1.0") == nil {
		t.Fatal("git am of the series at v1.1.0 before the upgrade succeeded: the test would not show the series carried")
	}

	if code, v := verifyUnit(t, pk, unit); code != 0 || !v.OK {
		t.Fatalf("verify before = %d %+v", code, v)
	}
	if code, out, errOut := pk("upgrade", unit, "--to", "v1.1.0", "--dry-run"); code != 0 {
		t.Fatalf("upgrade --dry-run = %d\n%s%s", code, out, errOut)
	}
	if read("GIT_TAG") != "v1.0.0\n" || read("GOLANG_VERSION") != "1.24\n" || read("patches/0001-x.patch") != patchBefore {
		t.Fatalf("upgrade --dry-run wrote: GIT_TAG %q, GOLANG_VERSION %q", read("GIT_TAG"), read("GOLANG_VERSION"))
	}

	code, out, errOut := pk("-o", "json", "upgrade", unit, "--to", "v1.1.0")
	if code != 0 {
		t.Fatalf("upgrade = %d\n%s%s", code, out, errOut)
	}
	var plan struct {
		Pin    struct{ File, From, To string }
		Writes []struct{ Path string }
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatalf("upgrade -o json: %v\n%s", err, out)
	}
	var written []string
	for _, w := range plan.Writes {
		written = append(written, w.Path)
	}
	if plan.Pin.File != unit+"/GIT_TAG" || plan.Pin.From != "v1.0.0" || plan.Pin.To != "v1.1.0" {
		t.Errorf("upgrade pin = %+v, want %s/GIT_TAG v1.0.0 -> v1.1.0", plan.Pin, unit)
	}
	for _, w := range []string{unit + "/GIT_TAG", unit + "/patches/0001-x.patch", unit + "/GOLANG_VERSION"} {
		if !strings.Contains(strings.Join(written, " "), w) {
			t.Errorf("upgrade writes %v, want %s among them (one write set)", written, w)
		}
	}
	if got := read("GIT_TAG"); got != "v1.1.0\n" {
		t.Errorf("GIT_TAG = %q, want \"v1.1.0\\n\"", got)
	}
	if got := read("GOLANG_VERSION"); got != "1.25\n" {
		t.Errorf("GOLANG_VERSION = %q, want \"1.25\\n\" (go 1.25.0 at v1.1.0)", got)
	}
	if got := read("patchkit.yaml"); got != eksSpec {
		t.Errorf("the spec changed:\n%s", got)
	}
	if got := read("patches/0001-x.patch"); got == patchBefore || !strings.Contains(got, "hello, fixed") {
		t.Errorf("the patch was not carried to v1.1.0:\n%s", got)
	}
	// The oracle: what the build does, git am of the series at the tag
	// GIT_TAG names, applies.
	if err := gitAm(strings.TrimSpace(read("GIT_TAG"))); err != nil {
		t.Errorf("git am of the carried series at GIT_TAG: %v", err)
	}

	code, v := verifyUnit(t, pk, unit)
	if code != 0 || !v.OK {
		t.Fatalf("verify after upgrade = %d %+v", code, v)
	}
	if st, msg := check(v, "pin"); st != "pass" || !strings.Contains(msg, unit+"/GIT_TAG:1") {
		t.Errorf("verify pin = %s %q, want pass naming %s/GIT_TAG:1", st, msg, unit)
	}
	if st, msg := check(v, "versions"); st != "pass" || !strings.Contains(msg, "GOLANG_VERSION:1 holds Go 1.25") {
		t.Errorf("verify versions = %s %q, want pass", st, msg)
	}

	// GOLANG_VERSION lowered by hand below the go directive fails.
	os.WriteFile(filepath.Join(root, unit, "GOLANG_VERSION"), []byte("1.24\n"), 0o644)
	if code, v := verifyUnit(t, pk, unit); code != 1 {
		t.Errorf("verify with GOLANG_VERSION 1.24 = %d, want 1", code)
	} else if st, msg := check(v, "versions"); st != "fail" || !strings.Contains(msg, "below the go directive 1.25.0") {
		t.Errorf("verify versions = %s %q, want a failure naming go 1.25.0", st, msg)
	}
}

// TestPinFileEditedByHand: a unit whose spec copies the pin while the build
// reads GIT_TAG (the state issue V found after upgrade moved the spec and
// left GIT_TAG) passes verify's pin check while the two agree, and fails it
// once GIT_TAG is edited by hand, naming the file and line.
func TestPinFileEditedByHand(t *testing.T) {
	const unit = "projects/o/r/1-29"
	root, cache, _ := eksRepo(t, strings.Replace(eksSpec, "  ref:\n    file: ./GIT_TAG\n", "  ref: v1.0.0\n", 1), "1-29")
	pk := func(args ...string) (int, string, string) {
		return cmdtest.Run(t, rootcmd.NewCmdRoot, append([]string{"--root", root, "--cache-dir", cache}, args...)...)
	}
	code, v := verifyUnit(t, pk, unit)
	if st, msg := check(v, "pin"); code != 0 || st != "pass" || !strings.Contains(msg, unit+"/GIT_TAG:1") {
		t.Fatalf("verify = %d, pin %s %q; want 0 and a pass naming GIT_TAG", code, st, msg)
	}
	os.WriteFile(filepath.Join(root, unit, "GIT_TAG"), []byte("v1.1.0\n"), 0o644)
	code, v = verifyUnit(t, pk, unit)
	st, msg := check(v, "pin")
	if code != 1 || st != "fail" || !strings.Contains(msg, "the spec pins v1.0.0 (copied into the spec), but "+unit+"/GIT_TAG:1 holds v1.1.0") {
		t.Errorf("verify with GIT_TAG edited = %d, pin %s %q; want 1 and a failure naming GIT_TAG:1", code, st, msg)
	}
}
