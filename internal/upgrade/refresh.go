package upgrade

import (
	"bytes"
	"fmt"

	"github.com/patchkit/patchkit/internal/apply"
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
func Canonical(src tree.Source, patches []*series.Patch) ([]Rendered, error) {
	return canonical(src, patches, nil)
}

// canonical is Canonical; reexpress, when set, gives the text of a patch
// that does not apply (a bump, bump.go), or nil.
func canonical(src tree.Source, patches []*series.Patch, reexpress func(*apply.Applier, *series.Patch) ([]byte, error)) ([]Rendered, error) {
	st := apply.New(src)
	out := make([]Rendered, 0, len(patches))
	for _, p := range patches {
		text, res, err := applyAndRender(st, p)
		if err != nil {
			return nil, err
		}
		if res.Status != apply.StatusApplied && reexpress != nil {
			if text, err = reexpress(st, p); err != nil {
				return nil, err
			}
			if text != nil {
				out = append(out, Rendered{Patch: p, Text: text, Changed: !bytes.Equal(text, fileBytes(p))})
				continue
			}
		}
		if res.Status != apply.StatusApplied {
			return nil, &NotApplyingError{Patch: p, Result: res}
		}
		out = append(out, Rendered{Patch: p, Text: text, Changed: !bytes.Equal(text, fileBytes(p)), Read: fileBytes(p)})
	}
	return out, nil
}

// fileBytes is what is on disk for p: a materialized reference is longer.
func fileBytes(p *series.Patch) []byte {
	if p.Reference != nil && p.Reference.FileSize > 0 {
		return p.Raw[:p.Reference.FileSize]
	}
	return p.Raw
}

// applyAndRender applies p on st and renders it from the states before and
// after. When p does not apply, st is unchanged and text is nil.
func applyAndRender(st *apply.Applier, p *series.Patch) ([]byte, apply.PatchResult, error) {
	paths := touched(p)
	before, err := tree.ReadAll(st, paths)
	if err != nil {
		return nil, apply.PatchResult{}, err
	}
	res := st.Apply(p)
	if res.Err != nil {
		return nil, res, res.Err
	}
	if res.Status != apply.StatusApplied {
		return nil, res, nil
	}
	if p.Reference != nil {
		return fileBytes(p), res, nil
	}
	after, err := tree.ReadAll(st, paths)
	if err != nil {
		return nil, res, err
	}
	return series.Canonical(p, changes(p, before, after)), res, nil
}

// touched lists the paths p's rendered file diffs change, in patch order,
// each once.
func touched(p *series.Patch) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range p.Files {
		if series.NeedsVerbatim(f) {
			continue
		}
		name := f.NewName
		if f.IsDelete {
			name = f.OldName
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

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
		name := f.NewName
		if f.IsDelete {
			name = f.OldName
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		out = append(out, series.FileChange{Path: name, Old: before[name], New: after[name]})
	}
	return out
}
