package obsolete

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/tree"
	"github.com/patchkit/patchkit/internal/upstream"
)

// checker evaluates the series at each ref. It runs in one goroutine.
//
// Speed: the applier reads only the blobs the patches touch, through the
// cache's lazy snapshots. The verdicts that the trees decide are memoized by
// a fingerprint of every tree entry the series can look at (the touched paths
// and their parent directories) plus which patches a patch-id commit covers,
// so refs that do not change those entries cost only the fingerprint. The
// patch-ids of the upstream commits are read once per run (see history).
type checker struct {
	cache   *upstream.Cache
	objects storer.EncodedObjectStorer
	patches []*series.Patch
	h       *history
	pin     *upstream.Snapshot

	// touched are the paths the series names (and their -p1 variants);
	// parents are their leading directories. Both sorted.
	touched, parents []string
	// patchPaths are the paths of each patch, with variants.
	patchPaths []map[string]bool

	memo     map[string][]verdict
	units    map[int][]unit
	added    map[int][]addedFile
	pinLines map[string]map[string]bool
	pred     map[predKey]bool
}

// verdict is what the trees say about one patch at one ref; the commit
// evidence is added per ref.
type verdict struct {
	status   string
	via      string
	offsets  []apply.HunkResult
	hunks    []Hunk
	lines    *LineMatch
	conflict *apply.Problem
}

// addedFile is a file diff's significant added lines: trimmed, non-blank,
// and not in the file at the pin.
type addedFile struct {
	names []string // where to read the file: its name and -p1 variant
	lines []string
}

type predKey struct {
	patch, commit int
	kind          string
}

var noWS = apply.WithoutWhitespaceCheck()

func newChecker(ctx context.Context, g gitRunner, in Input, refs []Ref, h *history) (*checker, error) {
	pin, err := in.Cache.Source(in.PinCommit)
	if err != nil {
		return nil, err
	}
	c := &checker{
		cache:    in.Cache,
		objects:  in.Cache.Repo().Storer,
		patches:  in.Patches,
		h:        h,
		pin:      pin,
		memo:     map[string][]verdict{},
		units:    map[int][]unit{},
		added:    map[int][]addedFile{},
		pinLines: map[string]map[string]bool{},
		pred:     map[predKey]bool{},
	}
	touched := map[string]bool{}
	for _, p := range in.Patches {
		pp := map[string]bool{}
		for _, f := range p.Files {
			for _, n := range []string{f.OldName, f.NewName} {
				for _, v := range variants(n) {
					pp[v] = true
					touched[v] = true
				}
			}
		}
		c.patchPaths = append(c.patchPaths, pp)
	}
	parents := map[string]bool{}
	for p := range touched {
		for i := 0; i < len(p); i++ {
			if p[i] == '/' {
				parents[p[:i]] = true
			}
		}
	}
	for p := range touched {
		c.touched = append(c.touched, p)
	}
	for p := range parents {
		if !touched[p] {
			c.parents = append(c.parents, p)
		}
	}
	sort.Strings(c.touched)
	sort.Strings(c.parents)
	var tips []string
	for _, r := range refs {
		tips = append(tips, r.Commit)
	}
	if err := h.loadPatchIDs(ctx, g, in.PinCommit, dedupe(tips), c.touched); err != nil {
		return nil, err
	}
	return c, nil
}

// variants returns a patch's file name and, for a name with a directory, the
// name without its first component (a traditional diff's a/ and b/).
func variants(name string) []string {
	if name == "" || tree.Clean(name) != nil {
		return nil
	}
	out := []string{name}
	if i := strings.IndexByte(name, '/'); i > 0 {
		out = append(out, name[i+1:])
	}
	return out
}

