package apply_test

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// snapshot lists every path under dir with its mode and a digest of its
// content, to prove a refused run touched nothing.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		sum := ""
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum = fmt.Sprintf("%x", sha256.Sum256(b))
		}
		lines = append(lines, fmt.Sprintf("%s %v %s", p, info.Mode(), sum))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestOutRefuses names directories --out must never replace, and requires
// exit 2, the reason on stderr, and the repository, the cache and the
// directory exactly as they were.
func TestOutRefuses(t *testing.T) {
	f := newFixture(t)
	// a .git in the repository, as a real checkout has
	os.MkdirAll(filepath.Join(f.root, ".git", "objects"), 0o755)
	os.WriteFile(filepath.Join(f.root, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	if code, out, errOut := f.run(t, "apply", "img", "--check"); code != 0 { // fills the cache
		t.Fatalf("apply --check = %d\n%s%s", code, out, errOut)
	}
	foreign := filepath.Join(t.TempDir(), "work")
	os.MkdirAll(filepath.Join(foreign, "notes"), 0o755)
	os.WriteFile(filepath.Join(foreign, "notes", "todo.txt"), []byte("mine\n"), 0o644)
	marked := filepath.Join(t.TempDir(), "tree")
	os.MkdirAll(marked, 0o755)
	os.WriteFile(filepath.Join(marked, ".patchkit-out"), nil, 0o644)
	os.WriteFile(filepath.Join(marked, "edited.txt"), []byte("an edit\n"), 0o644)
	file := filepath.Join(t.TempDir(), "plain-file")
	os.WriteFile(file, []byte("x\n"), 0o644)
	link := filepath.Join(t.TempDir(), "link-to-root")
	os.Symlink(f.root, link)
	// the repository root, marked as if patchkit had written it: the marker
	// does not make an ancestor of the root replaceable
	rootMarked := filepath.Join(f.root, ".patchkit-out")

	tests := []struct {
		name  string
		dir   string
		force bool
		why   string
	}{
		{"foreign non-empty dir", foreign, false, "patchkit did not write it"},
		{"foreign non-empty dir with --force", foreign, true, "patchkit did not write it"},
		{"tree patchkit wrote, without --force", marked, false, "--force replaces it"},
		{"repository root", f.root, true, "holds the repository root"},
		{"repository root, relative", ".", true, "holds the repository root"},
		{"ancestor of the root", filepath.Dir(f.root), true, "holds the repository root"},
		{"ancestor of the cache", filepath.Dir(filepath.Dir(f.cache)), true, "holds"},
		{"cache dir", f.cache, true, "holds the cache directory"},
		{"inside the cache", filepath.Join(f.cache, "tree"), true, "inside the cache directory"},
		{"inside .git", filepath.Join(f.root, ".git", "tree"), true, "inside a .git directory"},
		{"filesystem root", "/", true, "filesystem root"},
		{"symlink to the root", link, true, "holds the repository root"},
		{"a file", file, true, "not a directory"},
	}
	os.WriteFile(rootMarked, nil, 0o644)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.dir == "." {
				t.Chdir(f.root)
			}
			before := []string{snapshot(t, f.root), snapshot(t, f.cache), snapshot(t, foreign), snapshot(t, marked)}
			args := []string{"apply", "img", "--out", tt.dir}
			if tt.force {
				args = append(args, "--force")
			}
			code, stdout, stderr := f.run(t, args...)
			if code != 2 || !strings.Contains(stderr, "refusing to replace it") || !strings.Contains(stderr, tt.why) {
				t.Errorf("apply --out %s = %d, stderr %q; want 2 and %q", tt.dir, code, stderr, tt.why)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing in text format", stdout)
			}
			after := []string{snapshot(t, f.root), snapshot(t, f.cache), snapshot(t, foreign), snapshot(t, marked)}
			for i := range before {
				if before[i] != after[i] {
					t.Errorf("a refused run changed files:\nbefore %s\nafter  %s", before[i], after[i])
				}
			}
		})
	}
}

