// Package tree is the in-memory file tree model shared by the upstream and apply stages.
package tree

import (
	"fmt"
	"os"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
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

// Recycler is a Walker whose files' buffers may serve again once written:
// WriteAtomic calls Recycle with each file of the walk once it has written
// it and holds it no longer. A Walker that is not a Recycler hands out
// buffers WriteAtomic never gives back.
type Recycler interface {
	Recycle(f *File)
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
// existing dir is replaced. Temporary trees of killed writers in the same
// parent are removed first (see tmpTree). Files are written by a few workers at once, since
// creating thousands of small files is bound by system calls, not by reading.
func WriteAtomic(dir string, base Walker, changes map[string]*File) error {
	return writeAtomic(dir, base, changes, nil)
}

// writeAtomic is WriteAtomic, calling beforeMove (when not nil) with the
// complete temporary tree just before it is moved into place; an error
// from it fails the write, leaving dir untouched.
func writeAtomic(dir string, base Walker, changes map[string]*File, beforeMove func(tmp string) error) (err error) {
	parent := path.Dir(strings.TrimRight(dir, "/"))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", parent, err)
	}
	removeStale(parent)
	tt, err := newTmpTree(parent)
	if err != nil {
		return err
	}
	tmp := tt.dir
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
		tt.done()
	}()
	w := newWriter(tmp)
	if base != nil {
		w.recycler, _ = base.(Recycler)
		err = base.Walk(func(p string, f *File) error {
			if _, changed := changes[p]; changed {
				return nil
			}
			return w.writeBase(p, f)
		})
	}
	if err == nil {
		keys := make([]string, 0, len(changes))
		for k := range changes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if f := changes[k]; f != nil {
				if err = w.write(k, f); err != nil {
					break
				}
			}
		}
	}
	if werr := w.wait(); err == nil {
		err = werr
	}
	if err != nil {
		return fmt.Errorf("writing tree: %w", err)
	}
	if beforeMove != nil {
		if err = beforeMove(tmp); err != nil {
			return err
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

// writer writes files under root with a few workers.
type writer struct {
	root string
	jobs chan writeJob
	wg   sync.WaitGroup
	dirs sync.Map
	mu   sync.Mutex
	err  error
	// recycler takes back the base's files once written.
	recycler Recycler
}

type writeJob struct {
	p    string
	f    *File
	base bool // from the base walk: recycled once written
}

func newWriter(root string) *writer {
	w := &writer{root: root, jobs: make(chan writeJob, 256)}
	n := 2 * runtime.NumCPU()
	if n > 8 {
		n = 8
	}
	for i := 0; i < n; i++ {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			for j := range w.jobs {
				if w.failed() {
					continue
				}
				if err := w.writeFile(j.p, j.f); err != nil {
					w.mu.Lock()
					if w.err == nil {
						w.err = fmt.Errorf("writing %s: %w", j.p, err)
					}
					w.mu.Unlock()
				} else if j.base && w.recycler != nil {
					w.recycler.Recycle(j.f)
				}
			}
		}()
	}
	return w
}

func (w *writer) failed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err != nil
}

// write checks p and queues it.
func (w *writer) write(p string, f *File) error { return w.queue(writeJob{p: p, f: f}) }

// writeBase is write for a file of the base walk.
func (w *writer) writeBase(p string, f *File) error { return w.queue(writeJob{p: p, f: f, base: true}) }

func (w *writer) queue(j writeJob) error {
	if err := Clean(j.p); err != nil {
		return err
	}
	if w.failed() {
		return w.wait()
	}
	w.jobs <- j
	return nil
}

// wait drains the queue and returns the first error.
func (w *writer) wait() error {
	if w.jobs != nil {
		close(w.jobs)
		w.wg.Wait()
		w.jobs = nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *writer) writeFile(p string, f *File) error {
	full := w.root + "/" + p
	if d := path.Dir(p); d != "." {
		if _, done := w.dirs.Load(d); !done {
			if err := os.MkdirAll(w.root+"/"+d, 0o755); err != nil {
				return err
			}
			w.dirs.Store(d, true)
		}
	}
	switch f.Mode {
	case Symlink:
		return os.Symlink(string(f.Data), full)
	case Gitlink:
		return os.MkdirAll(full, 0o755)
	case Executable:
		return writeFile(full, f.Data, 0o755)
	default:
		return writeFile(full, f.Data, 0o644)
	}
}

// writeFile creates a new file (it must not exist: the tree is new) and
// sets exactly perm, whatever the umask. It uses raw system calls: an
// *os.File costs several more (fcntl, poller registration) per file, which
// dominates when a tree has thousands of small files.
func writeFile(name string, data []byte, perm os.FileMode) error {
	fd, err := syscall.Open(name, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, uint32(perm))
	if err != nil {
		return &os.PathError{Op: "open", Path: name, Err: err}
	}
	for len(data) > 0 {
		n, err := syscall.Write(fd, data)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			syscall.Close(fd)
			return &os.PathError{Op: "write", Path: name, Err: err}
		}
		data = data[n:]
	}
	if perm&0o111 != 0 {
		if err := syscall.Fchmod(fd, uint32(perm)); err != nil {
			syscall.Close(fd)
			return &os.PathError{Op: "chmod", Path: name, Err: err}
		}
	}
	if err := syscall.Close(fd); err != nil {
		return &os.PathError{Op: "close", Path: name, Err: err}
	}
	return nil
}

// ReadAll reads paths from src: the files that are there, by path (a path
// with no file is left out).
func ReadAll(src Source, paths []string) (map[string]*File, error) {
	out := make(map[string]*File, len(paths))
	for _, p := range paths {
		f, ok, err := src.Read(p)
		if err != nil {
			return nil, err
		}
		if ok {
			out[p] = f
		}
	}
	return out, nil
}
