package obsolete

// Dependency-bump patches, judged by version (issue 26).
//
// A patch whose hunks only change version lines (go.mod require lines, the
// go and toolchain directives, go.sum, vendor/modules.txt; see package
// gomod) is judged by what it means: at each ref, does upstream's go.mod
// require every module the patch raises at the patch's version or higher,
// in Go's module version order (after upstream's replace directives)? The
// line rules never see those patches' lines as "there" once upstream raised
// the same modules further, and a later, higher upstream version must never
// make the patch "needed again".
//
//   - present: every raised module is covered; Commit is the range commit
//     that raised the last of them (the commit, among those touching the
//     go.mod, after which that module stayed covered);
//   - partial: some are covered; the evidence names those that remain, with
//     the patch's and upstream's versions;
//   - otherwise the line verdict (applies, or conflict) stands, with the
//     remaining modules named.
//
// A line that holds a module down (gomod.Want.Hold: it lowers the version
// its line had, or sets one below what the pin requires, as a distribution
// does to keep a dependency that breaks it out) is judged the other way:
// upstream going higher is what it protects against, so it is covered only
// where upstream requires the module at the held version or lower, or no
// longer requires it. A patch that raises some modules and holds others is
// judged per module: partial while a hold is not covered. A replace by
// another module (a fork) or by a directory is code, judged by lines.
//
// A patch that mixes bump hunks with code hunks is judged in two parts: the
// line rules test its code part in the series (see bumpSeries.linePatches),
// the versions decide its bump part, and the result carries both (Result.Code,
// Result.Bump) with a status that combines them.

import (
	"context"
	"fmt"
	"strings"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/gomod"
	"github.com/patchkit/patchkit/internal/series"
)

// ViaVersions: a bump patch (or part) judged by the versions its go.mod
// requires.
const ViaVersions = "versions"

// BumpPart is the version verdict on a patch's bump hunks.
type BumpPart struct {
	// Status is present, partial, applies or conflict.
	Status string `json:"status"`
	// Commit is, for present, the upstream commit that raised the last of
	// the modules.
	Commit string `json:"commit,omitempty"`
	// Subject is Commit's subject.
	Subject string `json:"subject,omitempty"`
	// Modules are the raised requirements, each with what upstream requires.
	Modules []ModuleVerdict `json:"modules"`
}

// ModuleVerdict is one raised requirement at a ref.
type ModuleVerdict struct {
	gomod.Coverage
	// Commit is the upstream commit that raised it to a covering version.
	Commit string `json:"commit,omitempty"`
}

// CodePart is the line verdict on the code hunks of a mixed patch.
type CodePart struct {
	Status   string `json:"status"`
	Via      string `json:"via"`
	Commit   string `json:"commit,omitempty"`
	Evidence string `json:"evidence"`
	Hunks    []Hunk `json:"hunks,omitempty"`
}

// bumpSeries holds the split of every patch of a series (nil for a patch the
// line rules judge whole) and what it read of upstream.
type bumpSeries struct {
	splits []*gomod.Split
	// oriented says the splits' holds were told by the pin (orient).
	oriented bool
	mods     map[string]*gomod.Mod // commit + "\x00" + path -> parsed go.mod (nil: missing)
}

func newBumpSeries(ps []*series.Patch) *bumpSeries {
	b := &bumpSeries{splits: make([]*gomod.Split, len(ps)), mods: map[string]*gomod.Mod{}}
	for i, p := range ps {
		b.splits[i] = gomod.SplitPatch(p)
	}
	return b
}

// linePatches returns the series the line rules test: a mixed patch's code
// part in its place.
func (b *bumpSeries) linePatches(ps []*series.Patch) []*series.Patch {
	out := append([]*series.Patch(nil), ps...)
	for i, s := range b.splits {
		if s.IsMixed() {
			out[i] = s.Code
		}
	}
	return out
}

func (b *bumpSeries) any() bool {
	for _, s := range b.splits {
		if s != nil {
			return true
		}
	}
	return false
}

// judge turns the line results at ref of the bump patches into version
// verdicts.
func (b *bumpSeries) judge(ctx context.Context, g gitRunner, c *checker, in Input, refs []Ref, ref Ref, results []Result) error {
	if !b.any() {
		return nil
	}
	if err := b.orient(c, in); err != nil {
		return err
	}
	for i, s := range b.splits {
		if s == nil {
			continue
		}
		part, err := b.versions(c, s, ref)
		if err != nil {
			return fmt.Errorf("%s: %w", in.Patches[i].Path, err)
		}
		r := &results[i]
		lineEvidence := r.Evidence
		if s.IsMixed() {
			if err := b.mixed(c, s, ref, part, r); err != nil {
				return err
			}
			continue
		}
		switch part.Status {
		case StatusPresent, StatusPartial:
			*r = Result{Ref: r.Ref, Status: part.Status, Via: ViaVersions, Commit: part.Commit, Subject: part.Subject, Offsets: r.Offsets}
			if part.Status == StatusPresent {
				r.Offsets = nil
			}
		default:
			// The line verdict stands where no module is covered, but the
			// patch's lines are never "there" by lines alone.
			if r.Status != StatusApplies {
				*r = Result{Ref: r.Ref, Status: StatusConflict, Via: ViaApply, Conflict: r.Conflict, Hunks: r.Hunks}
				lineEvidence = evidence(*r, false)
			}
			part.Status = r.Status
		}
		r.Bump = part
		r.Evidence = bumpEvidence(part, lineEvidence)
	}
	return nil
}

