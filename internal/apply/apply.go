package apply

import (
	"fmt"
	"strings"

	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/tree"
)

// Option configures an Applier.
type Option func(*options)

type options struct {
	reverse bool
	noWS    bool
	// wsWarn reports whitespace errors as warnings (PatchResult.Warnings),
	// as git's default --whitespace=warn does, instead of failing the patch.
	wsWarn bool
	// fuzz is GNU patch's fuzz factor: a hunk whose context does not match
	// applies with up to fuzz leading and trailing context lines ignored.
	fuzz int
	// loose matches as GNU patch -l does: runs of blanks are equal.
	loose bool
	// maxBinary limits the size of one binary fragment (0: go-gitdiff's default).
	maxBinary int64
}

// WithReverse applies patches in reverse, as `git apply -R` does: added lines
// are removed, removed lines are added, created files are deleted, and the
// file diffs of one patch are taken in reverse order.
func WithReverse() Option { return func(o *options) { o.reverse = true } }

// WithoutWhitespaceCheck turns whitespace checks off, as
// `git apply --whitespace=nowarn` does: lines with trailing whitespace, a space
// before a tab in the indent or new blank lines at the end of a file are then
// not problems.
func WithoutWhitespaceCheck() Option { return func(o *options) { o.noWS = true } }

// WithWhitespace sets the whitespace rule, as `git apply --whitespace=`
// does: "error" (the default) fails a patch with whitespace errors, "warn"
// reports them in PatchResult.Warnings and applies it, "nowarn" checks
// nothing (WithoutWhitespaceCheck).
func WithWhitespace(rule string) Option {
	return func(o *options) {
		o.noWS, o.wsWarn = rule == "nowarn", rule == "warn"
	}
}

// WithFuzz applies a hunk whose context does not match exactly with GNU
// patch's fuzz: ignoring up to n of its leading and of its trailing context
// lines, as `patch -F n` does. 0, the default, is git apply's exact context.
func WithFuzz(n int) Option { return func(o *options) { o.fuzz = n } }

// WithLooseWhitespace matches a hunk's lines as GNU `patch -l` does: runs
// of spaces and tabs compare equal, when the exact match fails.
func WithLooseWhitespace() Option { return func(o *options) { o.loose = true } }

// ForTool are the options of the tool a unit's recipe applies its series
// with (spec.Apply): its whitespace rule (error, warn or nowarn; "" is
// error) and GNU patch's fuzz factor (0 for git's tools). Every command that
// applies a unit's series as its build does passes them.
func ForTool(whitespace string, fuzz int, loose bool) []Option {
	if whitespace == "" {
		whitespace = "error"
	}
	opts := []Option{WithWhitespace(whitespace)}
	if fuzz > 0 {
		opts = append(opts, WithFuzz(fuzz))
	}
	if loose {
		opts = append(opts, WithLooseWhitespace())
	}
	return opts
}

// withMaxBinaryBytes limits the size of one binary fragment; a test seam for
// the fuzz target.
func withMaxBinaryBytes(n int64) Option { return func(o *options) { o.maxBinary = n } }

// Applier applies patches one by one to an in-memory view of a tree. Its
// state is its source with every successfully applied patch laid over it; it
// never writes anywhere, and reads from its source only the files that
// patches touch. An Applier is not safe for concurrent use.
type Applier struct {
	src  tree.Source
	opts options
	// changes is the overlay: path to file, nil for a deleted path.
	changes map[string]*tree.File
}

var _ tree.Source = (*Applier)(nil)

// New returns an Applier over src. Its state is src with every successfully
// applied patch laid over it. A nil src is an empty tree.
func New(src tree.Source, opts ...Option) *Applier {
	a := &Applier{src: src, changes: map[string]*tree.File{}}
	if a.src == nil {
		a.src = tree.Map{}
	}
	for _, o := range opts {
		o(&a.opts)
	}
	return a
}

// Read implements tree.Source over the current state. The returned file is
// shared with the Applier and must not be modified.
func (a *Applier) Read(p string) (*tree.File, bool, error) {
	if f, ok := a.changes[p]; ok {
		return f, f != nil, nil
	}
	f, ok, err := a.src.Read(p)
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", p, err)
	}
	return f, ok && f != nil, nil
}

// IsDir implements tree.Source over the current state: p is a directory when
// some file of the current state lies under it.
func (a *Applier) IsDir(p string) (bool, error) {
	return isDirIn(a.src, a.changes, nil, p)
}

// Changes returns the overlay that the applied patches made: path to new file,
// nil for a deleted path. The map is a copy; its files are shared.
func (a *Applier) Changes() map[string]*tree.File {
	out := make(map[string]*tree.File, len(a.changes))
	for k, v := range a.changes {
		out[k] = v
	}
	return out
}

// Apply applies one patch to the current state, atomically: on any problem
// nothing of this patch is kept, and the result lists every problem found.
// A patch with whitespace errors fails, as with `git apply --whitespace=error`,
// unless WithoutWhitespaceCheck or WithWhitespace("warn") was given.
func (a *Applier) Apply(p *series.Patch) PatchResult {
	res := PatchResult{Status: StatusApplied, Errors: []Problem{}}
	if p == nil {
		res.Status = StatusFailed
		res.Errors = append(res.Errors, Problem{Kind: KindCorrupt, Message: "no patch"})
		return res
	}
	res.Name = p.Path
	if res.Name == "" {
		res.Name = p.Name
	}
	st := newStage(a, p, &res)
	st.run()
	if len(res.Errors) > 0 {
		res.Status = StatusFailed
		return res
	}
	st.commit()
	return res
}

// Series applies patches in order with New(src, opts...) and returns the
// Result, OK only if every patch applied. A failed patch is reported and
// skipped; later patches still run on the state without it.
func Series(src tree.Source, patches []*series.Patch, opts ...Option) *Result {
	a := New(src, opts...)
	res := &Result{OK: true, Patches: make([]PatchResult, 0, len(patches))}
	for _, p := range patches {
		pr := a.Apply(p)
		if pr.Status != StatusApplied {
			res.OK = false
		}
		if pr.Err != nil && res.Err == nil {
			res.Err = pr.Err
		}
		res.Patches = append(res.Patches, pr)
	}
	res.Changes = a.Changes()
	return res
}

// isDirIn reports whether p is a directory of src with the overlays base and
// top laid over it (top wins): some file that the view holds lies under p.
func isDirIn(src tree.Source, base, top map[string]*tree.File, p string) (bool, error) {
	prefix := p + "/"
	deleted := false
	for k, f := range top {
		if strings.HasPrefix(k, prefix) {
			if f != nil {
				return true, nil
			}
			deleted = true
		}
	}
	for k, f := range base {
		if strings.HasPrefix(k, prefix) && !hasKey(top, k) {
			if f != nil {
				return true, nil
			}
			deleted = true
		}
	}
	ok, err := src.IsDir(p)
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", p, err)
	}
	if !ok || !deleted {
		return ok, nil
	}
	// Some files under p were deleted: p is still a directory if the source
	// has one that was not. Only a Walker can tell; without one, assume so.
	w, isWalker := src.(tree.Walker)
	if !isWalker {
		return true, nil
	}
	found := false
	err = w.Walk(func(k string, _ *tree.File) error {
		if found || !strings.HasPrefix(k, prefix) || hasKey(top, k) || hasKey(base, k) {
			return nil
		}
		found = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("listing %s: %w", p, err)
	}
	return found, nil
}

func hasKey(m map[string]*tree.File, k string) bool {
	_, ok := m[k]
	return ok
}
