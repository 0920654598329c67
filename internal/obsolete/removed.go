package obsolete

// Targets upstream removed (issue U).
//
// A patch whose files upstream deleted does not need a refresh: there is
// nothing left to refresh it on. A file the patch modifies (not one it
// creates or deletes) is removed at a ref when the pin has it, the ref has nothing
// there, and a commit of the range that the ref reaches deleted it and git's
// rename detection (git diff-tree -M, as git log --diff-filter=D reads it)
// does not see it renamed or moved there: a rename is followed as before,
// as a conflict or more. The commit named is the last of the ref's history,
// oldest first, after which the file was gone (as the first line of
// `git log --diff-filter=D PIN..REF -- path`).
//
//   - every file the patch modifies is removed: the target is removed. The
//     status stays conflict (the statuses of the JSON contract are fixed)
//     and Result.Removed says which files, and the commit; the tables say
//     "removed" (Result.TargetRemoved);
//   - some are: their hunks say so (Via removed, status conflict) and the
//     patch's status is what its other hunks decide; the evidence names the
//     removed files. A patch whose other hunks are all upstream stays
//     partial: the removed files' change may be needed in what replaced
//     them.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
)

// ViaRemoved: a hunk's file, or (a result's Via) every file the patch
// modifies, was deleted upstream (not renamed).
const ViaRemoved = "removed"

// Removed names the files a patch modifies that upstream deleted, and the
// upstream commit after which they were all gone.
type Removed struct {
	Paths   []string `json:"paths"`
	Commit  string   `json:"commit"`
	Subject string   `json:"subject,omitempty"`
	// All says every file the patch modifies is among Paths: the target is
	// removed.
	All bool `json:"-"`
	// Several says more than one commit deleted them; Commit is the last.
	Several bool `json:"-"`
}

// TargetRemoved reports whether every file the patch modifies was deleted
// upstream: the status is conflict, but no refresh can help.
func (r Result) TargetRemoved() bool {
	return r.Status == StatusConflict && r.Removed != nil && r.Removed.All
}

// inConflict reports whether some hunk of the file (old or new name) is in
// conflict; true when the patch was not judged hunk by hunk.
func inConflict(hs []Hunk, names ...string) bool {
	if len(hs) == 0 {
		return true
	}
	for _, h := range hs {
		for _, n := range names {
			if n != "" && h.Path == n && h.Status == StatusConflict {
				return true
			}
		}
	}
	return false
}

// removedKey memoizes a file's deletion in a ref's history.
type removedKey struct{ path, ref string }

// deletion is a file's deletion in a ref's history; nil commit: not removed.
type deletion struct{ commit *commit }

// markRemoved notes in r which of patch i's files upstream removed at ref
// (see the top of this file). It leaves applying, present and superseded
// results alone.
func (c *checker) markRemoved(r *Result, i int, ref Ref) error {
	if r.Status != StatusConflict && r.Status != StatusPartial {
		return nil
	}
	targets, gone := 0, map[string]*commit{}
	for _, f := range c.patches[i].Files {
		if f.IsNew || f.IsDelete {
			// A file it creates is no target; one it deletes that is
			// gone is its own change there.
			continue
		}
		targets++
		if !inConflict(r.Hunks, f.OldName, f.NewName) {
			// Its hunks are there, or were rewritten by a commit that
			// landed the others (upstream's own way): no removed target.
			continue
		}
		d, err := c.fileDeletion(variants(f.OldName), ref)
		if err != nil {
			return err
		}
		if d != nil {
			gone[f.OldName] = d
			if f.NewName != "" {
				gone[f.NewName] = d
			}
		}
	}
	if len(gone) == 0 {
		return nil
	}
	rm := &Removed{}
	var last *commit
	seen := map[string]bool{}
	for _, f := range c.patches[i].Files {
		if f.IsNew || f.IsDelete {
			continue
		}
		d := gone[f.OldName]
		if d == nil {
			continue
		}
		if !seen[f.OldName] {
			seen[f.OldName] = true
			rm.Paths = append(rm.Paths, f.OldName)
		}
		if last != nil && last != d {
			rm.Several = true
		}
		if last == nil || c.h.index[d.id] > c.h.index[last.id] {
			last = d
		}
	}
	rm.Commit, rm.Subject = last.id, last.subject
	rm.All = len(rm.Paths) == targets
	for k := range r.Hunks {
		h := &r.Hunks[k]
		if h.Status == StatusConflict && gone[h.Path] != nil {
			h.Via = ViaRemoved
		}
	}
	r.Removed = rm
	if rm.All {
		setStatus(r, StatusConflict, ViaRemoved, nil)
		r.Conflict = nil
	}
	return nil
}

