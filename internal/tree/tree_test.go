package tree

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestClean(t *testing.T) {
	tests := []struct {
		path string
		ok   bool
	}{
		{"a/b.go", true},
		{"a..b/c", true},
		{".github/workflows/x.yml", true},
		{"", false},
		{"/etc/passwd", false},
		{"../x", false},
		{"a/../../x", false},
		{"a/./b", false},
		{"a//b", false},
		{".git/config", false},
		{"sub/.GIT/hooks/x", false},
		{"a/\x00b", false},
	}
	for _, tt := range tests {
		if err := Clean(tt.path); (err == nil) != tt.ok {
			t.Errorf("Clean(%q) = %v, want ok=%v", tt.path, err, tt.ok)
		}
	}
}

type failingWalker struct{ after int }

func (f failingWalker) Walk(fn func(string, *File) error) error {
	for i := 0; i < f.after; i++ {
		if err := fn("f"+string(rune('a'+i)), &File{Mode: Regular, Data: []byte("x")}); err != nil {
			return err
		}
	}
	return errors.New("disk on fire")
}

func TestWriteAtomic(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	base := Map{
		"a.txt":      {Mode: Regular, Data: []byte("a\n")},
		"bin/tool":   {Mode: Executable, Data: []byte("#!/bin/sh\n")},
		"link":       {Mode: Symlink, Data: []byte("a.txt")},
		"gone.txt":   {Mode: Regular, Data: []byte("bye\n")},
		"deep/x/y/z": {Mode: Regular, Data: []byte("z\n")},
	}
	changes := map[string]*File{
		"gone.txt": nil,
		"a.txt":    {Mode: Regular, Data: []byte("A\n")},
		"new/n.go": {Mode: Regular, Data: []byte("package n\n")},
	}
	if err := WriteAtomic(dir, base, changes); err != nil {
		t.Fatalf("WriteAtomic() = %v", err)
	}
	read := func(p string) string { b, _ := os.ReadFile(filepath.Join(dir, p)); return string(b) }
	if got := read("a.txt"); got != "A\n" {
		t.Errorf("a.txt = %q, want the change", got)
	}
	if got := read("new/n.go"); got != "package n\n" {
		t.Errorf("new/n.go = %q", got)
	}
	if _, err := os.Lstat(filepath.Join(dir, "gone.txt")); !os.IsNotExist(err) {
		t.Errorf("gone.txt exists after its deletion")
	}
	if st, err := os.Stat(filepath.Join(dir, "bin/tool")); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("bin/tool mode = %v, %v; want 0755", st.Mode(), err)
	}
	if target, err := os.Readlink(filepath.Join(dir, "link")); err != nil || target != "a.txt" {
		t.Errorf("link = %q, %v", target, err)
	}

	// A failing write leaves the previous tree as it was, and no temp dir.
	if err := WriteAtomic(dir, failingWalker{after: 3}, nil); err == nil {
		t.Fatal("WriteAtomic(failing) = nil, want an error")
	}
	if got := read("a.txt"); got != "A\n" {
		t.Errorf("after a failed write a.txt = %q, want the previous tree", got)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 {
		t.Errorf("parent holds %d entries after a failed write, want only out/", len(entries))
	}
	// An unsafe path in changes is refused and nothing is replaced.
	if err := WriteAtomic(dir, nil, map[string]*File{"../evil": {Mode: Regular}}); err == nil {
		t.Fatal("WriteAtomic(../evil) = nil, want an error")
	}
	if _, err := os.Stat(filepath.Join(parent, "evil")); !os.IsNotExist(err) {
		t.Errorf("../evil was written")
	}
	// Writing again replaces the tree whole.
	if err := WriteAtomic(dir, Map{"only": {Mode: Regular, Data: []byte("1")}}, nil); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("replaced tree has %d entries, want 1", len(entries))
	}
}

// TestWriteAtomicRemovesStaleTrees: the temporary trees of killed writers
// (their lock free, or no lock at all) are removed by the next write into
// the same parent; a tree whose writer is alive (its lock held) is kept.
func TestWriteAtomicRemovesStaleTrees(t *testing.T) {
	parent := t.TempDir()
	mk := func(name string, files ...string) {
		t.Helper()
		for _, f := range files {
			p := filepath.Join(parent, name, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk(".patchkit-tree-dead", "a/b.txt")
	mk(".patchkit-tree-dead.old", "c.txt")
	if err := os.WriteFile(filepath.Join(parent, ".patchkit-tree-dead.lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	mk(".patchkit-tree-nolock", "d.txt")
	mk(".patchkit-tree-live", "e.txt")
	live, err := os.Create(filepath.Join(parent, ".patchkit-tree-live.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err := unix.Flock(int(live.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	mk("keep", "f.txt")

	if err := WriteAtomic(filepath.Join(parent, "out"), Map{"g.txt": {Mode: Regular, Data: []byte("g")}}, nil); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := []string{".patchkit-tree-live", ".patchkit-tree-live.lock", "keep", "out"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("after WriteAtomic the parent holds %v, want %v", got, want)
	}
}
