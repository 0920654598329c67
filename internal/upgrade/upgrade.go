package upgrade

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/gomod"
	"github.com/patchkit/patchkit/internal/obsolete"
	"github.com/patchkit/patchkit/internal/refresh"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/tree"
	"github.com/patchkit/patchkit/internal/upstream"
)

// The fates of a patch in an upgrade.
const (
	// FateDropped: the new ref carries the change (present or superseded).
	FateDropped = "dropped"
	// FateKept: the patch applies at the new ref and its text is canonical already.
	FateKept = "kept"
	// FateRefreshed: the patch applies at the new ref; its text was rewritten.
	FateRefreshed = "refreshed"
	// FateMerged: the patch conflicted; a three-way merge rebased it cleanly.
	FateMerged = "merged"
	// FateConflict: the three-way merge conflicts; the patch is left as it was.
	FateConflict = "conflict"
)

// ErrUpToDate is the deliberate skip: no release newer than the pin matches
// upstream.releases.
var ErrUpToDate = errors.New("no newer upstream release")

// Input is what Plan upgrades.
type Input struct {
	Cache *upstream.Cache
	Spec  *spec.Spec
	// PinCommit is upstream.ref resolved.
	PinCommit string
	// Patches is the series, references materialized.
	Patches []*series.Patch
	// To is the ref to move to; "" means the newest final release matching
	// upstream.releases (see Target).
	To string
	// Pin moves the pin; nil leaves the pin file out of the plan.
	Pin PinWriter
	// Go runs the go command that re-expresses bump patches (bump.go).
	Go gomod.Go
	// Root is the repository root: with it (and Pin), the plan moves every
	// upstream.versions place of Spec with the pin, in the same writes.
	Root string
}

// Conflict is one hunk that does not apply at the new ref (apply's record of
// a failed hunk, Kind conflict and the like), or one region the three-way
// merge could not resolve (Kind KindMerge: Hunk is "", Line the region's
// first line in the pin's file, Expected the patched lines and Actual the new
// ref's). It is apply.Problem itself; Conflicts spells it in upgrade's JSON.
type Conflict = apply.Problem

// KindMerge is the Kind of a Conflict the three-way merge found.
const KindMerge = "merge"

// Conflicts are a patch's conflicts. Their JSON is upgrade's (and forward's)
// documented shape, older than the one model: {"path", "hunk"?, "line"?,
// "expected", "found", "message"?}, where "found" is apply's "actual" and
// apply's "kind", "file" and "nearLine" are left out (docs/upgrade.md).
type Conflicts []Conflict

