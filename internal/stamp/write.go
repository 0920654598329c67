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

// Write writes every changed file and its stamp record (RecordName, see
// recordDir). It takes the repository lock (txn.Acquire: a concurrent
// patchkit that writes the repository is waited for), completes or undoes
// a write a killed run left in the journal, then locks, in path order,
// each target file (an exclusive flock on the inode the path names) and
// each record's directory; it removes temporary files a killed earlier run
// left, re-reads each file and redoes the edit on what is there now: two
// stamps of different keys of one file both land. Once every file is
// edited and checked and every record updated (a record an earlier
// version left inside a chart is merged and deleted), the files and
// records are written as one transaction (txn): each new content to a
// temporary file beside its target (same mode and owner, synced), a
// journal, then the renames, the records last. Nothing is written when any
// file fails, and a run killed part-way is completed by the next one.
// p.Changes is updated to what was written.
func (p *Plan) Write() error { return p.WriteContext(context.Background()) }

// WriteContext is Write, giving up when ctx ends (SIGINT, SIGTERM) while it
// waits for a lock, or before the commit point: a cancelled stamp writes
// nothing.
func (p *Plan) WriteContext(ctx context.Context) error {
	p.started = time.Now()
	p.ctx = ctx
	lk, err := txn.Acquire(ctx, p.root, p.Waiting, p.LockTimeout)
	if err != nil {
		return fmt.Errorf("nothing was written: %w", err)
	}
	defer lk.Release()
	if _, err := txn.RecoverLocked(p.root); err != nil {
		return err
	}
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
	set := txn.New(p.root)
	var changes []Change
	for _, f := range p.files {
		changes = append(changes, f.changes...)
		if string(f.new) != string(f.old) {
			set.Write(f.rel, f.new, f.old)
		}
	}
	for _, r := range recs {
		changed, err := p.update(r)
		if err != nil {
			return err
		}
		if !changed {
			continue
		}
		if r.absent {
			set.Create(r.out.rel, r.out.new)
		} else {
			set.Write(r.out.rel, r.out.new, r.out.old)
		}
		for _, l := range r.legacy {
			if l.old != nil {
				set.Delete(l.rel, l.old)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cancelled, nothing written: %w", err)
	}
	if _, err := set.CommitLocked(ctx, lk); err != nil {
		return txn.Explain(err)
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
