package obsolete

import (
	"context"
	"errors"
	"fmt"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/upstream"
)

// The statuses of a patch at a ref.
const (
	// StatusApplies: the ref still needs the patch, and it applies.
	StatusApplies = "applies"
	// StatusPresent: the change is in the ref: the patch reverse-applies
	// cleanly; or a commit of the ref (and not of the pin) has its patch-id
	// and no hunk was reverted since; or every hunk is carried (landed
	// verbatim, and at most edited around since).
	StatusPresent = "present"
	// StatusPartial: some hunks are in the ref, and the others are not
	// (they apply, or conflict where the commits that landed the others
	// left the code alone).
	StatusPartial = "partial"
	// StatusSuperseded: the patch applies in neither direction, but upstream
	// landed its own version: every hunk's change is there (see carried.go);
	// or some hunks are and the commits that landed them rewrote the regions
	// of the others (see landing.go); or at least SupersededShare of the
	// patch's significant changed lines are (added lines there, removed
	// lines gone).
	StatusSuperseded = "superseded"
	// StatusConflict: the patch applies in neither direction and upstream did
	// not land it: it needs a refresh, or (Result.TargetRemoved) upstream
	// deleted every file it modifies.
	StatusConflict = "conflict"
)

// How a status was found (Result.Via).
const (
	ViaApply        = "apply"         // the patch applies forward
	ViaReverseApply = "reverse-apply" // the patch reverse-applies cleanly
	ViaPatchID      = "patch-id"      // an upstream commit has the patch's patch-id
	ViaHunks        = "hunks"         // hunk by hunk
	ViaAddedLines   = "added-lines"   // the patch's changed lines are upstream (SupersededShare)
	// ViaCarried: every hunk's change is there, some only by their lines,
	// and the commit that landed it is in the ref.
	ViaCarried = "carried"
	// ViaLines (a hunk's Via): the hunk's lines are there in its own context,
	// though it does not reverse-apply.
	ViaLines = "lines"
)

// SupersededShare is the share of a patch's significant changed lines that
// must be upstream in a ref for the patch to count as superseded there: two
// thirds.
const SupersededShare = 2.0 / 3.0

// The kinds of a scanned ref.
const (
	KindTag    = "tag"
	KindBranch = "branch"
	KindCommit = "commit"
)

// Ref is one scanned upstream ref.
type Ref struct {
	// Name is the tag or branch name, or the ref as --refs gave it.
	Name string `json:"ref"`
	// Kind is tag, branch or commit.
	Kind string `json:"kind"`
	// Commit is the commit the ref resolves to.
	Commit string `json:"commit"`
	// NonSemver marks a release tag that is not a semantic version: it is
	// ordered by commit date, after the semantic versions.
	NonSemver bool `json:"nonSemver,omitempty"`
}

// IsRelease reports whether r is a release, one that obsoletedBy may name:
// a tag.
func (r Ref) IsRelease() bool { return r.Kind == KindTag }

// Hunk is the verdict on one hunk (or whole file diff) of a patch.
type Hunk struct {
	Path string `json:"path"`
	// Hunk is its "@@ -a,b +c,d @@" line, "" for a whole file diff.
	Hunk string `json:"hunk,omitempty"`
	// Line is its line in the patch file.
	Line int `json:"line"`
	// Status is present, applies or conflict; superseded when the hunk is
	// not upstream and a commit that landed the patch's other hunks rewrote
	// its region.
	Status string `json:"status"`
	// Via says how a present hunk was found: reverse-apply, lines, or
	// landed (a commit of the ref landed it and upstream edited the lines
	// around it since); for a hunk in conflict, removed when upstream
	// deleted its file (removed.go).
	Via string `json:"via,omitempty"`
	// Offset is where it applied, for status applies.
	Offset int `json:"offset,omitempty"`
	// Commit is the upstream commit that carries it (present), or that
	// rewrote its region its own way (superseded).
	Commit string `json:"commit,omitempty"`
}

// LineMatch counts a patch's significant changed lines and how many of them
// are upstream in a ref. Significant added lines are non-blank and not in
// their file at the pin; they are upstream when the ref's file has them.
// Significant removed lines are non-blank lines the patch removes every copy
// of from their file; they are upstream (gone) when the ref's file lacks them
// while it still has a context line next to them.
type LineMatch struct {
	// Present and Total count added and removed lines together.
	Present int `json:"present"`
	Total   int `json:"total"`
	// Removed and Gone are the removed lines among Total, and how many of
	// them are gone.
	Removed int `json:"removed,omitempty"`
	Gone    int `json:"gone,omitempty"`
}

