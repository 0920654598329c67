package obsolete

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/go-git/go-git/v5/plumbing/filemode"

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
	patches []*series.Patch
	h       *history
	pin     tree.Source // the upstream tree at the pin

	// touched are the paths the series names (and their -p1 variants);
	// parents are their leading directories. Both sorted.
	touched, parents []string
	// patchPaths are the paths of each patch, with variants.
	patchPaths []map[string]bool

	memo map[string][]verdict
	// perRef are the memo keys whose verdicts depend on the ref's history
	// too (a patch-id commit kept against a hunk that applies again, lines
	// read where upstream moved them: moves.go); their verdicts are memoized
	// per ref commit.
	perRef  map[string]bool
	units   map[int][]unit
	changed map[int][]changedFile
	pinText map[string]*lines
	pred    map[predKey]bool
	ustate  map[unitKey]unitAt
	// pinCommit is the pin's commit.
	pinCommit string
	// removed memoizes the deletions of the series' files (removed.go).
	removed map[removedKey]deletion
	// entries memoizes entryAt.
	entries map[removedKey]string
	// ctx and git run the few git questions asked per ref (removed.go,
	// moves.go).
	ctx context.Context
	git gitRunner

	// For moves.go: the diffs of movers, where lines of a path moved as
	// of a commit, unitMoved's answers, and whether this ref's evaluation
	// read lines where they moved.
	diffs     map[string]*commitDiff
	moved     map[string]map[string]map[string]bool
	moves     map[moveKey]bool
	revert    map[int]bool
	movesUsed bool
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
	// problems are, per hunk in conflict, why it does not apply (nil for
	// the others).
	problems []*apply.Problem
}

var noWS = apply.WithoutWhitespaceCheck()