// checkRef returns every patch's result at ref.
func (c *checker) checkRef(ref Ref) ([]Result, error) {
	hits := make([]*commit, len(c.patches))
	var key strings.Builder
	for i, p := range c.patches {
		hits[i] = c.h.patchIDCommit(p.PatchID, ref.Commit)
		if hits[i] != nil {
			key.WriteByte('1')
		} else {
			key.WriteByte('0')
		}
	}
	fp, err := c.fingerprint(ref.Commit)
	if err != nil {
		return nil, err
	}
	key.WriteString(fp)
	vs, ok := c.memo[key.String()]
	if !ok {
		snap, err := c.cache.Source(ref.Commit)
		if err != nil {
			return nil, err
		}
		vs, err = c.evaluate(snap, hits)
		if err != nil {
			return nil, err
		}
		c.memo[key.String()] = vs
	}
	out := make([]Result, len(vs))
	for i, v := range vs {
		r, err := c.result(ref, i, v, hits[i])
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

// fingerprint hashes every tree entry of commit that the series can look
// at: each touched path (mode and object id, or absent), and each of their
// leading directories (a directory, or what else is there).
func (c *checker) fingerprint(id string) (string, error) {
	cm, err := object.GetCommit(c.objects, plumbing.NewHash(id))
	if err != nil {
		return "", fmt.Errorf("reading commit %s: %w", id, err)
	}
	t, err := cm.Tree()
	if err != nil {
		return "", fmt.Errorf("reading the tree of %s: %w", id, err)
	}
	h := sha256.New()
	entry := func(p string, dirOnly bool) error {
		e, err := t.FindEntry(p)
		switch {
		case errors.Is(err, object.ErrEntryNotFound), errors.Is(err, object.ErrDirectoryNotFound), errors.Is(err, object.ErrFileNotFound):
			fmt.Fprintf(h, "%s\x00-\n", p)
			return nil
		case err != nil:
			return fmt.Errorf("reading %s at %s: %w", p, id, err)
		case dirOnly && e.Mode == filemode.Dir:
			fmt.Fprintf(h, "%s\x00d\n", p)
		default:
			fmt.Fprintf(h, "%s\x00%o %s\n", p, uint32(e.Mode), e.Hash)
		}
		return nil
	}
	for _, p := range c.touched {
		if err := entry(p, false); err != nil {
			return "", err
		}
	}
	for _, p := range c.parents {
		if err := entry(p, true); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// evaluate tests the series on snap the way git would: each patch on the
// ref's tree with the earlier still-needed patches applied (those that apply,
// and the applying hunks of partial ones).
func (c *checker) evaluate(snap *upstream.Snapshot, hits []*commit) ([]verdict, error) {
	state := apply.New(snap, noWS)
	out := make([]verdict, len(c.patches))
	for i := range c.patches {
		v, err := c.verdict(state, snap, i, hits[i] != nil)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// verdict decides one patch on state, in this order: reverse-applies
// (present); applies (applied to state); a patch-id commit (present); hunk by
// hunk (partial, the applying hunks applied to state); added lines upstream
// (superseded); else conflict.
func (c *checker) verdict(state *apply.Applier, snap tree.Source, i int, patchID bool) (verdict, error) {
	p := c.patches[i]
	rev := apply.New(state, apply.WithReverse(), noWS).Apply(p)
	if err := fatal(rev); err != nil {
		return verdict{}, err
	}
	if rev.Status == apply.StatusApplied {
		return verdict{status: StatusPresent, via: ViaReverseApply}, nil
	}
	fwd := state.Apply(p)
	if err := fatal(fwd); err != nil {
		return verdict{}, err
	}
	if fwd.Status == apply.StatusApplied {
		return verdict{status: StatusApplies, via: ViaApply, offsets: fwd.Hunks}, nil
	}
	if patchID {
		return verdict{status: StatusPresent, via: ViaPatchID}, nil
	}
	hunks, kind, offsets, err := c.byHunks(state, i)
	if err != nil {
		return verdict{}, err
	}
	switch kind {
	case StatusPartial:
		return verdict{status: StatusPartial, via: ViaHunks, hunks: hunks, offsets: offsets}, nil
	case StatusPresent:
		return verdict{status: StatusPresent, via: ViaHunks, hunks: hunks}, nil
	}
	lm, err := c.addedLines(i, snap)
	if err != nil {
		return verdict{}, err
	}
	if supersedes(lm) {
		return verdict{status: StatusSuperseded, via: ViaAddedLines, hunks: hunks, lines: &lm}, nil
	}
	v := verdict{status: StatusConflict, via: ViaApply, hunks: hunks}
	if lm.Present > 0 {
		v.lines = &lm
	}
	if len(fwd.Errors) > 0 {
		pr := fwd.Errors[0]
		v.conflict = &pr
	}
	return v, nil
}

// supersedes applies the SupersededShare threshold.
func supersedes(lm LineMatch) bool {
	return lm.Total > 0 && float64(lm.Present) >= SupersededShare*float64(lm.Total)-1e-9
}

// fatal turns a result the patch itself is to blame for into bad input, and
// a tree that could not be read into an error.
func fatal(r apply.PatchResult) error {
	if r.Err != nil {
		return r.Err
	}
	for _, e := range r.Errors {
		if e.Kind == apply.KindUnsafe || e.Kind == apply.KindCorrupt {
			return &diag.InputError{File: e.File, Line: e.Line, Msg: e.Message}
		}
	}
	return nil
}

// byHunks tests each unit of patch i on its own, in order, on a scratch state
// over state: present if it reverse-applies, else applied if it applies. When
// some are present and the rest apply, the patch is partial and its applying
// units are applied to state too; when all are present, it is present.
func (c *checker) byHunks(state *apply.Applier, i int) ([]Hunk, string, []apply.HunkResult, error) {
	us, ok := c.units[i]
	if !ok {
		us = splitUnits(c.patches[i])
		c.units[i] = us
	}
	if us == nil {
		return nil, "", nil, nil
	}
	scratch := apply.New(state, noWS)
	hunks := make([]Hunk, 0, len(us))
	var applying []int
	present, failed := 0, false
	for k, u := range us {
		h := Hunk{Path: u.path, Hunk: u.hunk, Line: u.line}
		r := apply.New(scratch, apply.WithReverse(), noWS).Apply(u.patch)
		if r.Err != nil {
			return nil, "", nil, r.Err
		}
		if r.Status == apply.StatusApplied {
			h.Status = StatusPresent
			present++
		} else if f := scratch.Apply(u.patch); f.Err != nil {
			return nil, "", nil, f.Err
		} else if f.Status == apply.StatusApplied {
			h.Status = StatusApplies
			if len(f.Hunks) > 0 {
				h.Offset = f.Hunks[0].Offset
			}
			applying = append(applying, k)
		} else {
			h.Status = StatusConflict
			failed = true
		}
		hunks = append(hunks, h)
	}
	switch {
	case failed:
		return hunks, "", nil, nil
	case len(applying) == 0:
		return hunks, StatusPresent, nil, nil
	case present == 0:
		// Each hunk applies alone but not the patch whole: a conflict.
		return hunks, "", nil, nil
	}
	var offsets []apply.HunkResult
	for _, k := range applying {
		r := state.Apply(us[k].patch)
		if r.Status != apply.StatusApplied {
			return nil, "", nil, fmt.Errorf("%s: hunk at line %d applied on its own but not after the others", c.patches[i].Path, us[k].line)
		}
		offsets = append(offsets, r.Hunks...)
	}
	return hunks, StatusPartial, offsets, nil
}

// addedFiles returns patch i's significant added lines per file diff.
func (c *checker) addedFiles(i int) ([]addedFile, error) {
	if af, ok := c.added[i]; ok {
		return af, nil
	}
	var out []addedFile
	for _, f := range c.patches[i].Files {
		if f.IsDelete || f.IsBinary {
			continue
		}
		names := variants(f.NewName)
		if len(names) == 0 {
			continue
		}
		var pinSet map[string]bool
		if !f.IsNew {
			old := variants(f.OldName)
			if len(old) == 0 {
				old = names
			}
			var err error
			if pinSet, err = c.pinLineSet(old); err != nil {
				return nil, err
			}
		}
		af := addedFile{names: names}
		for _, tf := range f.TextFragments {
			for _, l := range tf.Lines {
				if l.Op != gitdiff.OpAdd {
					continue
				}
				s := strings.TrimSpace(l.Line)
				if s != "" && !pinSet[s] {
					af.lines = append(af.lines, s)
				}
			}
		}
		if len(af.lines) > 0 {
			out = append(out, af)
		}
	}
	c.added[i] = out
	return out, nil
}

func (c *checker) pinLineSet(names []string) (map[string]bool, error) {
	key := strings.Join(names, "\x00")
	if s, ok := c.pinLines[key]; ok {
		return s, nil
	}
	s, err := lineSet(c.pin, names)
	if err != nil {
		return nil, err
	}
	c.pinLines[key] = s
	return s, nil
}

// lineSet reads the first of names that src has and returns its trimmed lines.
func lineSet(src tree.Source, names []string) (map[string]bool, error) {
	for _, n := range names {
		f, ok, err := src.Read(n)
		if err != nil {
			return nil, err
		}
		if !ok || f.Mode == tree.Symlink || f.Mode == tree.Gitlink {
			continue
		}
		set := map[string]bool{}
		for _, l := range strings.Split(string(f.Data), "\n") {
			set[strings.TrimSpace(l)] = true
		}
		return set, nil
	}
	return nil, nil
}

// addedLines counts how many of patch i's significant added lines src has.
func (c *checker) addedLines(i int, src tree.Source) (LineMatch, error) {
	files, err := c.addedFiles(i)
	if err != nil {
		return LineMatch{}, err
	}
	var lm LineMatch
	for _, af := range files {
		set, err := lineSet(src, af.names)
		if err != nil {
			return LineMatch{}, err
		}
		lm.Total += len(af.lines)
		for _, l := range af.lines {
			if set[l] {
				lm.Present++
			}
		}
	}
	return lm, nil
}

// Predicates for introducer.
const (
	predReverse = "reverse"
	predLines   = "lines"
)

// introducer finds the upstream commit that brought patch i's change into
// ref: among the range commits that ref reaches and that touch the patch's
// files, oldest first, the last one at which the predicate turned true
// (and stayed true). nil when none is found.
func (c *checker) introducer(i int, ref Ref, kind string) (*commit, error) {
	reach := c.h.reachable(ref.Commit)
	var found *commit
	prev := false
	for _, idx := range c.h.relevant {
		if !reach.has(idx) {
			continue
		}
		cm := c.h.commits[idx]
		if !touches(cm, c.patchPaths[i]) {
			continue
		}
		ok, err := c.predicate(i, idx, kind)
		if err != nil {
			return nil, err
		}
		if ok && !prev {
			found = cm
		}
		prev = ok
	}
	if !prev {
		return nil, nil
	}
	return found, nil
}

func touches(cm *commit, paths map[string]bool) bool {
	for p := range cm.paths {
		if paths[p] {
			return true
		}
	}
	return false
}

// predicate reports, memoized, whether patch i's change is in commit idx's
// tree: it reverse-applies there, or its added lines are there.
func (c *checker) predicate(i, idx int, kind string) (bool, error) {
	k := predKey{i, idx, kind}
	if v, ok := c.pred[k]; ok {
		return v, nil
	}
	src, err := c.cache.Source(c.h.commits[idx].id)
	if err != nil {
		return false, err
	}
	var v bool
	switch kind {
	case predReverse:
		r := apply.New(src, apply.WithReverse(), noWS).Apply(c.patches[i])
		if r.Err != nil {
			return false, r.Err
		}
		v = r.Status == apply.StatusApplied
	default:
		lm, err := c.addedLines(i, src)
		if err != nil {
			return false, err
		}
		v = supersedes(lm)
	}
	c.pred[k] = v
	return v, nil
}

// result adds the commit evidence of ref to a verdict.
func (c *checker) result(ref Ref, i int, v verdict, hit *commit) (Result, error) {
	r := Result{
		Ref: ref.Name, Status: v.status, Via: v.via,
		Offsets: v.offsets, Hunks: v.hunks, AddedLines: v.lines, Conflict: v.conflict,
	}
	var cm *commit
	var err error
	switch v.status {
	case StatusPresent:
		cm = hit
		if cm == nil {
			cm, err = c.introducer(i, ref, predReverse)
		}
		if cm == nil && err == nil {
			if files, ferr := c.addedFiles(i); ferr != nil {
				err = ferr
			} else if len(files) > 0 {
				cm, err = c.introducer(i, ref, predLines)
			}
		}
	case StatusSuperseded:
		cm, err = c.introducer(i, ref, predLines)
	}
	if err != nil {
		return Result{}, err
	}
	if cm != nil {
		r.Commit, r.Subject = cm.id, cm.subject
	}
	r.Evidence = evidence(r, hit != nil)
	return r, nil
}

// Short abbreviates a commit id for messages.
func Short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func commitPhrase(r Result) string {
	if r.Commit == "" {
		return ""
	}
	if r.Subject == "" {
		return "upstream commit " + Short(r.Commit)
	}
	return fmt.Sprintf("upstream commit %s (%q)", Short(r.Commit), r.Subject)
}

// evidence says in one sentence why r has its status.
func evidence(r Result, patchID bool) string {
	cp := commitPhrase(r)
	switch r.Status {
	case StatusPresent:
		switch r.Via {
		case ViaPatchID:
			return fmt.Sprintf("%s has the same patch-id; the patch does not reverse-apply (upstream's context differs)", cp)
		case ViaHunks:
			s := "every hunk reverse-applies on its own"
			if cp != "" {
				s += "; " + cp + " brought the change"
			}
			return s
		default:
			s := "the patch reverse-applies cleanly"
			switch {
			case patchID:
				s += "; " + cp + " has the same patch-id"
			case cp != "":
				s += "; " + cp + " brought the change"
			}
			return s
		}
	case StatusApplies:
		if moved := offsetList(r.Offsets); moved != "" {
			return "applies with offsets: " + moved
		}
		return "applies cleanly"
	case StatusPartial:
		var pres, app []string
		for _, h := range r.Hunks {
			d := hunkName(h)
			if h.Status == StatusPresent {
				pres = append(pres, d)
			} else {
				app = append(app, d)
			}
		}
		return fmt.Sprintf("hunks already upstream: %s; hunks that still apply: %s", strings.Join(pres, ", "), strings.Join(app, ", "))
	case StatusSuperseded:
		s := fmt.Sprintf("applies in neither direction, but %d of its %d added lines are upstream", r.AddedLines.Present, r.AddedLines.Total)
		if cp != "" {
			s += "; " + cp + " introduced them"
		}
		return s
	case StatusConflict:
		s := "does not apply"
		if r.Conflict != nil {
			s = r.Conflict.Message
			if r.Conflict.Line > 0 {
				s += fmt.Sprintf(" (patch line %d)", r.Conflict.Line)
			}
		}
		var pres []string
		for _, h := range r.Hunks {
			if h.Status == StatusPresent {
				pres = append(pres, hunkName(h))
			}
		}
		if len(pres) > 0 {
			s += "; already upstream: " + strings.Join(pres, ", ")
		}
		if r.AddedLines != nil && r.AddedLines.Present > 0 {
			s += fmt.Sprintf("; %d of its %d added lines are upstream", r.AddedLines.Present, r.AddedLines.Total)
		}
		return s
	}
	return ""
}

func hunkName(h Hunk) string {
	if h.Hunk == "" {
		return fmt.Sprintf("%s (line %d)", h.Path, h.Line)
	}
	return fmt.Sprintf("%s %s (line %d)", h.Path, hunkRange(h.Hunk), h.Line)
}

// hunkRange keeps "@@ -a,b +c,d @@" of a hunk header.
func hunkRange(h string) string {
	if len(h) > 2 {
		if i := strings.Index(h[2:], "@@"); i >= 0 {
			return h[:i+4]
		}
	}
	return h
}

func offsetList(hs []apply.HunkResult) string {
	var moved []string
	for _, h := range hs {
		if h.Offset != 0 {
			moved = append(moved, fmt.Sprintf("%s %s %+d", h.Path, hunkRange(h.Hunk), h.Offset))
		}
	}
	return strings.Join(moved, ", ")
}
