package txn

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/patchkit/patchkit/internal/diag"
)

// Resolve returns the file rel names under root with symbolic links
// resolved, so that a write goes through a link to its target; a target
// outside the repository is refused. A missing file resolves through its
// directory (the file is then created there).
func Resolve(root, rel string) (string, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	full := filepath.Join(root, filepath.FromSlash(rel))
	path, err := filepath.EvalSymlinks(full)
	if errors.Is(err, fs.ErrNotExist) {
		if _, lerr := os.Lstat(full); lerr == nil {
			return "", diag.Inputf(rel, 0, "a symbolic link to a missing file: patchkit does not write through it")
		}
		path, err = resolveMissing(full)
	}
	if err != nil {
		return "", err
	}
	if r, err := filepath.Rel(realRoot, path); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", diag.Inputf(rel, 0, "resolves to %s, outside the repository: patchkit does not write there", path)
	}
	return path, nil
}

// resolveMissing resolves the nearest existing ancestor of a missing path
// and joins the rest to it.
func resolveMissing(full string) (string, error) {
	rest := ""
	for p := filepath.Clean(full); ; p = filepath.Dir(p) {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) || p == filepath.Dir(p) {
			return "", err
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// CheckReplaceable refuses a file that an atomic replace (write a temporary
// file, fsync, rename) would damage: not a regular file, or one with other
// hard links (the rename would leave them holding the old content). rel
// names it in the error.
func CheckReplaceable(rel string, st os.FileInfo) error {
	if !st.Mode().IsRegular() {
		return diag.Inputf(rel, 0, "not a regular file (%v)", st.Mode().Type())
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
		return diag.Inputf(rel, 0, "has %d hard links: patchkit replaces a file atomically (write, fsync, rename), which would leave the other links with the old content; make them symlinks", sys.Nlink)
	}
	return nil
}

// Adopt gives tmp, the new content of target, target's owner and mode (a
// new file gets 0644 less nothing: the mode git checks files out with).
// Changing the owner needs the owner's or root's rights; without them it
// is an error that says so.
func Adopt(tmp *os.File, target string) error {
	mode := os.FileMode(0o644)
	st, err := os.Stat(target)
	switch {
	case err == nil:
		mode = st.Mode() & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky)
		if sys, ok := st.Sys().(*syscall.Stat_t); ok && (int(sys.Uid) != os.Geteuid() || int(sys.Gid) != os.Getegid()) {
			if err := tmp.Chown(int(sys.Uid), int(sys.Gid)); err != nil {
				return fmt.Errorf("keeping the owner %d:%d (run as the file's owner or as root): %w", sys.Uid, sys.Gid, err)
			}
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return tmp.Chmod(mode)
}

// SyncDir makes a rename in dir durable; an error only loses durability.
func SyncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
