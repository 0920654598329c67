package stamp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Write writes every changed file. For each file, in path order, it takes
// an exclusive flock on the file (the same inode the path names, so a
// concurrent stamp that replaced it is waited for and re-read), removes
// temporary files a killed earlier run left, re-reads the file and redoes
// the edit on what is there now: two stamps of different keys of one file
// both land. Once every file is edited and checked, each new content goes
// to a temporary file beside its target (same mode and owner, synced);
// only then are they renamed over the targets. Nothing is written when
// any file fails. p.Changes is updated to what was written.
func (p *Plan) Write() error {
	files := append([]*file{}, p.files...)
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	var held []*os.File
	defer func() {
		for _, f := range held {
			f.Close() // closing drops the flock
		}
	}()
	var changes []Change
	var pending []*file
	for _, f := range files {
		lf, st, err := lock(f.path)
		if err != nil {
			return fmt.Errorf("locking %s: %w", f.rel, err)
		}
		held = append(held, lf)
		removeStale(f.path, time.Now())
		if err := checkFile(f.rel, st); err != nil {
			return err
		}
		data, err := io.ReadAll(lf)
		if err != nil {
			return fmt.Errorf("reading %s: %w", f.rel, err)
		}
		out, c, err := p.edit(f, data)
		if err != nil {
			return err
		}
		f.old, f.new = data, out
		changes = append(changes, c...)
		if string(out) != string(data) {
			pending = append(pending, f)
		}
	}
	if err := commit(pending); err != nil {
		return err
	}
	p.Changes = changes
	return nil
}

// checkFile refuses a target stamp cannot replace without loss: not a
// regular file, or one with other hard links (a rename would leave them
// holding the old content).
func checkFile(rel string, st os.FileInfo) error {
	if !st.Mode().IsRegular() {
		return inputErr(rel, 0, "not a regular file (%v)", st.Mode().Type())
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
		return inputErr(rel, 0, "has %d hard links: stamp replaces the file atomically (write, fsync, rename), which would leave the other links with the old content; make them symlinks", sys.Nlink)
	}
	return nil
}

// lock opens path and takes an exclusive flock on it, retrying while the
// path is replaced under it (a concurrent stamp renamed its new content
// over the file we waited on).
func lock(path string) (*os.File, os.FileInfo, error) {
	for try := 0; try < 1000; try++ {
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, err
		}
		if err := flock(f); err != nil {
			f.Close()
			return nil, nil, err
		}
		held, err1 := f.Stat()
		now, err2 := os.Lstat(path)
		if err := errors.Join(err1, err2); err != nil {
			f.Close()
			return nil, nil, err
		}
		if os.SameFile(held, now) {
			return f, held, nil
		}
		f.Close()
	}
	return nil, nil, errors.New("the file keeps being replaced")
}

func flock(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			return err
		}
	}
}

// tempPattern names a target's temporary files: ".<name>.patchkit-*".
func tempPattern(path string) string { return "." + filepath.Base(path) + ".patchkit-*" }

// removeStale removes the temporary files of path that a killed earlier
// run left. The caller holds path's lock, and every run creates and
// renames its temporary file under that lock, so none of them belongs to
// a live run; only regular files older than before are touched.
func removeStale(path string, before time.Time) {
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), tempPattern(path)))
	for _, t := range left {
		if st, err := os.Lstat(t); err == nil && st.Mode().IsRegular() && st.ModTime().Before(before) {
			os.Remove(t)
		}
	}
}

// commit writes each file's new content to a temporary file beside it,
// then renames them all over their targets.
func commit(files []*file) (err error) {
	temps := make([]string, len(files))
	defer func() {
		if err != nil {
			for _, t := range temps {
				if t != "" {
					os.Remove(t)
				}
			}
		}
	}()
	for i, f := range files {
		if temps[i], err = writeTemp(f); err != nil {
			return fmt.Errorf("writing %s: %w", f.rel, err)
		}
	}
	for i, f := range files {
		if err = os.Rename(temps[i], f.path); err != nil {
			return fmt.Errorf("writing %s: %w", f.rel, err)
		}
		temps[i] = ""
		syncDir(filepath.Dir(f.path))
	}
	return nil
}

// writeTemp writes f's new content to a temporary file beside it, with
// the target's owner and mode, synced.
func writeTemp(f *file) (name string, err error) {
	st, err := os.Stat(f.path)
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.path), tempPattern(f.path))
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(f.new); err != nil {
		return "", err
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && (int(sys.Uid) != os.Geteuid() || int(sys.Gid) != os.Getegid()) {
		if err = tmp.Chown(int(sys.Uid), int(sys.Gid)); err != nil {
			return "", fmt.Errorf("keeping the owner %d:%d (stamp as the file's owner or as root): %w", sys.Uid, sys.Gid, err)
		}
	}
	if err = tmp.Chmod(st.Mode() & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky)); err != nil {
		return "", err
	}
	if err = tmp.Sync(); err != nil {
		return "", err
	}
	return tmp.Name(), tmp.Close()
}

// syncDir makes a rename in dir durable; an error only loses durability.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
