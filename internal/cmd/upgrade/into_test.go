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

// eksMinors generates a downstream of aws/eks-distro's shape whose
// release branches carry a series of two patches written by git
// format-patch against v1.0.0 of an upstream with two minors: 0001 changes
// a line that v1.1.0 moves (carried: rebased by the three-way merge), 0002 adds a file that
// v1.1.0 adds itself (upstream carries it: dropped). Every branch is at
// v1.0.0 with the same series, its directory holding GIT_TAG,
// GOLANG_VERSION, patches/, the spec, an ATTRIBUTION.txt and an executable
// script.
func eksMinors(t *testing.T, branches ...string) (root, cache, upstream string) {
	t.Helper()
	up := gittest.New(t)
	up.Write("go.mod", "module example.com/r\n\ngo 1.24.0\n")
	up.Write("main.go", "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n")
	up.Release("v1.0.0", "v1.0.0")
	up.Git("checkout", "-q", "-b", "fix")
	up.Write("main.go", "package main\n\nfunc main() {\n\tprintln(\"hello, fixed\")\n}\n")
	up.Commit("Fix the greeting")
	up.Write("util.go", "package main\n\nfunc util() int { return 1 }\n")
	up.Commit("Add util")
	mails := t.TempDir()
	up.Git("format-patch", "-q", "-2", "-o", mails)
	up.Git("checkout", "-q", "-")
	up.Write("util.go", "package main\n\nfunc util() int { return 1 }\n")
	up.Commit("Add util (#12)")
	up.Write("go.mod", "module example.com/r\n\ngo 1.25.0\n")
	up.Write("main.go", "// Package main greets.\npackage main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n")
	up.Release("v1.1.0", "v1.1.0")

	root, cache = eksDownstream(t, up, branches, func(down *gittest.Repo, d string) {
		down.Write(d+"ATTRIBUTION.txt", "r is Apache-2.0\n")
		down.WriteMode(d+"build.sh", "#!/bin/sh\nexit 0\n", 0o755)
		// Each mail as git format-patch writes it, one file per commit.
		for _, name := range []string{"0001-Fix-the-greeting.patch", "0002-Add-util.patch"} {
			down.Write(d+"patches/"+name, gittest.ReadFile(t, mails, name))
		}
		down.Write(d+"patchkit.yaml", eksSpec)
	})
	return root, cache, up.Dir
}

// gitAm is the build's oracle: git am of dir's series, in glob order, on a
// clone of upstream at tag.
func gitAm(t *testing.T, upstream, tag, dir string) error {
	t.Helper()
	work := t.TempDir()
	if _, errOut, err := gittest.Run(work, nil, "clone", "-q", upstream, "."); err != nil {
		t.Fatal(errOut)
	}
	if _, errOut, err := gittest.Run(work, nil, "checkout", "-q", tag); err != nil {
		t.Fatal(errOut)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "patches", "*.patch"))
	if len(files) == 0 {
		t.Fatalf("no patches in %s", dir)
	}
	_, errOut, err := gittest.Run(work, nil, append([]string{"am", "-q", "--committer-date-is-author-date"}, files...)...)
	if err != nil {
		gittest.Run(work, nil, "am", "--abort")
		t.Logf("git am at %s: %s", tag, errOut)
	}
	return err
}

// snapshot reads every file under dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			info, _ := d.Info()
			rel, _ := filepath.Rel(dir, p)
			out[filepath.ToSlash(rel)] = info.Mode().String() + " " + string(b)
		}
		return nil
	})
	return out
}

