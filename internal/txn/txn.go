package txn

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/patchkit/patchkit/internal/diag"
)

// ErrChanged is a file that changed between the command's read and its
// write: the command writes nothing, and running it again reads the new
// content.
var ErrChanged = errors.New("the file changed since it was read; run again")

// Action is what a write set does to one file.
type Action string

// The actions.
const (
	ActionWrite  Action = "write"
	ActionCreate Action = "create"
	ActionDelete Action = "delete"
)

// Done is one file a write set changed (or, in a failed run, would have).
type Done struct {
	// Path is the file as the command named it, slash-separated, relative
	// to the root.
	Path   string `json:"path"`
	Action Action `json:"action"`
	// Target is where a symbolic link led the write, relative to the root;
	// "" when Path is not a link.
	Target string `json:"target,omitempty"`
}

type op struct {
	rel    string
	action Action // "" for a file only read
	data   []byte
	prior  []byte // what the command read; nil with absent
	absent bool   // the command found no file there
}

type dirExpect struct {
	rel   string
	names []string
	match func(string) bool
}

// Set is the files a command writes, deletes or depends on, applied at
// once by Commit. Adding a file is one call.
type Set struct {
	root string
	ops  []*op
	dirs []dirExpect
}

// New returns an empty write set for the repository at root.
func New(root string) *Set { return &Set{root: root} }

// Write replaces rel's content with data; read is the content the command
// read from it (the write is refused if the file no longer holds it).
func (s *Set) Write(rel string, data, read []byte) {
	s.ops = append(s.ops, &op{rel: rel, action: ActionWrite, data: data, prior: nonNil(read)})
}

// Create writes data to rel, which must not exist.
func (s *Set) Create(rel string, data []byte) {
	s.ops = append(s.ops, &op{rel: rel, action: ActionCreate, data: data, absent: true})
}

// Delete removes rel, which must still hold read.
func (s *Set) Delete(rel string, read []byte) {
	s.ops = append(s.ops, &op{rel: rel, action: ActionDelete, prior: nonNil(read)})
}

// Expect records a file the command read and does not write: the set is
// refused if it changed.
func (s *Set) Expect(rel string, read []byte) {
	s.ops = append(s.ops, &op{rel: rel, prior: nonNil(read)})
}

// ExpectDir records the names in directory rel that match: the set is
// refused if a matching file was added or removed since.
func (s *Set) ExpectDir(rel string, names []string, match func(string) bool) {
	s.dirs = append(s.dirs, dirExpect{rel: rel, names: slices.Sorted(slices.Values(names)), match: match})
}

// Snapshot reads rel now, for a command that did not keep what it read:
// the file's content, or absent.
func Snapshot(root, rel string) (data []byte, absent bool, err error) {
	data, err = os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true, nil
	}
	return data, false, err
}