// Result is the status of one patch at one ref, with its evidence.
type Result struct {
	Ref    string
	Status string
	// Via says how the status was found.
	Via string
	// Commit is the upstream commit that carries the change, for present and
	// superseded: the commit with the patch's patch-id, else the first commit
	// of the range (oldest first) after which the change is there. "" when
	// unknown or not applicable.
	Commit string
	// Subject is the subject of Commit.
	Subject string
	// Commits are the upstream commits that carry the change, or some of
	// its hunks, with which hunks each carries: for every status where any
	// of the change is upstream. Commit is the first of them.
	Commits []Carrier
	// Evidence says in one sentence why.
	Evidence string
	// Offsets are where each hunk applied (applies, and the applying hunks of
	// partial).
	Offsets []apply.HunkResult
	// Hunks are the verdicts hunk by hunk, when the patch was tested so.
	Hunks []Hunk
	// AddedLines is the added-lines evidence (superseded, and conflict).
	AddedLines *LineMatch
	// Conflict is the first hunk that fails (conflict).
	Conflict *apply.Problem
	// Bump is the version verdict of a dependency-bump patch, or of the
	// bump part of a mixed patch (bump.go); Code is the line verdict of a
	// mixed patch's code part.
	Bump *BumpPart
	Code *CodePart
	// Removed names the files the patch modifies that upstream deleted (not
	// renamed), with the commit after which they were gone (removed.go):
	// every one of them (TargetRemoved), or some, whose hunks' Via is
	// ViaRemoved. nil when none is.
	Removed *Removed
}

// Finding reports whether the result is a finding: anything but applies.
func (r Result) Finding() bool { return r.Status != StatusApplies }

// PatchReport is the verdict on one patch over the scanned refs.
type PatchReport struct {
	// Patch is the patch, as loaded.
	Patch *series.Patch
	// File is the patch file (series.Patch.Path).
	File string
	// ObsoletedBy is the first scanned final release (a tag that is not a
	// prerelease, see IsPrerelease) whose status is present or superseded, ""
	// if none.
	ObsoletedBy string
	// ObsoletedByPrerelease is the first prerelease (v1.34.0-rc.1) that
	// carried the change before ObsoletedBy, or before the patch was needed
	// again; "" if none did.
	ObsoletedByPrerelease string
	// Commit is the commit that obsoleted it: the result's Commit, else the
	// release's commit.
	Commit string
	// NeededAgainAt is the first release after the first one that carried
	// the change where the patch is needed again (applies, partial or
	// conflict): upstream reverted it.
	NeededAgainAt string
	// Results has one entry per scanned ref, in scan order.
	Results []Result
}

// Obsoleting returns the result at ObsoletedBy, or nil.
func (p *PatchReport) Obsoleting() *Result {
	if p.ObsoletedBy == "" {
		return nil
	}
	for i := range p.Results {
		if p.Results[i].Ref == p.ObsoletedBy {
			return &p.Results[i]
		}
	}
	return nil
}

// Report is the verdict on one image's series.
type Report struct {
	// URL is the upstream URL, credentials redacted.
	URL string
	// Pin is the pinned ref (upstream.ref) and PinCommit its commit.
	Pin       string
	PinCommit string
	// Refs are the scanned refs, in scan order.
	Refs []Ref
	// Skipped are the release tags matching upstream.releases that were not
	// scanned, with why, in name order.
	Skipped []Skipped
	// Patches has one entry per patch, in series order.
	Patches []PatchReport
}

// Skipped is a release tag that matches upstream.releases and was not
// scanned.
type Skipped struct {
	Ref    string `json:"ref"`
	Reason string `json:"reason"`
}

// Findings reports whether any patch is not simply applying at some ref.
func (r *Report) Findings() bool {
	for _, p := range r.Patches {
		for _, res := range p.Results {
			if res.Finding() {
				return true
			}
		}
	}
	return false
}

// Input is what Check scans.
type Input struct {
	// Cache is the upstream cache, already refreshed as the caller wants.
	Cache *upstream.Cache
	// Spec gives the pin (upstream.ref), the releases glob and the branches,
	// and names the file in errors.
	Spec *spec.Spec
	// PinCommit is upstream.ref resolved.
	PinCommit string
	// Patches is the series, in order.
	Patches []*series.Patch
	// Refs, when not empty, are scanned instead of the releases and branches,
	// in the order given.
	Refs []string
}