// TestUpgradeInto is issue V's new release branch: upgrade SRC --into 1-31
// copies the unit beside it and carries the series to the newest release
// there: the patch upstream carries is not copied, the other is rewritten
// at v1.1.0, GIT_TAG says v1.1.0 and GOLANG_VERSION is raised, the other
// files are copied with their modes, and SRC is untouched. The oracle is
// git am of the new branch's series at its GIT_TAG (the series as it was
// fails there). --dry-run writes nothing; a DIR that is not empty is
// refused.
func TestUpgradeInto(t *testing.T) {
	const src, dst = "projects/o/r/1-30", "projects/o/r/1-31"
	root, cache, upstream := eksMinors(t, "1-30")
	pk := func(args ...string) (int, string, string) {
		return cmdtest.Run(t, rootcmd.NewCmdRoot, append([]string{"--root", root, "--cache-dir", cache}, args...)...)
	}
	before := snapshot(t, filepath.Join(root, src))
	if gitAm(t, upstream, "v1.0.0", filepath.Join(root, src)) != nil {
		t.Fatal("git am of the series at its pin fails: the fixture is wrong")
	}
	if gitAm(t, upstream, "v1.1.0", filepath.Join(root, src)) == nil {
		t.Fatal("git am of the series at v1.1.0 succeeds as it is: the test would not show it carried")
	}

	if code, out, errOut := pk("upgrade", src, "--into", "1-31", "--dry-run"); code != 0 || !strings.Contains(out, "would copy (dry run, nothing written) into "+dst) {
		t.Fatalf("upgrade --into --dry-run = %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(root, dst)); err == nil {
		t.Fatalf("upgrade --into --dry-run created %s", dst)
	}

	code, out, errOut := pk("-o", "json", "upgrade", src, "--into", "1-31")
	if code != 0 {
		t.Fatalf("upgrade --into = %d\n%s%s", code, out, errOut)
	}
	var res struct {
		Image, Into string
		Pin         struct{ File, From, To string }
		Patches     []struct{ File, Fate string }
		Written     []struct{ Path, Action string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("upgrade --into -o json: %v\n%s", err, out)
	}
	if res.Image != src || res.Into != dst || res.Pin.File != dst+"/GIT_TAG" || res.Pin.From != "v1.0.0" || res.Pin.To != "v1.1.0" {
		t.Errorf("upgrade --into = image %q into %q pin %+v, want %s into %s, %s/GIT_TAG v1.0.0 -> v1.1.0", res.Image, res.Into, res.Pin, src, dst, dst)
	}
	fates := map[string]string{}
	for _, p := range res.Patches {
		fates[p.File] = p.Fate
	}
	if fates[dst+"/patches/0001-Fix-the-greeting.patch"] != "merged" || fates[dst+"/patches/0002-Add-util.patch"] != "dropped" {
		t.Errorf("upgrade --into fates = %v, want 0001 merged and 0002 dropped", fates)
	}
	for _, w := range res.Written {
		if w.Action != "create" || !strings.HasPrefix(w.Path, dst+"/") {
			t.Errorf("upgrade --into wrote %+v, want only files created under %s", w, dst)
		}
	}

	if got := snapshot(t, filepath.Join(root, src)); len(got) != len(before) {
		t.Errorf("%s changed: %d files, want %d", src, len(got), len(before))
	} else {
		for k, v := range before {
			if got[k] != v {
				t.Errorf("%s/%s changed", src, k)
			}
		}
	}
	after := snapshot(t, filepath.Join(root, dst))
	for name, want := range map[string]string{
		"GIT_TAG":         "-rw-r--r-- v1.1.0\n",
		"GOLANG_VERSION":  "-rw-r--r-- 1.25\n",
		"ATTRIBUTION.txt": before["ATTRIBUTION.txt"],
		"build.sh":        before["build.sh"],
		"patchkit.yaml":   before["patchkit.yaml"],
	} {
		if after[name] != want {
			t.Errorf("%s/%s = %q, want %q", dst, name, after[name], want)
		}
	}
	if _, ok := after["patches/0002-Add-util.patch"]; ok || len(after) != 6 {
		t.Errorf("%s holds %d files (the dropped patch: %v), want 6 and not the dropped one", dst, len(after), ok)
	}
	if err := gitAm(t, upstream, strings.TrimSpace(gittest.ReadFile(t, root, dst+"/GIT_TAG")), filepath.Join(root, dst)); err != nil {
		t.Errorf("git am of %s's series at its GIT_TAG: %v", dst, err)
	}
	if code, v := verifyUnit(t, pk, dst); code != 0 || !v.OK {
		t.Errorf("verify %s = %d %+v", dst, code, v)
	}

	code, _, errOut = pk("upgrade", src, "--into", dst)
	if code != 2 || !strings.Contains(errOut, dst+" exists and is not empty") {
		t.Errorf("upgrade --into an existing unit = %d %q, want 2 and the reason", code, errOut)
	}
}

// TestUpgradeIntoAtPin: with no release newer than the pin, --into copies
// the unit at its pin (eks-distro's 1-33 to 1-36 share v1.14.3).
func TestUpgradeIntoAtPin(t *testing.T) {
	root, cache, _ := eksMinors(t, "1-30")
	pk := func(args ...string) (int, string, string) {
		return cmdtest.Run(t, rootcmd.NewCmdRoot, append([]string{"--root", root, "--cache-dir", cache}, args...)...)
	}
	if code, out, errOut := pk("upgrade", "projects/o/r/1-30", "--to", "v1.1.0"); code != 0 {
		t.Fatalf("upgrade = %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := pk("upgrade", "projects/o/r/1-30", "--into", "projects/o/r/1-31")
	if code != 0 || !strings.Contains(out, "v1.1.0 (") || !strings.Contains(out, "kept      0001-Fix-the-greeting.patch") {
		t.Fatalf("upgrade --into at the pin = %d\n%s%s", code, out, errOut)
	}
	if a, b := snapshot(t, filepath.Join(root, "projects/o/r/1-30")), snapshot(t, filepath.Join(root, "projects/o/r/1-31")); len(a) != len(b) || a["patches/0001-Fix-the-greeting.patch"] != b["patches/0001-Fix-the-greeting.patch"] || b["GIT_TAG"] != "-rw-r--r-- v1.1.0\n" {
		t.Errorf("the copy at the pin differs: %v\n%v", a, b)
	}
}

// TestUpgradeIntoRefused: a spec whose patch directory is named from the
// root (its copy would name the old unit's series), and a DIR inside SRC,
// are bad input (exit 2), and nothing is created.
func TestUpgradeIntoRefused(t *testing.T) {
	root, cache, _ := eksMinors(t, "1-30")
	pk := func(args ...string) (int, string, string) {
		return cmdtest.Run(t, rootcmd.NewCmdRoot, append([]string{"--root", root, "--cache-dir", cache}, args...)...)
	}
	if code, _, errOut := pk("upgrade", "projects/o/r/1-30", "--into", "projects/o/r/1-30/next"); code != 2 || !strings.Contains(errOut, "is inside it") {
		t.Errorf("upgrade --into a directory inside the unit = %d %q, want 2", code, errOut)
	}
	specFile := filepath.Join(root, "projects/o/r/1-30/patchkit.yaml")
	os.WriteFile(specFile, []byte(strings.Replace(eksSpec, "patches: ./patches", "patches: projects/o/r/1-30/patches", 1)), 0o644)
	code, _, errOut := pk("upgrade", "projects/o/r/1-30", "--into", "1-31/")
	if code != 2 || !strings.Contains(errOut, "write it relative to the spec (./patches)") {
		t.Errorf("upgrade --into of a spec naming its patches from the root = %d %q, want 2 and the fix", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(root, "projects/o/r/1-31")); err == nil {
		t.Errorf("a refused upgrade --into created the directory")
	}
}