// Plan lists what Commit will do, in order, without writing.
func (s *Set) Plan() []Done {
	var out []Done
	for _, o := range s.ops {
		if o.action != "" {
			out = append(out, Done{Path: o.rel, Action: o.action})
		}
	}
	return out
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Options of Commit.
type Options struct {
	// Waiting is called once when another process holds the lock, with
	// the holder ("pid 1234 (patchkit refresh coredns)", "" when unknown).
	Waiting func(holder string)
	// LockTimeout is how long to wait for the lock (--lock-timeout); 0 is
	// DefaultLockTimeout.
	LockTimeout time.Duration
}

// journal is the record of a write set on disk: written before any target
// is touched ("prepare": the temporary files are being written; recovery
// removes them) and rewritten once every new content is durable
// ("commit": recovery completes the renames and deletions).
type journal struct {
	Version int         `json:"version"`
	State   string      `json:"state"`
	Ops     []journalOp `json:"ops"`
}

type journalOp struct {
	Path   string `json:"path"` // the real file, relative to the root
	Tmp    string `json:"tmp,omitempty"`
	Delete bool   `json:"delete,omitempty"`
	Old    string `json:"old"` // sha256 of the content replaced, "" when absent
	New    string `json:"new,omitempty"`
}

const (
	statePrepare = "prepare"
	stateCommit  = "commit"
)

// WriteError is a set that failed after its commit point: Written were
// written, and the journal completes the rest on the next run.
type WriteError struct {
	Written []Done
	Journal string
	Err     error
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("the write stopped after %d file(s): %v; the journal %s completes it on the next patchkit run", len(e.Written), e.Err, e.Journal)
}

func (e *WriteError) Unwrap() error { return e.Err }

// resolved is an op with its real path.
type resolved struct {
	*op
	real, relReal string
	tmp           string
}

// Commit applies the set: under the repository lock it completes any
// journal a killed run left, checks that every file still holds what the
// command read (else ErrChanged, naming the file, and nothing is written),
// writes each new content to a temporary file beside its target (owner and
// mode kept, synced), records the journal, then renames and deletes. A
// failure before the journal's commit point leaves every file as it was.
func (s *Set) Commit(ctx context.Context, o Options) ([]Done, error) {
	lk, err := Acquire(ctx, s.root, o.Waiting, o.LockTimeout)
	if err != nil {
		return nil, err
	}
	defer lk.Release()
	return s.CommitLocked(ctx, lk)
}

// CommitLocked is Commit for a caller that already holds lk, the
// repository lock (taken with Acquire before it read the files, as stamp
// does to re-read them under the lock). It does not release lk.
func (s *Set) CommitLocked(ctx context.Context, lk *Lock) ([]Done, error) {
	if lk == nil || lk.f == nil {
		return nil, errors.New("txn: CommitLocked without the repository lock")
	}
	if _, err := recoverLocked(s.root); err != nil {
		return nil, err
	}
	realRoot, err := filepath.EvalSymlinks(s.root)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	var rs []*resolved
	seen := map[string]string{}
	for _, o := range s.ops {
		r, err := s.check(realRoot, o)
		if err != nil {
			return nil, err
		}
		if o.action == "" {
			continue
		}
		if other, ok := seen[r.real]; ok {
			return nil, diag.Inputf(o.rel, 0, "is the same file as %s (a link): patchkit writes each file once", other)
		}
		seen[r.real] = o.rel
		rs = append(rs, r)
	}
	for _, d := range s.dirs {
		if err := checkDir(s.root, d); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("cancelled before writing: %w", err)
	}
	if len(rs) == 0 {
		return nil, nil
	}
	for _, r := range rs {
		RemoveStaleTemps(filepath.Dir(r.real), started)
	}
	id := randomID()
	j := journal{Version: 1, State: statePrepare}
	for _, r := range rs {
		jo := journalOp{Path: r.relReal, Delete: r.action == ActionDelete}
		if !r.absent {
			jo.Old = sum(r.prior)
		}
		if r.action != ActionDelete {
			r.tmp = filepath.Join(filepath.Dir(r.real), "."+filepath.Base(r.real)+".tmp-"+id)
			jo.Tmp = filepath.ToSlash(mustRel(realRoot, r.tmp))
			jo.New = sum(r.data)
		}
		j.Ops = append(j.Ops, jo)
	}
	jpath := JournalPath(s.root)
	if err := writeJournal(jpath, j); err != nil {
		return nil, err
	}
	rollback := func() {
		for _, r := range rs {
			if r.tmp != "" {
				os.Remove(r.tmp)
			}
		}
		os.Remove(jpath)
	}
	for _, r := range rs {
		if r.action == ActionDelete {
			continue
		}
		if err := writeTemp(r.tmp, r.real, r.data); err != nil {
			rollback()
			return nil, fmt.Errorf("writing %s: %w (nothing was written)", r.rel, err)
		}
	}
	if err := ctx.Err(); err != nil {
		rollback()
		return nil, fmt.Errorf("cancelled before writing: %w", err)
	}
	j.State = stateCommit
	if err := writeJournal(jpath, j); err != nil {
		rollback()
		return nil, fmt.Errorf("%w (nothing was written)", err)
	}
	// The commit point: from here on, the next run rolls forward.
	var done []Done
	for _, r := range rs {
		var err error
		if r.action == ActionDelete {
			err = os.Remove(r.real)
		} else {
			err = os.Rename(r.tmp, r.real)
		}
		if err != nil && !(r.action == ActionDelete && errors.Is(err, fs.ErrNotExist)) {
			return done, &WriteError{Written: done, Journal: jpath, Err: fmt.Errorf("%s %s: %w", r.action, r.rel, err)}
		}
		SyncDir(filepath.Dir(r.real))
		done = append(done, r.done(realRoot))
	}
	if err := os.Remove(jpath); err != nil {
		return done, &WriteError{Written: done, Journal: jpath, Err: err}
	}
	SyncDir(filepath.Dir(jpath))
	return done, nil
}

func (r *resolved) done(realRoot string) Done {
	d := Done{Path: r.rel, Action: r.action}
	if r.relReal != r.rel {
		d.Target = r.relReal
	}
	return d
}

// check resolves o and compares the file with what the command read.
func (s *Set) check(realRoot string, o *op) (*resolved, error) {
	real, err := Resolve(s.root, o.rel)
	if err != nil {
		return nil, err
	}
	if o.action == ActionDelete {
		// A link is removed, not the file it leads to (which others may share).
		dir, err := Resolve(s.root, path.Dir(o.rel))
		if err != nil {
			return nil, err
		}
		real = filepath.Join(dir, path.Base(o.rel))
	}
	r := &resolved{op: o, real: real, relReal: filepath.ToSlash(mustRel(realRoot, real))}
	st, err := os.Stat(real)
	if errors.Is(err, fs.ErrNotExist) {
		if !o.absent {
			return nil, fmt.Errorf("%s: %w (it was removed)", o.rel, ErrChanged)
		}
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	if o.absent {
		return nil, fmt.Errorf("%s: %w (it was created)", o.rel, ErrChanged)
	}
	if o.action == ActionWrite {
		if err := CheckReplaceable(o.rel, st); err != nil {
			return nil, err
		}
	}
	cur, err := os.ReadFile(real)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(cur, o.prior) {
		return nil, fmt.Errorf("%s: %w", o.rel, ErrChanged)
	}
	return r, nil
}

func checkDir(root string, d dirExpect) error {
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(d.rel)))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var now []string
	for _, e := range entries {
		if d.match == nil || d.match(e.Name()) {
			now = append(now, e.Name())
		}
	}
	if !slices.Equal(now, d.names) {
		return fmt.Errorf("%s: %w (files were added or removed)", d.rel, ErrChanged)
	}
	return nil
}

