package upgrade

import (
	"context"
	"path"
	"strings"

	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/txn"
)

// WriteSet turns the plan into one transaction (see internal/txn): every
// Write with the content it replaces (Prior, or the file as it is now when
// Prior is nil), and every file the plan was computed from (the spec, the
// pin's file, each patch of the series and the series' directory listing)
// as a dependency, so that an edit made while the command ran refuses the
// whole set. Call it right after Plan, before the gate: edits made after it
// are detected at Commit.
func (r *Result) WriteSet(root string, s *spec.Spec, patches []*series.Patch) (*txn.Set, error) {
	set := txn.New(root)
	written := map[string]bool{}
	for _, w := range r.Writes {
		written[w.Path] = true
	}
	if err := r.add(set, root, true); err != nil {
		return nil, err
	}
	if err := Depends(set, root, s, patches, written); err != nil {
		return nil, err
	}
	return set, nil
}

// Depends adds to set, as files read and not written (those in skip are
// written), what a series was computed from: the spec, the file the pin is
// read from, each patch as it was loaded, and the patch directory's list
// of patch files.
func Depends(set *txn.Set, root string, s *spec.Spec, patches []*series.Patch, skip map[string]bool) error {
	files := []string{s.File}
	if s.Upstream.RefFrom != nil && s.Upstream.RefFrom.File != "" {
		files = append(files, s.Upstream.RefFrom.File)
	}
	for _, f := range files {
		if skip[f] {
			continue
		}
		skip[f] = true
		data, _, err := txn.Snapshot(root, f)
		if err != nil {
			return err
		}
		set.Expect(f, data)
	}
	var names []string
	for _, p := range patches {
		names = append(names, p.Name)
		if !skip[p.Path] {
			set.Expect(p.Path, p.FileBytes())
		}
	}
	set.ExpectDir(s.Patches, names, isPatchName)
	return nil
}

// Apply writes the plan's files under root as one transaction, with no
// dependency but the files written (see WriteSet for the command's).
func (r *Result) Apply(root string) error {
	set := txn.New(root)
	if err := r.add(set, root, false); err != nil {
		return err
	}
	_, err := set.Commit(context.Background(), txn.Options{})
	return err
}

// add adds the plan's writes to set, each with the content it replaces: its
// Prior when usePrior and it has one, else the file as it is now.
func (r *Result) add(set *txn.Set, root string, usePrior bool) error {
	for _, w := range r.Writes {
		prior, absent := w.Prior, false
		if prior == nil || !usePrior {
			var err error
			if prior, absent, err = txn.Snapshot(root, w.Path); err != nil {
				return err
			}
		}
		switch {
		case w.Delete:
			set.Delete(w.Path, prior)
		case absent:
			set.Create(w.Path, w.Data)
		default:
			set.Write(w.Path, w.Data, prior)
		}
	}
	return nil
}

// isPatchName is the series.Load rule: *.diff and *.patch, not hidden.
func isPatchName(name string) bool {
	return !strings.HasPrefix(name, ".") && (path.Ext(name) == ".diff" || path.Ext(name) == ".patch")
}