// mixed combines the code part's line verdict (in r) with the bump part's.
func (b *bumpSeries) mixed(c *checker, s *gomod.Split, ref Ref, part *BumpPart, r *Result) error {
	code := &CodePart{Status: r.Status, Via: r.Via, Commit: r.Commit, Evidence: r.Evidence, Hunks: r.Hunks}
	if part.Status != StatusPresent && part.Status != StatusPartial {
		snap, err := c.cache.Source(ref.Commit)
		if err != nil {
			return err
		}
		ar := apply.New(snap, noWS).Apply(s.Bump)
		if ar.Err != nil {
			return ar.Err
		}
		part.Status = StatusConflict
		if ar.Status == apply.StatusApplied {
			part.Status = StatusApplies
		}
	}
	carried := func(st string) bool { return st == StatusPresent || st == StatusSuperseded }
	status := StatusConflict
	switch {
	case carried(code.Status) && part.Status == StatusPresent:
		status = code.Status
	case carried(code.Status) || part.Status == StatusPresent || code.Status == StatusPartial || part.Status == StatusPartial:
		status = StatusPartial
	case code.Status == StatusApplies && part.Status == StatusApplies:
		status = StatusApplies
	}
	// The commit after which both parts are there: the later of the two.
	commit, subject := r.Commit, r.Subject
	if part.Status == StatusPresent && (!carried(code.Status) || commit == "" || later(c.h, part.Commit, commit)) {
		commit, subject = part.Commit, part.Subject
	}
	*r = Result{
		Ref: r.Ref, Status: status, Via: ViaVersions, Commit: commit, Subject: subject,
		Offsets: r.Offsets, Conflict: r.Conflict, Code: code, Bump: part,
	}
	if status == StatusPresent {
		r.Offsets = nil
	}
	r.Evidence = fmt.Sprintf("code part: %s: %s; version part: %s: %s", code.Status, code.Evidence, part.Status, bumpEvidence(part, ""))
	return nil
}

// versions is the version verdict on s's wants at ref.
func (b *bumpSeries) versions(c *checker, s *gomod.Split, ref Ref) (*BumpPart, error) {
	part := &BumpPart{}
	covered := 0
	last := -1
	for _, w := range s.Wants {
		m, err := b.mod(c, ref.Commit, w.File)
		if err != nil {
			return nil, err
		}
		mv := ModuleVerdict{Coverage: m.Cover(w)}
		if mv.Covered {
			covered++
			idx, id, err := b.raisedBy(c, ref, w)
			if err != nil {
				return nil, err
			}
			mv.Commit = id
			if idx > last {
				last, part.Commit = idx, id
			}
		}
		part.Modules = append(part.Modules, mv)
	}
	switch {
	case covered == len(s.Wants):
		part.Status = StatusPresent
		if part.Commit == "" {
			part.Commit = ref.Commit
		}
		part.Subject = b.subjectOf(c, part.Commit)
	case covered > 0:
		part.Status = StatusPartial
	}
	return part, nil
}

// raisedBy finds the range commit that raised w to a covering version in
// ref: the non-merge commit after which the coverage turned true and stayed
// so, along ref's first parents and into the branches they merged
// (history.turnedOn): a merge that only combined the branches names none.
// (-1, "") when none did (the pin already covered it).
func (b *bumpSeries) raisedBy(c *checker, ref Ref, w gomod.Want) (int, string, error) {
	// The walk asks at every first parent: commits with the same go.mod
	// share its answer, and only a new go.mod is read.
	byBlob := map[string]bool{}
	covered := func(id string) (bool, error) {
		key, err := c.entryAt(id, w.File)
		if err != nil {
			return false, err
		}
		if v, ok := byBlob[key]; ok {
			return v, nil
		}
		m, err := b.mod(c, id, w.File)
		if err != nil {
			return false, err
		}
		v := m.Cover(w).Covered
		byBlob[key] = v
		return v, nil
	}
	base, err := covered(c.pinCommit)
	if err != nil {
		return 0, "", err
	}
	// Every first parent is asked: the go.mod of a mixed patch is no path
	// of the line series, whose commits the history knows.
	found, err := c.h.turnedOn(ref.Commit, base, func(i int) (bool, error) { return covered(c.h.commits[i].id) }, nil)
	if err != nil || found < 0 {
		return -1, "", err
	}
	return found, c.h.commits[found].id, nil
}

