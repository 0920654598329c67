package tree

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
)

func files(m map[string]string) map[string]*File {
	out := map[string]*File{}
	for k, v := range m {
		out[k] = &File{Mode: Regular, Data: []byte(v)}
	}
	return out
}

// TestOutWriteOwnership: Write leaves the tree exactly as given (no
// marker in it) and an ownership record beside it; while the new tree is
// moved in, the record names both the old and the new tree, so a kill at
// that point leaves a tree a later run may replace; afterwards only the
// new one. A directory put at the same path by hand is not patchkit's.
func TestOutWriteOwnership(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "src")
	o := OutPolicy{Dir: dir, Root: parent}
	if err := o.Write(nil, files(map[string]string{"a.txt": "one\n"})); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "a.txt" {
		t.Errorf("the tree holds %v, want only a.txt", entries)
	}
	if _, err := os.Stat(filepath.Join(parent, ".src.patchkit-out")); err != nil {
		t.Fatalf("no ownership record beside the tree: %v", err)
	}
	if !Owned(dir) {
		t.Fatal("Owned() = false for the tree Write wrote")
	}
	if err := o.Check(); err != nil {
		t.Errorf("Check() of patchkit's default tree = %v, want nil", err)
	}
	calls := 0
	o.moving = func(tmp string) {
		calls++
		if !Owned(dir) {
			t.Error("while moving, the old tree is no longer owned")
		}
		if !Owned(tmp) {
			// tmp's record is dir's: compare identities directly.
			id, _ := identityOf(tmp)
			found := false
			for _, x := range readOwner(dir) {
				found = found || x == id
			}
			if !found {
				t.Error("while moving, the record does not name the new tree")
			}
		}
		if n := len(readOwner(dir)); n != 2 {
			t.Errorf("while moving, the record names %d trees, want 2", n)
		}
	}
	if err := o.Write(nil, files(map[string]string{"b.txt": "two\n"})); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("moving called %d times, want 1", calls)
	}
	if n := len(readOwner(dir)); n != 1 || !Owned(dir) {
		t.Errorf("after the write the record names %d trees (owned %v), want 1 and owned", n, Owned(dir))
	}
	// Replaced by hand: same path, another directory.
	os.RemoveAll(dir)
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("mine\n"), 0o644)
	if Owned(dir) {
		t.Error("Owned() = true for a directory made by hand at the tree's path")
	}
	var ue *diag.UsageError
	if err := o.Check(); !errors.As(err, &ue) || !strings.Contains(err.Error(), "patchkit did not write it") {
		t.Errorf("Check() of a hand-made directory = %v, want a usage error", err)
	}
}

// TestOutLegacyMarkerOwned: a tree holding the marker earlier versions
// wrote inside it is patchkit's; Write replaces it with a tree without it.
func TestOutLegacyMarkerOwned(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "src")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, LegacyMarker), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "old.txt"), nil, 0o644)
	if !Owned(dir) {
		t.Fatal("Owned() = false for a legacy-marked tree")
	}
	o := OutPolicy{Dir: dir, Explicit: true, Force: true}
	if err := o.Check(); err != nil {
		t.Fatal(err)
	}
	if err := o.Write(nil, files(map[string]string{"a.txt": "one\n"})); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, LegacyMarker)); !os.IsNotExist(err) {
		t.Errorf("the new tree still holds the legacy marker: %v", err)
	}
	if !Owned(dir) {
		t.Error("Owned() = false after the migration")
	}
}