func mustRel(base, p string) string {
	r, err := filepath.Rel(base, p)
	if err != nil {
		return p
	}
	return r
}

func randomID() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// writeTemp writes data to tmp (a new file) with target's owner and mode,
// synced.
func writeTemp(tmp, target string, data []byte) (err error) {
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = Adopt(f, target); err != nil {
		return err
	}
	return f.Sync()
}

func writeJournal(path string, j journal) error {
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing the journal: %w", err)
	}
	f, err := os.Open(tmp)
	if err == nil {
		err = f.Sync()
		f.Close()
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing the journal: %w", err)
	}
	SyncDir(filepath.Dir(path))
	return nil
}

// Recovered is what Recover did with a journal a killed run left.
type Recovered struct {
	// Forward is true when the write was completed, false when it was
	// undone (it had not reached its commit point).
	Forward bool
	Files   []string
	Journal string
}

// Recover completes or undoes the write set a killed run left in root's
// journal, under the repository lock. It returns nil when there was none.
// A file changed since the killed run (neither its old nor its new
// content) is left alone, and the journal kept: an error names it.
func Recover(ctx context.Context, root string) (*Recovered, error) {
	if _, err := os.Lstat(JournalPath(root)); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	lk, err := Acquire(ctx, root, nil, 0)
	if err != nil {
		return nil, err
	}
	defer lk.Release()
	return recoverLocked(root)
}

// RecoverLocked is Recover for a caller that holds root's lock.
func RecoverLocked(root string) (*Recovered, error) { return recoverLocked(root) }

