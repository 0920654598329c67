package series

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// stripNames are the file names the strip tests run through both oracles:
// plain ones, repeated slashes before, inside and after the stripped part,
// and names with too few components.
var stripNames = []string{
	"a/b/c.txt", "a//b/c.txt", "a/b//c.txt", "//a/b/c.txt", "a///b//c.txt", "x/a", "c.txt",
}

// TestStripGitAgainstGit checks StripGit against `git apply --numstat -p<n>`
// on a traditional diff naming each file: the same path, or both refusing.
func TestStripGitAgainstGit(t *testing.T) {
	dir := t.TempDir()
	for _, name := range stripNames {
		for n := 0; n <= 3; n++ {
			t.Run(fmt.Sprintf("%s -p%d", name, n), func(t *testing.T) {
				f := filepath.Join(dir, "t.patch")
				p := fmt.Sprintf("--- %s\n+++ %s\n@@ -1 +1 @@\n-x\n+y\n", name, name)
				if err := os.WriteFile(f, []byte(p), 0o644); err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command("git", "apply", "--numstat", fmt.Sprintf("-p%d", n), f)
				cmd.Dir = dir
				out, err := cmd.CombinedOutput()
				want, wantOK := "", false
				if fs := strings.Split(strings.TrimSpace(string(out)), "\t"); err == nil && len(fs) == 3 {
					want, wantOK = fs[2], true
				} else if !strings.Contains(string(out), "unable to find filename") {
					t.Fatalf("git apply: %v\n%s", err, out)
				}
				got, ok := StripGit(name, n)
				if ok != wantOK || (ok && got != want) {
					t.Errorf("StripGit(%q, %d) = %q, %v; git apply %q, %v", name, n, got, ok, want, wantOK)
				}
			})
		}
	}
}

// TestStripGNUAgainstGNU checks StripGNU against GNU `patch --dry-run
// -p<n>`: with the file put where StripGNU says, GNU patch checks that
// file (its name squashed, as the file system reads it), and when StripGNU
// finds no name, GNU patch finds no file either.
func TestStripGNUAgainstGNU(t *testing.T) {
	for _, name := range stripNames {
		for n := 0; n <= 3; n++ {
			t.Run(fmt.Sprintf("%s -p%d", name, n), func(t *testing.T) {
				dir := t.TempDir()
				got, ok := StripGNU(name, n)
				if ok && !strings.HasPrefix(got, "/") {
					full := filepath.Join(dir, filepath.FromSlash(got))
					if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(full, []byte("x\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				p := fmt.Sprintf("--- %s\n+++ %s\n@@ -1 +1 @@\n-x\n+y\n", name, name)
				cmd := exec.Command("patch", "--dry-run", "--batch", fmt.Sprintf("-p%d", n))
				cmd.Dir = dir
				cmd.Stdin = strings.NewReader(p)
				out, _ := cmd.CombinedOutput()
				want, wantOK := "", false
				if rest, found := strings.CutPrefix(string(out), "checking file "); found {
					want, wantOK = squashSlashes(strings.TrimSpace(rest)), true
				}
				if ok && strings.HasPrefix(got, "/") {
					ok = false // GNU patch ignores an absolute name
				}
				if ok != wantOK || (ok && got != want) {
					t.Errorf("StripGNU(%q, %d) = %q, %v; GNU patch said:\n%s", name, n, got, ok, out)
				}
			})
		}
	}
}

func TestStripGNUWithoutStripKeepsBaseName(t *testing.T) {
	if got, ok := StripGNU("a//b/c.txt", -1); got != "c.txt" || !ok {
		t.Errorf("StripGNU(%q, -1) = %q, %v; want %q, true", "a//b/c.txt", got, ok, "c.txt")
	}
}

// TestParseRefusesRepeatedSlash pins what the series and apply callers of
// StripGit see of a repeated slash: Parse refuses the name as unsafe before
// any strip level applies (stricter than git apply, which reads "a//b" -p1
// as "/b"), in traditional and git diffs alike, so apply never strips one.
func TestParseRefusesRepeatedSlash(t *testing.T) {
	for _, raw := range []string{
		"--- x//a/sub/b.txt\n+++ x//a/sub/b.txt\n@@ -1 +1 @@\n-x\n+y\n",
		"--- x/a/sub//b.txt\n+++ x/a/sub//b.txt\n@@ -1 +1 @@\n-x\n+y\n",
		"diff --git a/sub//b.txt b/sub//b.txt\n--- a/sub//b.txt\n+++ b/sub//b.txt\n@@ -1 +1 @@\n-x\n+y\n",
	} {
		for _, strip := range []int{0, 1, 2} {
			_, err := Parse("0001.patch", []byte(raw), WithStrip(strip))
			if err == nil || !strings.Contains(err.Error(), "0001.patch:") || !strings.Contains(err.Error(), "unsafe path") {
				t.Errorf("Parse(strip %d) of %q: err = %v, want an unsafe path naming the file", strip, raw, err)
			}
		}
	}
}
