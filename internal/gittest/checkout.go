package gittest

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Entry is one path of a checked-out tree.
type Entry struct {
	Mode fs.FileMode // from Lstat: the type bits and the permissions
	Data []byte      // a file's content, a symlink's target; nil for a directory
}

// Checkout reads the tree under dir as git would see it: every file with its
// mode and content, every symlink with its target, every directory, keyed by
// its slash-separated path relative to dir. .git is left out.
func Checkout(tb testing.TB, dir string) map[string]Entry {
	tb.Helper()
	out := map[string]Entry{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".":
			return nil
		case rel == ".git" && d.IsDir():
			return filepath.SkipDir
		case rel == ".git":
			return nil
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		e := Entry{Mode: info.Mode()}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			e.Data = []byte(target)
		case info.IsDir():
		default:
			if e.Data, err = os.ReadFile(p); err != nil {
				return err
			}
		}
		out[rel] = e
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}
