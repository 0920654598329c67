package gomod

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/tree"
)

// WalkSource is a tree that can be read and listed: an upstream snapshot.
type WalkSource interface {
	tree.Source
	tree.Walker
}

// Raise is a bump re-expressed on a tree.
type Raise struct {
	// Text is the new patch text; nil when nothing is left to raise (and the
	// patch has no code part).
	Text []byte
	// Raised are the requirements still raised, and the holds still held
	// (Hold set); Covered those the tree already covers: it requires a
	// raised module at the patch's version or higher, a held one at the
	// held version or lower.
	Raised, Covered []Coverage
	// Code says the patch keeps code hunks (a mixed patch).
	Code bool
}

// Reexpress re-expresses bump patch p (split s, oriented with Split.Orient
// on the tree the patch applied to) on st (the tree src with the
// earlier patches applied), applying the result to st. A mixed patch's code
// part must apply on st; when it does not, Reexpress returns a nil Raise and
// leaves st unchanged.
func (g Go) Reexpress(ctx context.Context, src tree.Walker, st *apply.Applier, p *series.Patch, s *Split) (*Raise, error) {
	scratch := apply.New(st)
	if s.Code != nil {
		if r := scratch.Apply(s.Code); r.Err != nil {
			return nil, r.Err
		} else if r.Status != apply.StatusApplied {
			return nil, nil
		}
	}
	out := &Raise{Code: s.Code != nil}
	byFile := map[string][]Want{}
	var files []string
	for _, w := range s.Wants {
		f, ok, err := scratch.Read(w.File)
		if err != nil {
			return nil, err
		}
		var m *Mod
		if ok {
			if m, err = Parse(w.File, f.Data); err != nil {
				return nil, err
			}
		}
		c := m.Cover(w)
		if c.Covered {
			out.Covered = append(out.Covered, c)
			continue
		}
		if m == nil {
			return nil, fmt.Errorf("%s: %s is missing at the new ref: cannot raise %s", p.Path, w.File, w.Path)
		}
		out.Raised = append(out.Raised, c)
		if byFile[w.File] == nil {
			files = append(files, w.File)
		}
		byFile[w.File] = append(byFile[w.File], w)
	}
	sort.Strings(files)
	newFiles := map[string]*tree.File{}
	for _, file := range files {
		tmp, err := os.MkdirTemp("", "patchkit-gomod-*")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		overlay := st.Changes()
		for k, v := range scratch.Changes() {
			overlay[k] = v
		}
		if err := Materialize(tmp, src, overlay, ModDir(file)); err != nil {
			return nil, err
		}
		mod, sum, err := g.Raise(ctx, tmp, byFile[file])
		if err != nil {
			return nil, fmt.Errorf("%s: raising %s: %w", p.Path, file, err)
		}
		if f, ok, err := scratch.Read(file); err != nil {
			return nil, err
		} else if ok {
			if low, err := Lowered(file, f.Data, mod, byFile[file]...); err != nil {
				return nil, err
			} else if len(low) > 0 {
				return nil, fmt.Errorf("%s: raising %s would lower %s: refusing", p.Path, file, strings.Join(low, ", "))
			}
		}
		if err := keptHolds(p.Path, file, mod, byFile[file]); err != nil {
			return nil, err
		}
		newFiles[file] = &tree.File{Mode: tree.Regular, Data: mod}
		sumPath := strings.TrimSuffix(file, "go.mod") + "go.sum"
		if sum != nil {
			newFiles[sumPath] = &tree.File{Mode: tree.Regular, Data: sum}
		}
	}
	if len(newFiles) == 0 && s.Code == nil {
		return out, nil
	}
	// The patch: code paths as the code part changes them, then go.mod and
	// go.sum as the go command left them, in the patch's order.
	var paths []string
	seen := map[string]bool{}
	add := func(path string) {
		if !seen[path] {
			seen[path] = true
			paths = append(paths, path)
		}
	}
	if s.Code != nil {
		for _, path := range s.Code.Paths(nil) {
			add(path)
		}
	}
	for _, f := range p.Files {
		if newFiles[f.NewName] != nil {
			add(f.NewName)
		}
	}
	var extra []string
	for path := range newFiles {
		if !seen[path] {
			extra = append(extra, path)
		}
	}
	sort.Strings(extra)
	for _, path := range extra {
		add(path)
	}
	before, err := tree.ReadAll(st, paths)
	if err != nil {
		return nil, err
	}
	after, err := tree.ReadAll(scratch, paths)
	if err != nil {
		return nil, err
	}
	var changes []series.FileChange
	for _, path := range paths {
		nf := after[path]
		if f, ok := newFiles[path]; ok {
			if old := before[path]; old != nil {
				f.Mode = old.Mode
			}
			nf = f
		}
		changes = append(changes, series.FileChange{Path: path, Old: before[path], New: nf})
	}
	text := series.Canonical(p, changes)
	np, err := series.Parse(p.Path, text)
	if err != nil {
		// Nothing changes after all: the new ref has it.
		return &Raise{Covered: append(out.Covered, out.Raised...)}, nil
	}
	if r := st.Apply(np); r.Status != apply.StatusApplied {
		msg := "does not apply"
		if len(r.Errors) > 0 {
			msg = r.Errors[0].Message
		}
		return nil, fmt.Errorf("%s: the re-expressed bump does not apply: %s", p.Path, msg)
	}
	out.Text = text
	return out, nil
}

// keptHolds checks that the go command left every hold of ws at its held
// version or lower in go.mod data mod: a hold is re-expressed as a hold,
// never raised (`go mod tidy` raises a require a dependency needs higher).
func keptHolds(patch, file string, mod []byte, ws []Want) error {
	m, err := Parse(file, mod)
	if err != nil {
		return err
	}
	for _, w := range ws {
		if !w.Hold {
			continue
		}
		if c := m.Cover(w); !c.Covered {
			return fmt.Errorf("%s: holding %s at %s in %s: the go command requires %s after go mod tidy (a dependency needs it higher); hold it with a replace directive, or drop the hold: refusing to raise a held module",
				patch, w.Path, w.Version, file, orNone(c.Upstream))
		}
	}
	return nil
}
