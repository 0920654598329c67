// Package apply applies a patch series to an in-memory tree, with the verdicts
// of `git apply --whitespace=error` (or, with ForTool, of the unit's tool: git
// am's whitespace warnings, GNU patch's fuzz), and writes nothing until the
// whole series has applied.
package apply

import (
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/tree"
)

// Status of one patch.
const (
	StatusApplied = "applied"
	StatusFailed  = "failed"
)

// Problem kinds.
const (
	KindConflict   = "conflict"   // a hunk's context or removed lines are not in the tree
	KindFuzz       = "fuzz"       // a hunk applies only with GNU patch's fuzz, which git apply does not have
	KindWhitespace = "whitespace" // an added line has a whitespace error
	KindMissing    = "missing"    // the patch changes a file the tree lacks
	KindExists     = "exists"     // the patch creates a file the tree has
	KindUnsafe     = "unsafe"     // the patch would write outside the tree, into .git, or through a symlink
	KindBinary     = "binary"     // a binary patch cannot be applied (no data, wrong preimage)
	KindCorrupt    = "corrupt"    // the patch itself is inconsistent
	KindRead       = "read"       // the tree could not be read (see PatchResult.Err)
)

// Problem is one reason a patch failed: the one model of a failed hunk.
// upgrade and forward report their conflicts as Problems too (upgrade.Conflict,
// with their own JSON spelling), and a region upgrade's three-way merge could
// not resolve is one of Kind upgrade.KindMerge, whose Line is the region's
// first line in the pin's file.
type Problem struct {
	Kind string `json:"kind"`
	// File is the patch file (series.Patch.Path) and Line the 1-based line in it.
	File string `json:"file"`
	Line int    `json:"line"`
	// Path is the tree path concerned.
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
	// Hunk is the hunk header ("@@ -10,7 +10,8 @@ func f()") for conflicts.
	Hunk string `json:"hunk,omitempty"`
	// Expected are the lines the hunk expected (context and removed lines) and
	// Actual the tree's lines at the nearest place that matched best (NearLine,
	// 1-based), so a reader sees what changed under the patch.
	Expected []string `json:"expected,omitempty"`
	Actual   []string `json:"actual,omitempty"`
	NearLine int      `json:"nearLine,omitempty"`
}

// HunkResult tells where a hunk applied.
type HunkResult struct {
	Path string `json:"path"`
	Hunk string `json:"hunk"`
	// Offset is the line offset from the position the hunk header gives; 0 at its place.
	Offset int `json:"offset"`
	// Fuzz is the fuzz GNU patch needed (apply.WithFuzz): context lines
	// ignored at each end; 0 for an exact match.
	Fuzz int `json:"fuzz,omitempty"`
}

// PatchResult is the verdict on one patch.
type PatchResult struct {
	Name   string       `json:"file"`
	Status string       `json:"status"`
	Errors []Problem    `json:"errors"`
	Hunks  []HunkResult `json:"hunks,omitempty"`
	// Warnings are whitespace errors under --whitespace=warn (git am's
	// default): reported, and the patch applied.
	Warnings []Problem `json:"warnings,omitempty"`
	// Err is set when the tree could not be read while checking the patch; it
	// wraps the source's error. The patch then failed for no fault of its own.
	Err error `json:"-"`
}

// Result is the verdict on a series.
type Result struct {
	OK      bool
	Patches []PatchResult
	// Changes is the overlay of the whole series on the base tree: path to new
	// file, nil for a deleted path. Meaningful only when OK.
	Changes map[string]*tree.File
	// Err is the first PatchResult.Err of the series, if any.
	Err error `json:"-"`
}

// Hostile returns bad input (a *diag.InputError naming the patch file and
// line, exit 2) for the first patch that would write outside the tree or is
// inconsistent in itself: such a patch is hostile, not merely stale, and no
// command may treat it as an ordinary finding.
func (r *Result) Hostile() error {
	for _, p := range r.Patches {
		for _, e := range p.Errors {
			if e.Kind == KindUnsafe || e.Kind == KindCorrupt {
				return &diag.InputError{File: e.File, Line: e.Line, Msg: e.Message}
			}
		}
	}
	return nil
}
