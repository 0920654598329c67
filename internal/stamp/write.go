package stamp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"golang.org/x/sys/unix"

	"github.com/patchkit/patchkit/internal/txn"
)

// Write writes every changed file and its stamp record (RecordName, one
// per directory). It locks, in path order, each target file (an exclusive
// flock on the inode the path names, so a concurrent stamp that replaced
// it is waited for and re-read) and each record's directory; it removes
// temporary files a killed earlier run left, re-reads each file and redoes
// the edit on what is there now: two stamps of different keys of one file
// both land. Once every file is edited and checked and every record
// updated, each new content goes to a temporary file beside its target
// (same mode and owner, synced); only then are they renamed over the
// targets, the records last. Nothing is written when any file fails.
// p.Changes is updated to what was written.
func (p *Plan) Write() error { return p.WriteContext(context.Background()) }

// WriteContext is Write, giving up when ctx ends (SIGINT, SIGTERM) while it
// waits for a lock, or before the first rename: a cancelled stamp writes
// nothing.
func (p *Plan) WriteContext(ctx context.Context) error {
	p.started = time.Now()
	p.ctx = ctx
	recs := p.records()
	held, err := p.lockAll(recs)
	defer func() {
		for _, f := range held {
			f.Close() // closing drops the flock
		}
	}()
	if err != nil {
		return err
	}
	var changes []Change
	var pending []*file
	for _, f := range p.files {
		changes = append(changes, f.changes...)
		if string(f.new) != string(f.old) {
			pending = append(pending, f)
		}
	}
	for _, r := range recs {
		changed, err := p.update(r)
		if err != nil {
			return err
		}
		if changed {
			pending = append(pending, r.out) // renamed after the values
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cancelled, nothing written: %w", err)
	}
	if err := commit(pending); err != nil {
		return err
	}
	p.Changes = changes
	return nil
}

// lockAll takes the lock of every target file and record directory, in
// path order (a directory before the files in it: every run takes them
// in the same order), and redoes each file's edit under its lock. It
// returns the open files that hold the locks, also on error.
func (p *Plan) lockAll(recs []*recordFile) ([]*os.File, error) {
	type item struct {
		path string
		f    *file // nil for a record's directory
	}
	var items []item
	for _, f := range p.files {
		items = append(items, item{f.path, f})
	}
	for _, r := range recs {
		items = append(items, item{r.dir, nil})
	}
	sort.Slice(items, func(i, j int) bool { return items[i].path < items[j].path })
	var held []*os.File
	for _, it := range items {
		lf, st, err := lock(p.ctx, it.path)
		if err != nil {
			name := it.path
			if it.f != nil {
				name = it.f.rel
			}
			return held, fmt.Errorf("locking %s: %w", name, err)
		}
		held = append(held, lf)
		if it.f == nil {
			continue
		}
		if err := p.reedit(it.f, lf, st); err != nil {
			return held, err
		}
	}
	return held, nil
}

// reedit re-reads f through lf, which holds its lock, and redoes its edit.
func (p *Plan) reedit(f *file, lf *os.File, st os.FileInfo) error {
	removeStale(f.path, p.started)
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
	f.old, f.new, f.changes = data, out, c
	return nil
}

// checkFile refuses a target stamp cannot replace without loss: not a
// regular file, or one with other hard links (a rename would leave them
// holding the old content).
func checkFile(rel string, st os.FileInfo) error {
	return txn.CheckReplaceable(rel, st)
}

// lock opens path and takes an exclusive flock on it, retrying while the
// path is replaced under it (a concurrent stamp renamed its new content
// over the file we waited on).
func lock(ctx context.Context, path string) (*os.File, os.FileInfo, error) {
	for try := 0; try < 1000; try++ {
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, err
		}
		if err := flock(ctx, f); err != nil {
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

func flock(ctx context.Context, f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil || (err != unix.EWOULDBLOCK && err != unix.EINTR) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cancelled while waiting for the lock, nothing written: %w", context.Cause(ctx))
		case <-time.After(20 * time.Millisecond):
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
	if err = txn.Adopt(tmp, f.path); err != nil {
		return "", err
	}
	if err = tmp.Sync(); err != nil {
		return "", err
	}
	return tmp.Name(), tmp.Close()
}

// syncDir makes a rename in dir durable; an error only loses durability.
func syncDir(dir string) { txn.SyncDir(dir) }
