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
	// cleanly, or a commit of the ref (and not of the pin) has its patch-id.
	StatusPresent = "present"
	// StatusPartial: some hunks are in the ref, and the others still apply.
	StatusPartial = "partial"
	// StatusSuperseded: the patch applies in neither direction, but upstream
	// landed its own version: at least SupersededShare of the patch's
	// non-blank added lines (those its files at the pin lack) are in the
	// ref's version of its files.
	StatusSuperseded = "superseded"
	// StatusConflict: the patch applies in neither direction and upstream did
	// not land it: it needs a refresh.
	StatusConflict = "conflict"
)

// How a status was found (Result.Via).
const (
	ViaApply        = "apply"         // the patch applies forward
	ViaReverseApply = "reverse-apply" // the patch reverse-applies cleanly
	ViaPatchID      = "patch-id"      // an upstream commit has the patch's patch-id
	ViaHunks        = "hunks"         // hunk by hunk
	ViaAddedLines   = "added-lines"   // the patch's added lines are upstream
)

// SupersededShare is the share of a patch's significant added lines that must
// be in a ref for the patch to count as superseded there: two thirds.
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
	// Status is present, applies or conflict.
	Status string `json:"status"`
	// Offset is where it applied, for status applies.
	Offset int `json:"offset,omitempty"`
}

// LineMatch counts a patch's significant added lines (non-blank, and not in
// its files at the pin) and how many of them a ref has.
type LineMatch struct {
	Present int `json:"present"`
	Total   int `json:"total"`
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
}

// Finding reports whether the result is a finding: anything but applies.
func (r Result) Finding() bool { return r.Status != StatusApplies }

// PatchReport is the verdict on one patch over the scanned refs.
type PatchReport struct {
	// Patch is the patch, as loaded.
	Patch *series.Patch
	// File is the patch file (series.Patch.Path).
	File string
	// ObsoletedBy is the first scanned release whose status is present or
	// superseded, "" if none.
	ObsoletedBy string
	// Commit is the commit that obsoleted it: the result's Commit, else the
	// release's commit.
	Commit string
	// NeededAgainAt is the first release after ObsoletedBy where the patch
	// is needed again (applies, partial or conflict): upstream reverted it.
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
	// Patches has one entry per patch, in series order.
	Patches []PatchReport
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
	git string
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
	g := gitRunner{bin: o.git, gitDir: in.Cache.Path(), cache: in.Cache}
	refs, h, err := selectRefs(ctx, g, in)
	if err != nil {
		return nil, err
	}
	c, err := newChecker(ctx, g, in, refs, h)
	if err != nil {
		return nil, err
	}
	rep := &Report{
		URL:       in.Cache.URL(),
		Pin:       in.Spec.Upstream.Ref,
		PinCommit: in.PinCommit,
		Refs:      refs,
		Patches:   make([]PatchReport, len(in.Patches)),
	}
	for i, p := range in.Patches {
		rep.Patches[i] = PatchReport{Patch: p, File: p.Path, Results: make([]Result, 0, len(refs))}
	}
	for _, ref := range refs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		results, err := c.checkRef(ref)
		if err != nil {
			return nil, fmt.Errorf("checking %s: %w", ref.Name, err)
		}
		for i := range results {
			rep.Patches[i].Results = append(rep.Patches[i].Results, results[i])
		}
	}
	for i := range rep.Patches {
		settle(&rep.Patches[i], refs)
	}
	return rep, nil
}

// settle fills ObsoletedBy, Commit and NeededAgainAt from the results.
func settle(p *PatchReport, refs []Ref) {
	for k, ref := range refs {
		if !ref.IsRelease() {
			continue
		}
		r := p.Results[k]
		if p.ObsoletedBy == "" {
			if r.Status == StatusPresent || r.Status == StatusSuperseded {
				p.ObsoletedBy = ref.Name
				p.Commit = r.Commit
				if p.Commit == "" {
					p.Commit = ref.Commit
				}
			}
			continue
		}
		if r.Status == StatusApplies || r.Status == StatusPartial || r.Status == StatusConflict {
			p.NeededAgainAt = ref.Name
			return
		}
	}
}