func newChecker(ctx context.Context, g gitRunner, in Input, refs []Ref, h *history) (*checker, error) {
	pin, err := in.Cache.Source(in.PinCommit)
	if err != nil {
		return nil, err
	}
	c := &checker{
		cache:   in.Cache,
		patches: in.Patches,
		h:       h,
		pin:     pin,
		memo:    map[string][]verdict{},
		perRef:  map[string]bool{},
		units:   map[int][]unit{},
		changed: map[int][]changedFile{},
		pinText: map[string]*lines{},
		pred:    map[predKey]bool{},
		ustate:  map[unitKey]unitAt{},

		pinCommit: in.PinCommit,
		removed:   map[removedKey]deletion{},
		entries:   map[removedKey]string{},
		ctx:       ctx,
		git:       g,
		diffs:     map[string]*commitDiff{},
		moved:     map[string]map[string]map[string]bool{},
		moves:     map[moveKey]bool{},
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
	snap, err := c.cache.Source(ref.Commit)
	if err != nil {
		return nil, err
	}
	fp, err := c.fingerprint(snap)
	if err != nil {
		return nil, err
	}
	key.WriteString(fp)
	k := key.String()
	if c.perRef[k] {
		k += "\x00" + ref.Commit
	}
	vs, ok := c.memo[k]
	if !ok {
		var dep bool
		vs, dep, err = c.evaluate(ref, snap, hits)
		if err != nil {
			return nil, err
		}
		if dep {
			c.perRef[k] = true
			k += "\x00" + ref.Commit
		}
		c.memo[k] = vs
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

// fingerprint hashes every tree entry of snap that the series can look
// at: each touched path (mode and object id, or absent), and each of their
// leading directories (a directory, or what else is there). The snapshots
// of one cache share the trees they read, so a ref costs the trees that
// differ from the refs before it.
func (c *checker) fingerprint(snap *upstream.Snapshot) (string, error) {
	h := sha256.New()
	entry := func(p string, dirOnly bool) error {
		e, ok, err := snap.Entry(p)
		switch {
		case err != nil:
			return fmt.Errorf("reading %s at %s: %w", p, snap.Commit(), err)
		case !ok:
			fmt.Fprintf(h, "%s\x00-\n", p)
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

// evaluate tests the series on snap, ref's tree, the way git would: each
// patch on the ref's tree with the earlier still-needed patches applied
// (those that apply, and the applying hunks of partial ones, unless a
// patch-id commit decides the patch: idHolds). dep reports whether the
// verdicts depend on ref's history beyond the tree's entries that the
// fingerprint covers.
func (c *checker) evaluate(ref Ref, snap *upstream.Snapshot, hits []*commit) (out []verdict, dep bool, err error) {
	state := apply.New(snap, noWS)
	out = make([]verdict, len(c.patches))
	c.movesUsed = false
	for i := range c.patches {
		var keep func([]Hunk) (bool, error)
		if hit := hits[i]; hit != nil {
			keep = func(hs []Hunk) (bool, error) {
				dep = true
				return c.idHolds(i, ref, hit, hs, snap)
			}
		}
		v, err := c.verdict(state, snap, i, hits[i] != nil, keep)
		if err != nil {
			return nil, false, err
		}
		out[i] = v
	}
	return out, dep || c.movesUsed, nil
}

// verdict decides one patch on state, in this order: reverse-applies
// (present); applies (applied to state); hunk by hunk, each hunk present
// (reverse-applies, or its lines are there), applying or in conflict: every
// hunk present is present (with a patch-id commit, or every hunk
// reverse-applying) or carried (the commit that landed it decides present or
// superseded, see result), some present is partial (the applying hunks
// applied to state); then the share of changed lines upstream (superseded);
// else conflict.
func (c *checker) verdict(state *apply.Applier, snap *upstream.Snapshot, i int, patchID bool, keep func([]Hunk) (bool, error)) (verdict, error) {
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
	hunks, kind, offsets, problems, err := c.byHunks(state, i, keep)
	if err != nil {
		return verdict{}, err
	}
	v := verdict{hunks: hunks, offsets: offsets, problems: problems}
	if len(fwd.Errors) > 0 {
		pr := fwd.Errors[0]
		v.conflict = &pr
	}
	switch kind {
	case StatusPresent:
		v.status, v.offsets = StatusPresent, nil
		switch {
		case patchID:
			v.via = ViaPatchID
		case countHunks(hunks, StatusPresent, ViaLines) == 0:
			v.via = ViaHunks
		default:
			// present or superseded: the commit that landed it decides.
			v.via = ViaCarried
		}
		return v, nil
	case StatusPartial:
		v.status, v.via = StatusPartial, ViaHunks
		return v, nil
	}
	v.offsets = nil
	lm, err := c.lineShare(i, snap, snap.Commit())
	if err != nil {
		return verdict{}, err
	}
	if supersedes(lm) {
		v.status, v.via, v.lines = StatusSuperseded, ViaAddedLines, &lm
		return v, nil
	}
	v.status, v.via = StatusConflict, ViaApply
	if lm.Present > 0 {
		v.lines = &lm
	}
	return v, nil
}

// countHunks counts the hunks with status and, when via is not "", via.
func countHunks(hs []Hunk, status, via string) int {
	n := 0
	for _, h := range hs {
		if h.Status == status && (via == "" || h.Via == via) {
			n++
		}
	}
	return n
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

// unitsOf returns patch i's units, memoized; nil when it cannot be split.
func (c *checker) unitsOf(i int) []unit {
	us, ok := c.units[i]
	if !ok {
		us = splitUnits(c.patches[i])
		c.units[i] = us
	}
	return us
}

// byHunks tests each unit of patch i on its own, in order, on a scratch state
// over state: present if it reverse-applies or its lines are there (see
// carried.go), else applied if it applies, else in conflict. When every unit
// is present, the patch is present; when some are and the others are not,
// it is partial, and its applying units are applied to state too, unless
// keep (when not nil) says a commit with the patch's patch-id still decides
// it (then it is present, and nothing of it is applied).
func (c *checker) byHunks(state *apply.Applier, i int, keep func([]Hunk) (bool, error)) ([]Hunk, string, []apply.HunkResult, []*apply.Problem, error) {
	us := c.unitsOf(i)
	if us == nil {
		return nil, "", nil, nil, nil
	}
	scratch := apply.New(state, noWS)
	hunks := make([]Hunk, 0, len(us))
	problems := make([]*apply.Problem, len(us))
	var applying []int
	present := 0
	nth := map[string]int{}
	for k, u := range us {
		h := Hunk{Path: u.path, Hunk: u.hunk, Line: u.line}
		nth[u.path]++
		via, err := c.unitThere(u, scratch)
		if err != nil {
			return nil, "", nil, nil, err
		}
		if via != "" {
			h.Status, h.Via = StatusPresent, via
			present++
			hunks = append(hunks, h)
			continue
		}
		f := scratch.Apply(u.patch)
		if f.Err != nil {
			return nil, "", nil, nil, f.Err
		}
		if f.Status == apply.StatusApplied {
			h.Status = StatusApplies
			if len(f.Hunks) > 0 {
				h.Offset = f.Hunks[0].Offset
			}
			applying = append(applying, k)
		} else {
			h.Status = StatusConflict
			if len(f.Errors) > 0 {
				problems[k] = unitProblem(f.Errors[0], u, nth[u.path])
			}
		}
		hunks = append(hunks, h)
	}
	switch {
	case present == 0:
		// Nothing is there; each hunk may apply alone but not the patch
		// whole: a conflict.
		return hunks, "", nil, problems, nil
	case present == len(us):
		return hunks, StatusPresent, nil, problems, nil
	}
	if keep != nil && len(applying) > 0 {
		ok, err := keep(hunks)
		if err != nil {
			return nil, "", nil, nil, err
		}
		if ok {
			return hunks, StatusPartial, nil, problems, nil
		}
	}
	var offsets []apply.HunkResult
	for _, k := range applying {
		r := state.Apply(us[k].patch)
		if r.Err != nil {
			return nil, "", nil, nil, fmt.Errorf("%s: applying the hunk at line %d: %w", c.patches[i].Path, us[k].line, r.Err)
		}
		if r.Status != apply.StatusApplied {
			return nil, "", nil, nil, fmt.Errorf("%s: hunk at line %d applied on its own but not after the others", c.patches[i].Path, us[k].line)
		}
		offsets = append(offsets, r.Hunks...)
	}
	return hunks, StatusPartial, offsets, problems, nil
}

// unitProblem turns the problem of unit u, tested alone, into the problem of
// its hunk in the whole patch: the hunk's line in the patch file, and its
// number among its file's hunks (nth).
func unitProblem(pr apply.Problem, u unit, nth int) *apply.Problem {
	if u.hunk != "" {
		pr.Line = u.line
		if rest, ok := strings.CutPrefix(pr.Message, "hunk #1 "); ok {
			pr.Message = fmt.Sprintf("hunk #%d %s", nth, rest)
		}
	}
	return &pr
}

// unitThere says how unit u's change is in src: ViaReverseApply when it
// reverse-applies; ViaLines when it does not apply forward and its lines are
// there in its own context; "" when it is not there.
func (c *checker) unitThere(u unit, src tree.Source) (string, error) {
	r := apply.New(src, apply.WithReverse(), noWS).Apply(u.patch)
	if r.Err != nil {
		return "", r.Err
	}
	if r.Status == apply.StatusApplied {
		return ViaReverseApply, nil
	}
	f := apply.New(src, noWS).Apply(u.patch)
	if f.Err != nil {
		return "", f.Err
	}
	if f.Status == apply.StatusApplied {
		return "", nil
	}
	ok, err := c.unitLines(u, src)
	if err != nil || !ok {
		return "", err
	}
	return ViaLines, nil
}

// unitLines reports whether every hunk of unit u (a text modification, or a
// new file) is carried by its file in src; see carried.go.
func (c *checker) unitLines(u unit, src tree.Source) (bool, error) {
	if len(u.patch.Files) != 1 {
		return false, nil
	}
	f := u.patch.Files[0]
	if f.IsDelete || f.IsBinary || f.IsRename || f.IsCopy || len(f.TextFragments) == 0 {
		return false, nil
	}
	cur, err := readLines(src, variants(f.NewName))
	if err != nil || cur == nil {
		return false, err
	}
	var pin *lines
	if !f.IsNew {
		if pin, err = c.pinFile(f); err != nil {
			return false, err
		}
	}
	for _, tf := range f.TextFragments {
		if !hunkCarried(tf, cur, pin) {
			return false, nil
		}
	}
	return true, nil
}

// pinFile returns the lines of f's file at the pin, memoized; nil when the
// pin lacks it.
func (c *checker) pinFile(f *gitdiff.File) (*lines, error) {
	names := variants(f.OldName)
	if len(names) == 0 {
		names = variants(f.NewName)
	}
	key := strings.Join(names, "\x00")
	if l, ok := c.pinText[key]; ok {
		return l, nil
	}
	l, err := readLines(c.pin, names)
	if err != nil {
		return nil, err
	}
	c.pinText[key] = l
	return l, nil
}