// fileDeletion says whether the file a patch names (with its -p1 variants)
// was removed upstream at ref, and by which commit: the pin has it, ref has
// nothing at that path, and the last commit of ref's history (of the
// range, oldest first) after which it was gone deleted it without git
// seeing a rename.
func (c *checker) fileDeletion(names []string, ref Ref) (*commit, error) {
	name := ""
	for _, n := range names {
		ok, err := c.has(c.pinCommit, n)
		if err != nil {
			return nil, err
		}
		if ok {
			name = n
			break
		}
	}
	if name == "" {
		return nil, nil
	}
	key := removedKey{name, ref.Commit}
	if d, ok := c.removed[key]; ok {
		return d.commit, nil
	}
	d, err := c.deletedBy(name, ref)
	if err != nil {
		return nil, err
	}
	c.removed[key] = deletion{d}
	return d, nil
}

// deletedBy finds the commit that removed name from ref's tree (see
// fileDeletion); nil when ref has it, or when no commit of the range
// deleted it, or when git sees that commit rename it.
func (c *checker) deletedBy(name string, ref Ref) (*commit, error) {
	snap, err := c.cache.Source(ref.Commit)
	if err != nil {
		return nil, err
	}
	if _, ok, err := snap.Entry(name); err != nil || ok {
		return nil, err
	}
	reach := c.h.reachable(ref.Commit)
	var found *commit
	paths := map[string]bool{name: true}
	for _, idx := range c.h.relevant {
		cm := c.h.commits[idx]
		if !reach.has(idx) || !touches(cm, paths) || cm.parent == "" {
			continue
		}
		after, err := c.has(cm.id, name)
		if err != nil {
			return nil, err
		}
		if after {
			continue
		}
		before, err := c.has(cm.parent, name)
		if err != nil {
			return nil, err
		}
		if before {
			found = cm
		}
	}
	if found == nil {
		return nil, nil
	}
	renamed, err := c.renamedIn(found, name)
	if err != nil || renamed {
		return nil, err
	}
	return found, nil
}

// has reports whether commit id's tree has an entry at name.
func (c *checker) has(id, name string) (bool, error) {
	src, err := c.cache.Source(id)
	if err != nil {
		return false, err
	}
	_, ok, err := src.Entry(name)
	return ok, err
}

// renamedIn reports whether git's rename detection sees commit cm rename or
// move name (against its first parent): `git diff-tree -r -M`.
func (c *checker) renamedIn(cm *commit, name string) (bool, error) {
	froms, err := memoed(c.ctx, c.git, nil, readRenames,
		"diff-tree", "-r", "-M", "--name-status", "-z", "--no-commit-id", cm.parent, cm.id)
	if err != nil {
		return false, fmt.Errorf("reading the renames of upstream commit %s: %w", Short(cm.id), err)
	}
	i := sort.SearchStrings(froms, name)
	return i < len(froms) && froms[i] == name, nil
}

// readRenames reads `git diff-tree --name-status -z` and returns the sources
// of its renames, sorted.
func readRenames(r io.Reader) ([]string, error) {
	data, err := io.ReadAll(bufio.NewReader(r))
	if err != nil {
		return nil, err
	}
	fields := bytes.Split(bytes.TrimSuffix(data, []byte{0}), []byte{0})
	var out []string
	for k := 0; k < len(fields); k++ {
		st := string(fields[k])
		switch {
		case strings.HasPrefix(st, "R"), strings.HasPrefix(st, "C"):
			if k+2 < len(fields) && st[0] == 'R' {
				out = append(out, string(fields[k+1]))
			}
			k += 2
		case st != "":
			k++
		}
	}
	sort.Strings(out)
	return out, nil
}

// removedPhrase says which files upstream removed: `pkg/foo/bar.go deleted
// by upstream commit abc123 ("subject")`.
func removedPhrase(rm *Removed) string {
	cp := commitPhrase(Result{Commit: rm.Commit, Subject: rm.Subject})
	if !rm.Several {
		return strings.Join(rm.Paths, ", ") + " deleted by " + cp
	}
	return strings.Join(rm.Paths, ", ") + " deleted upstream, the last by " + cp
}