type options struct {
	git       string
	evaluated func(Ref) // a test seam: called for each ref evaluated, not memoised
	work      *historyWork
}

// Option configures Check.
type Option func(*options)

// withGit names the git executable; a test seam.
func withGit(path string) Option { return func(o *options) { o.git = path } }

// Check scans the refs (see SelectRefs) and returns every patch's status at
// each, with its evidence. Bad patches (that would write outside the tree,
// or that are inconsistent) are a *diag.InputError.
func Check(ctx context.Context, in Input, opts ...Option) (*Report, error) {
	o := options{git: "git"}
	for _, opt := range opts {
		opt(&o)
	}
	if in.Cache == nil || in.Spec == nil {
		return nil, errors.New("obsolete.Check: Cache and Spec are required")
	}
	if in.PinCommit == "" {
		return nil, errors.New("obsolete.Check: PinCommit is required")
	}
	g := gitRunner{bin: o.git, gitDir: in.Cache.Path(), cache: in.Cache, work: o.work, ident: new(gitIdent)}
	refs, skipped, h, err := selectRefs(ctx, g, in)
	if err != nil {
		return nil, err
	}
	// Dependency-bump patches are judged by version (bump.go); the line
	// rules see the series without their bump parts.
	bumps := newBumpSeries(in.Patches)
	lineIn := in
	lineIn.Patches = bumps.linePatches(in.Patches)
	checkerOf := lazyChecker(ctx, g, lineIn, refs, h)
	eval := func(ref Ref) ([]Result, error) {
		c, err := checkerOf()
		if err != nil {
			return nil, err
		}
		if o.evaluated != nil {
			o.evaluated(ref)
		}
		return c.checkRef(ref)
	}
	vm := newVerdictMemo(g, in)
	rep := &Report{
		URL:       in.Cache.URL(),
		Pin:       in.Spec.Upstream.Ref,
		PinCommit: in.PinCommit,
		Refs:      refs,
		Skipped:   skipped,
		Patches:   make([]PatchReport, len(in.Patches)),
	}
	for i, p := range in.Patches {
		rep.Patches[i] = PatchReport{Patch: p, File: p.Path, Results: make([]Result, 0, len(refs))}
	}
	for _, ref := range refs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		results, err := vm.results(ref, len(in.Patches), eval)
		if err != nil {
			return nil, fmt.Errorf("checking %s: %w", ref.Name, err)
		}
		if bumps.any() {
			c, err := checkerOf()
			if err != nil {
				return nil, err
			}
			if err := bumps.judge(ctx, g, c, in, refs, ref, results); err != nil {
				return nil, fmt.Errorf("checking %s: %w", ref.Name, err)
			}
		}
		for i := range results {
			rep.Patches[i].Results = append(rep.Patches[i].Results, results[i])
		}
	}
	vm.flush()
	isPre := func(tag string) bool {
		return IsPrerelease(tag, in.Spec.Upstream.Releases, in.Spec.Upstream.Ref)
	}
	for i := range rep.Patches {
		settle(&rep.Patches[i], refs, isPre)
	}
	return rep, nil
}

// settle fills ObsoletedBy, ObsoletedByPrerelease, Commit and NeededAgainAt
// from the results: the first release carrying the change starts the run;
// a prerelease is noted and the run goes on to the first final release;
// the first release after the start that needs the patch again ends it.
func settle(p *PatchReport, refs []Ref, isPrerelease func(string) bool) {
	started := false
	for k, ref := range refs {
		if !ref.IsRelease() {
			continue
		}
		r := p.Results[k]
		carried := r.Status == StatusPresent || r.Status == StatusSuperseded
		if !carried {
			if started {
				p.NeededAgainAt = ref.Name
				return
			}
			continue
		}
		started = true
		if isPrerelease(ref.Name) {
			if p.ObsoletedBy == "" && p.ObsoletedByPrerelease == "" {
				p.ObsoletedByPrerelease = ref.Name
			}
			continue
		}
		if p.ObsoletedBy == "" {
			p.ObsoletedBy = ref.Name
			p.Commit = r.Commit
			if p.Commit == "" {
				p.Commit = ref.Commit
			}
		}
	}
}