// TestOutReplaces covers what --out may write to: a new directory, an empty
// one, a tree patchkit wrote (--force), and the default directory, which a
// second run replaces without --force.
func TestOutReplaces(t *testing.T) {
	f := newFixture(t)
	empty := filepath.Join(t.TempDir(), "empty")
	os.Mkdir(empty, 0o755)
	code, out, errOut := f.run(t, "apply", "img", "--out", empty)
	if code != 0 {
		t.Fatalf("apply --out an empty dir = %d\n%s%s", code, out, errOut)
	}
	os.WriteFile(filepath.Join(empty, "edited.txt"), []byte("an edit\n"), 0o644)
	if code, _, errOut := f.run(t, "apply", "img", "--out", empty, "--force"); code != 0 {
		t.Fatalf("apply --out a tree patchkit wrote --force = %d\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(empty, "edited.txt")); !os.IsNotExist(err) {
		t.Errorf("--force kept the old tree's edited.txt: %v", err)
	}
	for _, p := range []string{"greet.txt", "tool.sh"} {
		if _, err := os.Stat(filepath.Join(empty, p)); err != nil {
			t.Errorf("the replaced tree lacks %s: %v", p, err)
		}
	}
	// The ownership record is beside the tree, never in it.
	if _, err := os.Stat(filepath.Join(empty, ".patchkit-out")); !os.IsNotExist(err) {
		t.Errorf("the tree holds a .patchkit-out marker: %v", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(empty), ".empty.patchkit-out")); err != nil {
		t.Errorf("no ownership record beside the tree: %v", err)
	}
	for run := 1; run <= 2; run++ {
		if code, _, errOut := f.run(t, "apply", "img"); code != 0 {
			t.Fatalf("apply (default out), run %d = %d\n%s", run, code, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(f.root, "_output/img/src/greet.txt")); err != nil {
		t.Errorf("default out: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(f.root, "_output/img"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != ".src.patchkit-out src" {
		t.Errorf("_output/img holds %v, want only src and its ownership record (no temporary tree left)", names)
	}
}

// TestOutModes requires the modes git checkout gives: directories 0755 and
// files 0644 less the umask, executables 0755.
func TestOutModes(t *testing.T) {
	f := newFixture(t)
	for _, tt := range []struct {
		umask   int
		dir     os.FileMode
		regular os.FileMode
	}{{0o022, 0o755, 0o644}, {0o027, 0o750, 0o640}} {
		t.Run(fmt.Sprintf("umask %03o", tt.umask), func(t *testing.T) {
			old := syscall.Umask(tt.umask)
			defer syscall.Umask(old)
			out := filepath.Join(t.TempDir(), "out")
			if code, _, errOut := f.run(t, "apply", "img", "--out", out); code != 0 {
				t.Fatalf("apply = %d\n%s", code, errOut)
			}
			for p, want := range map[string]os.FileMode{".": tt.dir, "keep": tt.dir, "greet.txt": tt.regular, "keep/data.txt": tt.regular} {
				st, err := os.Stat(filepath.Join(out, p))
				if err != nil {
					t.Fatal(err)
				}
				if got := st.Mode().Perm(); got != want {
					t.Errorf("mode of %s = %03o, want %03o", p, got, want)
				}
			}
			if st, err := os.Stat(filepath.Join(out, "tool.sh")); err != nil || st.Mode().Perm()&0o111 == 0 {
				t.Errorf("tool.sh = %v, %v; want an executable", st, err)
			}
		})
	}
}

// TestOutLegacyMarker: a tree an earlier version wrote (the .patchkit-out
// marker inside it) is still patchkit's: the default directory is replaced,
// and the new tree carries no marker; its ownership record is beside it.
// A default directory with neither is refused, untouched.
func TestOutLegacyMarker(t *testing.T) {
	f := newFixture(t)
	src := filepath.Join(f.root, "_output", "img", "src")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, ".patchkit-out"), []byte("written by an earlier patchkit\n"), 0o644)
	os.WriteFile(filepath.Join(src, "stale.txt"), []byte("old tree\n"), 0o644)
	if code, _, errOut := f.run(t, "apply", "img"); code != 0 {
		t.Fatalf("apply over a legacy-marked default tree = %d\n%s", code, errOut)
	}
	for p, want := range map[string]bool{"greet.txt": true, "stale.txt": false, ".patchkit-out": false} {
		if _, err := os.Stat(filepath.Join(src, p)); (err == nil) != want {
			t.Errorf("after the migration, %s exists = %v, want %v", p, err == nil, want)
		}
	}
	if _, err := os.Stat(filepath.Join(f.root, "_output", "img", ".src.patchkit-out")); err != nil {
		t.Errorf("no ownership record after the migration: %v", err)
	}
	// The same directory, recreated by hand: the record names the tree
	// patchkit wrote, not this one.
	os.RemoveAll(src)
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "mine.txt"), []byte("mine\n"), 0o644)
	before := snapshot(t, f.root)
	if code, _, errOut := f.run(t, "apply", "img"); code != 2 || !strings.Contains(errOut, "patchkit did not write it") {
		t.Errorf("apply over a hand-made default tree = %d, %q; want 2, refused", code, errOut)
	}
	if after := snapshot(t, f.root); after != before {
		t.Errorf("a refused run changed files:\nbefore %s\nafter  %s", before, after)
	}
}
