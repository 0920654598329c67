// Package refresh renders a patch series in canonical form at a tree (the
// text `patchkit refresh` writes and verify's canonical check compares): each
// patch applied in order, and its diff written again from the states before
// and after it (series.Canonical), at the line numbers of the state it
// applies to. upgrade carries a series to a new ref with the same rendering.
package refresh

import (
	"bytes"
	"context"
	"fmt"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/gomod"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/tree"
)

// Rendered is one patch of a series in canonical form.
type Rendered struct {
	Patch *series.Patch
	// Text is the canonical text (series.Canonical); a reference file keeps
	// its bytes.
	Text []byte
	// Changed says Text differs from the file's bytes.
	Changed bool
	// Read is the file's bytes as they were loaded.
	Read []byte
}

// NotApplyingError says a patch of the series does not apply where it was
// rendered; its Result tells why.
type NotApplyingError struct {
	Patch  *series.Patch
	Result apply.PatchResult
}

func (e *NotApplyingError) Error() string {
	msg := "does not apply"
	if len(e.Result.Errors) > 0 {
		msg = e.Result.Errors[0].Message
	}
	return fmt.Sprintf("%s: %s", e.Patch.Path, msg)
}

// Canonical applies patches in order on src and returns each in canonical
// form, its hunks at the line numbers of the state it applies to (src and the
// patches before it). A patch that does not apply is a *NotApplyingError.
// opts are the unit's tool's (apply.ForTool): under git am's whitespace
// rule a patch with whitespace errors applies, and is rendered.
func Canonical(src tree.Source, patches []*series.Patch, opts ...apply.Option) ([]Rendered, error) {
	return canonical(src, patches, nil, opts)
}

// CanonicalBumps is Canonical, but a bump patch (gomod.SplitPatch) that does
// not apply on src (and the patches before it) is re-expressed there
// (gomod.Go.Reexpress) rather than refused: the modules src already covers
// are left out. A bump with nothing left to raise is still a
// *NotApplyingError: drop it (obsolete-check says so).
func CanonicalBumps(ctx context.Context, g gomod.Go, src gomod.WalkSource, patches []*series.Patch, opts ...apply.Option) ([]Rendered, error) {
	return canonical(src, patches, func(st *apply.Applier, p *series.Patch) ([]byte, error) {
		s := gomod.SplitPatch(p)
		if s == nil {
			return nil, nil
		}
		if err := s.Orient(st); err != nil {
			return nil, err
		}
		r, err := g.Reexpress(ctx, src, st, p, s)
		if err != nil || r == nil {
			return nil, err
		}
		return r.Text, nil
	}, opts)
}

// canonical is Canonical; reexpress, when set, gives the text of a patch
// that does not apply (a bump), or nil.
func canonical(src tree.Source, patches []*series.Patch, reexpress func(*apply.Applier, *series.Patch) ([]byte, error), opts []apply.Option) ([]Rendered, error) {
	st := apply.New(src, opts...)
	out := make([]Rendered, 0, len(patches))
	for _, p := range patches {
		text, res, err := Render(st, p)
		if err != nil {
			return nil, err
		}
		if res.Status != apply.StatusApplied && reexpress != nil {
			if text, err = reexpress(st, p); err != nil {
				return nil, err
			}
			if text != nil {
				out = append(out, Rendered{Patch: p, Text: text, Changed: !bytes.Equal(text, p.FileBytes())})
				continue
			}
		}
		if res.Status != apply.StatusApplied {
			return nil, &NotApplyingError{Patch: p, Result: res}
		}
		out = append(out, Rendered{Patch: p, Text: text, Changed: !bytes.Equal(text, p.FileBytes()), Read: p.FileBytes()})
	}
	return out, nil
}

// Render applies p on st and renders it from the states before and after; a
// reference file keeps its bytes. When p does not apply, st is unchanged and
// text is nil.
func Render(st *apply.Applier, p *series.Patch) (text []byte, res apply.PatchResult, err error) {
	paths := Touched(p)
	before, err := tree.ReadAll(st, paths)
	if err != nil {
		return nil, apply.PatchResult{}, err
	}
	res = st.Apply(p)
	if res.Err != nil {
		return nil, res, res.Err
	}
	if res.Status != apply.StatusApplied {
		return nil, res, nil
	}
	if p.Reference != nil {
		return p.FileBytes(), res, nil
	}
	after, err := tree.ReadAll(st, paths)
	if err != nil {
		return nil, res, err
	}
	text = series.Canonical(p, changes(p, before, after))
	if series.SameButFuncContext(text, p.FileBytes()) {
		// Only the function names after "@@" differ: the patch keeps its
		// own, which reviewers read.
		return p.FileBytes(), res, nil
	}
	return text, res, nil
}

// Touched lists the paths p's rendered file diffs change (all but the
// verbatim ones: binary, rename, copy), in patch order, each once.
func Touched(p *series.Patch) []string { return p.Paths(series.NeedsVerbatim) }

// changes lists p's file changes in patch order: verbatim file diffs as
// written, the others from the states before and after.
func changes(p *series.Patch, before, after map[string]*tree.File) []series.FileChange {
	var out []series.FileChange
	seen := map[string]bool{}
	for _, f := range p.Files {
		if series.NeedsVerbatim(f) {
			out = append(out, series.FileChange{Verbatim: p.FileText(f)})
			continue
		}
		name := series.ChangedPath(f)
		if seen[name] {
			continue
		}
		seen[name] = true
		out = append(out, series.FileChange{Path: name, Old: before[name], New: after[name]})
	}
	return out
}
