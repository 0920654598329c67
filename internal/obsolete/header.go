package obsolete

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/txn"
)

// AppliedUpstreamKey is the header field that records the first upstream
// release carrying a patch.
const AppliedUpstreamKey = "Applied-Upstream"

// SetAppliedUpstream returns p's bytes with its Applied-Upstream header field
// set to tag, and whether that changed anything: series.SetField, which keeps
// every other byte and checks that the diff is unchanged.
func SetAppliedUpstream(p *series.Patch, tag string) ([]byte, bool, error) {
	if tag == "" || strings.ContainsAny(tag, "\r\n") {
		return nil, false, fmt.Errorf("%s: invalid Applied-Upstream value %q", p.Path, tag)
	}
	return series.SetField(p, AppliedUpstreamKey, tag)
}

// WriteAppliedUpstream sets the Applied-Upstream field of the patch file at
// file (p as it was loaded from it) to tag, atomically: the new content goes
// to a temporary file beside it, renamed over it. A symbolic link is followed
// and its target written. It refuses a file that changed since p was read.
// changed is false when the field already said tag.
func WriteAppliedUpstream(file string, p *series.Patch, tag string) (changed bool, err error) {
	out, changed, err := SetAppliedUpstream(p, tag)
	if err != nil || !changed {
		return false, err
	}
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		return false, fmt.Errorf("writing %s: %w", p.Path, err)
	}
	cur, err := os.ReadFile(real)
	if err != nil {
		return false, fmt.Errorf("writing %s: %w", p.Path, err)
	}
	// A materialized reference: the file holds only the header; the commit's
	// diff after it came from the upstream and is not written.
	onDisk := p.FileBytes()
	out = out[:len(out)-(len(p.Bytes())-len(onDisk))]
	if !bytes.Equal(cur, onDisk) {
		return false, fmt.Errorf("writing %s: the file changed since it was read; run again", p.Path)
	}
	st, err := os.Stat(real)
	if err != nil {
		return false, fmt.Errorf("writing %s: %w", p.Path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(real), "."+filepath.Base(real)+".tmp-*")
	if err != nil {
		return false, fmt.Errorf("writing %s: %w", p.Path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(out); err != nil {
		return false, fmt.Errorf("writing %s: %w", p.Path, err)
	}
	if err = tmp.Chmod(st.Mode().Perm()); err != nil {
		return false, fmt.Errorf("writing %s: %w", p.Path, err)
	}
	if err = tmp.Sync(); err != nil {
		return false, fmt.Errorf("writing %s: %w", p.Path, err)
	}
	if err = tmp.Close(); err != nil {
		return false, fmt.Errorf("writing %s: %w", p.Path, err)
	}
	if err = os.Rename(tmp.Name(), real); err != nil {
		return false, fmt.Errorf("writing %s: %w", p.Path, err)
	}
	return true, nil
}

// Written is one Applied-Upstream field that WriteHeaders set.
type Written struct {
	// File is the patch file, as series.Patch.Path names it.
	File string `json:"file"`
	// AppliedUpstream is the release written.
	AppliedUpstream string `json:"appliedUpstream"`
	// Previous is the field's value before, "" when there was none.
	Previous string `json:"previous,omitempty"`
}

// WriteError is a write of Applied-Upstream fields that failed part-way:
// Written are the fields already written when Err happened. Each file is
// replaced atomically, so a file is either in Written or untouched.
type WriteError struct {
	Written []Written
	Err     error
}

func (e *WriteError) Error() string {
	if len(e.Written) == 0 {
		return e.Err.Error() + "; no patch file was written"
	}
	var done []string
	for _, w := range e.Written {
		done = append(done, w.File+" (Applied-Upstream: "+w.AppliedUpstream+")")
	}
	return fmt.Sprintf("%v; already written: %s", e.Err, strings.Join(done, ", "))
}

func (e *WriteError) Unwrap() error { return e.Err }

// WriteHeaders records the removal note of every patch found present: for
// each patch whose status at its ObsoletedBy release is present, it sets the
// patch file's Applied-Upstream field to that release. root is the
// repository root that patch paths are relative to. Every file is written in
// one transaction (internal/txn): under the repository lock, a file that
// changed since it was read refuses the whole set, a symbolic link is written
// through to its target inside the repository (one outside is refused), and
// nothing is written when any file fails. It returns the fields it changed; a
// field that already says the release is left alone. A failure after the
// commit point is a *WriteError listing the fields written.
func WriteHeaders(ctx context.Context, root string, rep *Report, o txn.Options) ([]Written, error) {
	var out []Written
	set := txn.New(root)
	for i := range rep.Patches {
		p := &rep.Patches[i]
		r := p.Obsoleting()
		if r == nil || r.Status != StatusPresent || p.Patch == nil {
			continue
		}
		data, changed, err := SetAppliedUpstream(p.Patch, p.ObsoletedBy)
		if err != nil {
			return nil, err
		}
		if !changed {
			continue
		}
		// A materialized reference: the file holds only the header.
		onDisk := p.Patch.FileBytes()
		data = data[:len(data)-(len(p.Patch.Bytes())-len(onDisk))]
		set.Write(p.Patch.Path, data, onDisk)
		out = append(out, Written{File: p.File, AppliedUpstream: p.ObsoletedBy, Previous: p.Patch.Header.AppliedUpstream})
	}
	done, err := set.Commit(ctx, o)
	if err != nil {
		var we *txn.WriteError
		if errors.As(err, &we) {
			return out[:len(we.Written)], &WriteError{Written: out[:len(we.Written)], Err: err}
		}
		return nil, &WriteError{Err: err}
	}
	return out[:len(done)], nil
}