// MarshalJSON writes upgrade's spelling of each conflict.
func (cs Conflicts) MarshalJSON() ([]byte, error) {
	if cs == nil {
		return []byte("null"), nil
	}
	type conflictJSON struct {
		Path     string   `json:"path"`
		Hunk     string   `json:"hunk,omitempty"`
		Line     int      `json:"line,omitempty"`
		Expected []string `json:"expected"`
		Found    []string `json:"found"`
		Message  string   `json:"message,omitempty"`
	}
	out := make([]conflictJSON, len(cs))
	for i, c := range cs {
		out[i] = conflictJSON{Path: c.Path, Hunk: c.Hunk, Line: c.Line, Expected: c.Expected, Found: c.Actual, Message: c.Message}
	}
	// Unescaped: the encoder that calls MarshalJSON escapes <, > and & when
	// it is set to, as it would for the fields themselves.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// PatchFate is what the upgrade does with one patch.
type PatchFate struct {
	File string `json:"file"`
	Fate string `json:"fate"`
	// Status is the obsolete-check status at the new ref.
	Status string `json:"status"`
	// Commit and Subject name the upstream commit that carries a dropped patch.
	Commit  string `json:"commit,omitempty"`
	Subject string `json:"subject,omitempty"`
	// Evidence says why, in one sentence.
	Evidence string `json:"evidence"`
	// Tests are the tests the patch owns (Test:).
	Tests []string `json:"tests,omitempty"`
	// Conflicts are shown for a conflict.
	Conflicts Conflicts `json:"conflicts,omitempty"`
	// Reference marks a reference file.
	Reference bool `json:"reference,omitempty"`
	// Raised and Covered are, for a re-expressed dependency bump (fate
	// raised), the requirements it still raises and those the new ref
	// already covers (bump.go).
	Raised  []gomod.Coverage `json:"raised,omitempty"`
	Covered []gomod.Coverage `json:"covered,omitempty"`
}

// Write is one file the upgrade writes (Data) or deletes (Delete).
type Write struct {
	Path   string `json:"path"`
	Delete bool   `json:"delete,omitempty"`
	Data   []byte `json:"-"`
	// Prior is the content the plan read from the file; nil means the file
	// as it is when WriteSet is called.
	Prior []byte `json:"-"`
}

// PinMove is the pin's move.
type PinMove struct {
	File       string `json:"file"`
	From       string `json:"from"`
	FromCommit string `json:"fromCommit"`
	To         string `json:"to"`
	ToCommit   string `json:"toCommit"`
}

// Result is an upgrade's plan: the writes, and what they mean.
type Result struct {
	Pin     PinMove     `json:"pin"`
	Patches []PatchFate `json:"patches"`
	Writes  []Write     `json:"writes"`
	// Changes is the kept series laid over the new ref, for the gate.
	Changes map[string]*tree.File `json:"-"`
	// Source is the new ref's tree.
	Source *upstream.Snapshot `json:"-"`
	// NewUnit is the directory of upgrade --into: the plan creates the
	// unit there (Into), and its paths are the new unit's.
	NewUnit string `json:"into,omitempty"`
	// modes are the modes of the files Into copies that are not 0644.
	modes map[string]fs.FileMode
}

// OK reports whether every patch found a fate other than conflict.
func (r *Result) OK() bool {
	for _, p := range r.Patches {
		if p.Fate == FateConflict {
			return false
		}
	}
	return true
}

// Target returns the ref to upgrade to: to when given, else the newest tag
// matching the spec's releases that is a final release (no -prerelease),
// which must be newer than the pin (else ErrUpToDate).
func Target(c *upstream.Cache, s *spec.Spec, to string) (string, error) {
	if to != "" {
		return to, nil
	}
	if s.Upstream.Releases == "" {
		return "", fmt.Errorf("%s: upstream.releases is not set: name the ref with --to", s.File)
	}
	tags, err := c.Tags()
	if err != nil {
		return "", err
	}
	rel, err := upstream.Releases(tags, s.Upstream.Releases)
	if err != nil {
		return "", err
	}
	for i := len(rel) - 1; i >= 0; i-- {
		name := rel[i].Name
		if obsolete.IsPrerelease(name, s.Upstream.Releases, s.Upstream.Ref) {
			continue
		}
		if cmp, ok := upstream.CompareVersions(name, s.Upstream.Ref); ok && cmp <= 0 {
			break
		}
		return name, nil
	}
	return "", fmt.Errorf("%w than %s matching %q", ErrUpToDate, s.Upstream.Ref, s.Upstream.Releases)
}

// Plan computes the upgrade to in.To (resolved and fetched by the caller)
// without writing anything: the obsolete stage's verdict at the new ref
// drops the patches it carries; the others are applied in order at the new
// ref and rendered canonically, or rebased with Merge3 when they do not
// apply.
func Plan(ctx context.Context, in Input, toCommit string) (*Result, error) {
	if err := series.CheckRewritable(in.Patches); err != nil {
		return nil, err
	}
	rep, err := obsolete.Check(ctx, obsolete.Input{
		Cache: in.Cache, Spec: in.Spec, PinCommit: in.PinCommit, Patches: in.Patches, Refs: []string{in.To},
	})
	if err != nil {
		return nil, fmt.Errorf("checking the series at %s: %w", in.To, err)
	}
	pinSrc, err := in.Cache.Source(in.PinCommit)
	if err != nil {
		return nil, err
	}
	newSrc, err := in.Cache.Source(toCommit)
	if err != nil {
		return nil, err
	}
	res := &Result{Source: newSrc, Pin: PinMove{From: in.Spec.Upstream.Ref, FromCommit: in.PinCommit, To: in.To, ToCommit: toCommit}}
	tool := apply.ForTool(in.Spec.Apply.Whitespace, in.Spec.Apply.Fuzz, in.Spec.Apply.Loose)
	w := &walker{old: apply.New(pinSrc, tool...), cur: apply.New(newSrc, tool...), ctx: ctx, src: newSrc, goCmd: in.Go}
	for i, p := range in.Patches {
		verdict := rep.Patches[i].Results[0]
		fate, write, err := w.carry(p, verdict)
		if err != nil {
			return nil, err
		}
		res.Patches = append(res.Patches, fate)
		if write != nil {
			res.Writes = append(res.Writes, *write)
		}
	}
	res.Changes = w.cur.Changes()
	if in.Root != "" {
		res.Writes = dropFromReadme(in.Root, in.Spec, res.Writes)
	}
	if in.Pin != nil {
		file, data, err := in.Pin.Move(in.To)
		if err != nil {
			return nil, err
		}
		res.Pin.File = file
		res.Writes = append([]Write{{Path: file, Data: data}}, res.Writes...)
		if in.Root != "" {
			if res.Writes, err = moveVersions(in.Root, in.Spec, in.To, w.cur, res.Writes); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

// walker carries the series from the old state (the pin and the patches
// before) to the new (the new ref and the patches kept before).
type walker struct {
	old, cur *apply.Applier
	// For bump patches (bump.go): the new ref's tree and the go command.
	ctx   context.Context
	src   tree.Walker
	goCmd gomod.Go
}

func (w *walker) carry(p *series.Patch, v obsolete.Result) (PatchFate, *Write, error) {
	fate := PatchFate{File: p.Path, Status: v.Status, Tests: p.Header.Tests, Reference: p.Reference != nil}
	paths := refresh.Touched(p)
	base, err := tree.ReadAll(w.old, paths)
	if err != nil {
		return fate, nil, err
	}
	// A bump's holds are told by the tree it applied to (Split.Orient).
	split := gomod.SplitPatch(p)
	if err := split.Orient(w.old); err != nil {
		return fate, nil, err
	}
	if r := w.old.Apply(p); r.Status != apply.StatusApplied {
		return fate, nil, &refresh.NotApplyingError{Patch: p, Result: r}
	}
	if v.Status == obsolete.StatusPresent || v.Status == obsolete.StatusSuperseded {
		fate.Fate, fate.Commit, fate.Subject, fate.Evidence = FateDropped, v.Commit, v.Subject, v.Evidence
		return fate, &Write{Path: p.Path, Delete: true, Prior: p.FileBytes()}, nil
	}
	// A bump that still applies as it is keeps its lines (they hold the new
	// ref's versions, so nothing goes down); the others are re-expressed.
	if s := split; s != nil && w.src != nil && v.Status != obsolete.StatusApplies {
		if f, write, err := w.carryBump(p, s, fate); f != nil || err != nil {
			return derefFate(f, fate), write, err
		}
	}
	text, r, err := refresh.Render(w.cur, p)
	if err != nil {
		return fate, nil, err
	}
	if r.Status == apply.StatusApplied {
		if string(text) == string(p.FileBytes()) {
			fate.Fate, fate.Evidence = FateKept, "applies at "+w.describe(r)+"; already canonical"
			return fate, nil, nil
		}
		fate.Fate, fate.Evidence = FateRefreshed, "applies at "+w.describe(r)+"; rewritten at the new line numbers"
		return fate, &Write{Path: p.Path, Data: text, Prior: p.FileBytes()}, nil
	}
	theirs, err := tree.ReadAll(w.old, paths)
	if err != nil {
		return fate, nil, err
	}
	return w.merge(p, fate, r, base, theirs)
}

func (w *walker) describe(r apply.PatchResult) string {
	moved := 0
	for _, h := range r.Hunks {
		if h.Offset != 0 {
			moved++
		}
	}
	if moved == 0 {
		return "its place"
	}
	return fmt.Sprintf("an offset (%d of %d hunks moved)", moved, len(r.Hunks))
}

// merge rebases p with a three-way merge of each file it changes; r is why
// it did not apply.
func (w *walker) merge(p *series.Patch, fate PatchFate, r apply.PatchResult, base, theirs map[string]*tree.File) (PatchFate, *Write, error) {
	conflictFate := func(cs Conflicts, why string) (PatchFate, *Write, error) {
		fate.Fate, fate.Conflicts, fate.Evidence = FateConflict, cs, why
		return fate, nil, nil
	}
	if p.Reference != nil || hasVerbatim(p) {
		return conflictFate(applyConflicts(r), "does not apply, and a reference, binary or rename diff cannot be merged")
	}
	ours, err := tree.ReadAll(w.cur, refresh.Touched(p))
	if err != nil {
		return fate, nil, err
	}
	var files []series.FileChange
	var cs Conflicts
	for _, path := range refresh.Touched(p) {
		merged, c := mergeFile(p.Path, path, base[path], ours[path], theirs[path])
		cs = append(cs, c...)
		files = append(files, series.FileChange{Path: path, Old: ours[path], New: merged})
	}
	if len(cs) > 0 {
		return conflictFate(append(applyConflicts(r), cs...), fmt.Sprintf("does not apply, and the three-way merge conflicts in %d region(s)", len(cs)))
	}
	text := series.Canonical(p, files)
	np, err := series.Parse(p.Path, text)
	if err != nil {
		// A merge that leaves nothing to change: upstream has it all.
		fate.Fate, fate.Evidence = FateDropped, "the three-way merge leaves nothing to change: the new ref has the change"
		return fate, &Write{Path: p.Path, Delete: true, Prior: p.FileBytes()}, nil
	}
	if r2 := w.cur.Apply(np); r2.Status != apply.StatusApplied {
		return fate, nil, fmt.Errorf("%s: the merged patch does not apply: %s", p.Path, r2.Errors[0].Message)
	}
	fate.Fate, fate.Evidence = FateMerged, "did not apply; rebased by a clean three-way merge (pin as base, new ref as ours, patched pin as theirs)"
	return fate, &Write{Path: p.Path, Data: text, Prior: p.FileBytes()}, nil
}

func hasVerbatim(p *series.Patch) bool {
	for _, f := range p.Files {
		if series.NeedsVerbatim(f) {
			return true
		}
	}
	return false
}

// mergeFile merges one file of the patch file patch; nil is a missing file.
func mergeFile(patch, path string, base, ours, theirs *tree.File) (*tree.File, Conflicts) {
	data := func(f *tree.File) []string {
		if f == nil {
			return nil
		}
		return series.SplitKeep(string(f.Data))
	}
	switch {
	case theirs == nil && base != nil && ours != nil && string(ours.Data) == string(base.Data):
		return nil, nil // the patch deletes it, and upstream did not touch it
	case theirs == nil || ours == nil:
		return ours, Conflicts{{Kind: KindMerge, File: patch, Path: path, Message: "the patch creates or deletes the file, and the new ref changed it"}}
	}
	merged, mc := Merge3(data(base), data(ours), data(theirs))
	if len(mc) > 0 {
		out := make(Conflicts, len(mc))
		for i, c := range mc {
			out[i] = Conflict{Kind: KindMerge, File: patch, Path: path, Line: c.BaseLine, Expected: trimAll(c.Theirs), Actual: trimAll(c.Ours),
				Message: fmt.Sprintf("merge: the patch and the new ref both change line %d of the pin onwards (expected: the patched lines, found: the new ref's)", c.BaseLine)}
		}
		return ours, out
	}
	mode := ours.Mode
	if base != nil && theirs.Mode != base.Mode {
		mode = theirs.Mode
	}
	return &tree.File{Mode: mode, Data: []byte(strings.Join(merged, ""))}, nil
}

// applyConflicts are r's problems: apply's failed hunks are upgrade's
// conflicts as they are.
func applyConflicts(r apply.PatchResult) Conflicts {
	return append(Conflicts(nil), r.Errors...)
}

func trimAll(ls []string) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = strings.TrimRight(l, "\r\n")
	}
	return out
}