// mod reads and parses the go.mod at path in commit, memoized; nil when the
// commit lacks it.
func (b *bumpSeries) mod(c *checker, commit, path string) (*gomod.Mod, error) {
	key := commit + "\x00" + path
	if m, ok := b.mods[key]; ok {
		return m, nil
	}
	src, err := c.cache.Source(commit)
	if err != nil {
		return nil, err
	}
	f, ok, err := src.Read(path)
	if err != nil {
		return nil, err
	}
	var m *gomod.Mod
	if ok {
		if m, err = gomod.Parse(path+" at "+Short(commit), f.Data); err != nil {
			// Upstream's file, not the patch: nothing is covered there.
			m = &gomod.Mod{Err: err.Error()}
		}
	}
	b.mods[key] = m
	return m, nil
}

// orient tells, once, the holds of every split by the pin's go.mod files
// (gomod.Split.Orient): a line that sets a module below what the pin
// requires holds it down.
func (b *bumpSeries) orient(c *checker, in Input) error {
	if b.oriented {
		return nil
	}
	b.oriented = true
	pin, err := c.cache.Source(in.PinCommit)
	if err != nil {
		return err
	}
	for _, s := range b.splits {
		if err := s.Orient(pin); err != nil {
			return err
		}
	}
	return nil
}

// subjectOf is the subject of upstream commit id, from the range's history.
func (b *bumpSeries) subjectOf(c *checker, id string) string {
	if i, ok := c.h.index[id]; ok {
		return c.h.commits[i].subject
	}
	return ""
}

// bumpEvidence says in one sentence what the versions say; line is the line
// evidence of a patch no module of which is covered.
func bumpEvidence(part *BumpPart, line string) string {
	var done, left, held, unheld []string
	for _, m := range part.Modules {
		name := m.Path
		if m.File != "go.mod" {
			name = m.File + ": " + name
		}
		up := m.Upstream
		if up == "" {
			up = "none"
		}
		if m.Hold {
			s := fmt.Sprintf("holds %s at %s (upstream requires %s", name, m.Version, up)
			if m.Note != "" {
				s += "; " + m.Note
			}
			if m.Covered && m.Commit != "" {
				s += ", since " + Short(m.Commit)
			}
			if m.Covered {
				held = append(held, s+")")
			} else {
				unheld = append(unheld, s+")")
			}
			continue
		}
		if m.Covered {
			s := fmt.Sprintf("%s %s (upstream %s", name, m.Version, up)
			if m.Note != "" {
				s += ", " + m.Note
			}
			if m.Commit != "" {
				s += ", since " + Short(m.Commit)
			}
			done = append(done, s+")")
			continue
		}
		s := fmt.Sprintf("%s %s (upstream requires %s", name, m.Version, up)
		if m.Note != "" {
			s += "; " + m.Note
		}
		left = append(left, s+")")
	}
	// A hold upstream went past is still needed: say so first, it is why
	// the patch stays.
	still := ""
	if len(unheld) > 0 {
		still = "still needed, upstream does not hold it down: " + strings.Join(unheld, ", ")
	}
	if len(left) > 0 {
		if still != "" {
			still += "; "
		}
		still += "still to raise: " + strings.Join(left, ", ")
	}
	switch part.Status {
	case StatusPresent:
		var s string
		switch {
		case len(held) == 0:
			s = "upstream requires every raised module at the patch's version or higher: " + strings.Join(done, ", ")
		case len(done) == 0:
			s = "upstream keeps every held module at the held version or lower, or no longer requires it: " + strings.Join(held, ", ")
		default:
			s = "upstream requires every raised module at the patch's version or higher, and keeps every held one at the held version or lower: " +
				strings.Join(append(done, held...), ", ")
		}
		if part.Commit != "" {
			s += fmt.Sprintf("; upstream commit %s", Short(part.Commit))
			if part.Subject != "" {
				s += fmt.Sprintf(" (%q)", part.Subject)
			}
			if len(held) == 0 {
				s += " raised the last of them"
			} else {
				s += " covered the last of them"
			}
		}
		return s
	case StatusPartial:
		return "covered upstream: " + strings.Join(append(done, held...), ", ") + "; " + still
	}
	if line != "" {
		return line + "; " + still
	}
	return still
}

// later reports whether commit a comes after commit b in the range.
func later(h *history, a, b string) bool {
	ia, oka := h.index[a]
	ib, okb := h.index[b]
	return oka && (!okb || ia > ib)
}