func recoverLocked(root string) (*Recovered, error) {
	jpath := JournalPath(root)
	os.Remove(jpath + ".tmp")
	b, err := os.ReadFile(jpath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var j journal
	if err := json.Unmarshal(b, &j); err != nil || j.Version != 1 || (j.State != statePrepare && j.State != stateCommit) {
		return nil, &diag.InputError{File: jpath, Msg: "not a patchkit journal this version reads; look at it, then remove it"}
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	abs := func(rel string) (string, error) {
		p := filepath.Join(realRoot, filepath.FromSlash(rel))
		if r, err := filepath.Rel(realRoot, p); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "", &diag.InputError{File: jpath, Msg: fmt.Sprintf("names %s, outside the repository", rel)}
		}
		return p, nil
	}
	rec := &Recovered{Forward: j.State == stateCommit, Journal: jpath}
	for _, o := range j.Ops {
		rec.Files = append(rec.Files, o.Path)
		if o.Tmp == "" {
			continue
		}
		if _, err := abs(o.Tmp); err != nil {
			return nil, err
		}
	}
	if j.State == statePrepare {
		for _, o := range j.Ops {
			if o.Tmp != "" {
				p, _ := abs(o.Tmp)
				os.Remove(p)
			}
		}
		if err := os.Remove(jpath); err != nil {
			return nil, err
		}
		return rec, nil
	}
	for _, o := range j.Ops {
		target, err := abs(o.Path)
		if err != nil {
			return nil, err
		}
		cur, rerr := os.ReadFile(target)
		curSum := ""
		if rerr == nil {
			curSum = sum(cur)
		} else if !errors.Is(rerr, fs.ErrNotExist) {
			return nil, rerr
		}
		if o.Delete {
			switch curSum {
			case "":
			case o.Old:
				if err := os.Remove(target); err != nil {
					return nil, err
				}
				SyncDir(filepath.Dir(target))
			default:
				return nil, fmt.Errorf("completing the interrupted write (journal %s): %s changed since; it was to be deleted: look at it, then remove the journal", jpath, o.Path)
			}
			continue
		}
		tmp, _ := abs(o.Tmp)
		if curSum == o.New {
			os.Remove(tmp)
			continue
		}
		if curSum != o.Old {
			return nil, fmt.Errorf("completing the interrupted write (journal %s): %s changed since; its new content is in %s: look at both, then remove the journal", jpath, o.Path, o.Tmp)
		}
		data, err := os.ReadFile(tmp)
		if err != nil || sum(data) != o.New {
			return nil, fmt.Errorf("completing the interrupted write (journal %s): the new content of %s (%s) is missing or damaged", jpath, o.Path, o.Tmp)
		}
		if err := os.Rename(tmp, target); err != nil {
			return nil, err
		}
		SyncDir(filepath.Dir(target))
	}
	if err := os.Remove(jpath); err != nil {
		return nil, err
	}
	SyncDir(filepath.Dir(jpath))
	return rec, nil
}

// tmpMarker is in the name of every temporary file patchkit writes beside
// a repository file: ".NAME.tmp-*".
const tmpMarker = ".tmp-"

// RemoveStaleTemps removes from dir the temporary files (".NAME.tmp-*",
// regular files) that killed writers left: those older than before. The
// caller holds the repository lock, under which every writer creates and
// renames its temporary files.
func RemoveStaleTemps(dir string, before time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, ".") || !strings.Contains(n, tmpMarker) || !e.Type().IsRegular() {
			continue
		}
		if info, err := e.Info(); err == nil && info.ModTime().Before(before) {
			os.Remove(filepath.Join(dir, n))
		}
	}
}

// Explain says what a failed Commit left: after its commit point the
// files written and the journal (the error already says it), else that
// nothing was written.
func Explain(err error) error {
	var we *WriteError
	if errors.As(err, &we) {
		var names []string
		for _, d := range we.Written {
			names = append(names, string(d.Action)+" "+d.Path)
		}
		if len(names) == 0 {
			names = []string{"none yet"}
		}
		return fmt.Errorf("written in part (%s): %w", strings.Join(names, ", "), err)
	}
	return fmt.Errorf("nothing was written: %w", err)
}
