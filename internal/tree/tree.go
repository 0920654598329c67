// Package tree is the in-memory file tree model shared by the upstream and apply stages.
package tree

import (
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
)

// Mode is a git file mode.
type Mode uint32

// The file modes a tree holds.
const (
	Regular    Mode = 0o100644
	Executable Mode = 0o100755
	Symlink    Mode = 0o120000
	Gitlink    Mode = 0o160000
)

// String renders the mode as git prints it (100644).
func (m Mode) String() string { return fmt.Sprintf("%06o", uint32(m)) }

// File is one file of a tree: its mode and its content. A symlink's content is its target.
type File struct {
	Mode Mode
	Data []byte
}

// Source gives read access to a base tree, without a checkout.
type Source interface {
	// Read returns the file at p (slash-separated, relative). ok is false when no
	// file is there (nothing, or a directory).
	Read(p string) (f *File, ok bool, err error)
	// IsDir reports whether p is a directory of the tree.
	IsDir(p string) (bool, error)
}

// Walker lists every file of a tree, in any order.
type Walker interface {
	Walk(fn func(p string, f *File) error) error
}

// Map is a Source and Walker held wholly in memory. Tests and the demo use it.
type Map map[string]*File

var (
	_ Source = Map(nil)
	_ Walker = Map(nil)
)

// Read implements Source.
func (m Map) Read(p string) (*File, bool, error) {
	f, ok := m[p]
	return f, ok, nil
}

// IsDir implements Source.
func (m Map) IsDir(p string) (bool, error) {
	prefix := p + "/"
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return true, nil
		}
	}
	return false, nil
}

// Walk implements Walker, in sorted order.
func (m Map) Walk(fn func(string, *File) error) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := fn(k, m[k]); err != nil {
			return err
		}
	}
	return nil
}

// Clean reports whether p is a safe relative path inside a tree: not absolute,
// no "..", no empty or "." element, and nothing under .git/.
func Clean(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("empty path")
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("absolute path %q", p)
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("path %q contains a NUL byte", p)
	}
	for _, el := range strings.Split(p, "/") {
		switch {
		case el == "" || el == ".":
			return fmt.Errorf("path %q has an empty or '.' element", p)
		case el == "..":
			return fmt.Errorf("path %q leaves the tree", p)
		case strings.EqualFold(el, ".git"):
			return fmt.Errorf("path %q is inside .git", p)
		}
	}
	if path.Clean(p) != p {
		return fmt.Errorf("path %q is not clean", p)
	}
	return nil
}

// WriteAtomic writes base, with changes laid over it, into dir. A nil value in
// changes deletes that path. The tree is built in a temporary sibling of dir and
// renamed into place only when complete, so a failure leaves dir untouched. An
// existing dir is replaced.
func WriteAtomic(dir string, base Walker, changes map[string]*File) (err error) {
	parent := path.Dir(strings.TrimRight(dir, "/"))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", parent, err)
	}
	tmp, err := os.MkdirTemp(parent, ".patchkit-tree-*")
	if err != nil {
		return fmt.Errorf("creating temporary tree: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	write := func(p string, f *File) error {
		if err := Clean(p); err != nil {
			return err
		}
		full := tmp + "/" + p
		if err := os.MkdirAll(path.Dir(full), 0o755); err != nil {
			return err
		}
		switch f.Mode {
		case Symlink:
			return os.Symlink(string(f.Data), full)
		case Gitlink:
			return os.MkdirAll(full, 0o755)
		case Executable:
			return os.WriteFile(full, f.Data, 0o755)
		default:
			return os.WriteFile(full, f.Data, 0o644)
		}
	}
	if base != nil {
		err = base.Walk(func(p string, f *File) error {
			if _, changed := changes[p]; changed {
				return nil
			}
			return write(p, f)
		})
		if err != nil {
			return fmt.Errorf("writing tree: %w", err)
		}
	}
	keys := make([]string, 0, len(changes))
	for k := range changes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if f := changes[k]; f != nil {
			if err := write(k, f); err != nil {
				return fmt.Errorf("writing %s: %w", k, err)
			}
		}
	}
	old := ""
	if _, statErr := os.Lstat(dir); statErr == nil {
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("replacing %s: %w", dir, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			os.Rename(old, dir)
		}
		return fmt.Errorf("moving tree into %s: %w", dir, err)
	}
	if old != "" {
		os.RemoveAll(old)
	}
	return nil
}
