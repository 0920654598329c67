package backport

import (
	"context"
	"errors"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/gomod"
	"github.com/patchkit/patchkit/internal/txn"
)

// Added is what `patchkit backport` did: the plan, whether the new patch
// applies at the pin after the series, and whether it was written.
type Added struct {
	*Plan
	// Applies: the series with the new patch applies at the pin; Errors
	// are the new patch's problems when it does not.
	Applies bool
	Errors  []apply.Problem
	// SeriesFails: the series already failed before the new patch.
	SeriesFails bool
	// Raised names the modules a dependency bump was re-expressed with.
	Raised string
	// Written: the file was written (a diff always, for the user to
	// refresh; a reference only when it applies).
	Written bool
}

// Into is where and how Add writes: the repository root, the patch files
// the directory held before the series was read (ListPatches; the write
// is refused if they changed), the transaction's options, and whether the
// go command may reach GOPROXY (a bump raised, RaiseBump).
type Into struct {
	Root    string
	Listed  []string
	Txn     txn.Options
	Offline bool
}

// Add makes the patch file r asks for (NewPlan), applies the series with
// it at the pin (a dependency bump that does not apply is re-expressed
// there, Plan.RaiseBump) and writes it into the repository (WriteRepo): a diff always, a
// reference only when it applies, since it cannot be refreshed by hand. A
// bad request is a bad invocation (*diag.UsageError).
func Add(ctx context.Context, r Request, into Into) (*Added, error) {
	plan, err := NewPlan(ctx, r)
	if errors.Is(err, ErrBadRequest) {
		return nil, &diag.UsageError{Err: err}
	}
	if err != nil {
		return nil, err
	}
	src, err := r.Cache.Source(r.PinCommit)
	if err != nil {
		return nil, err
	}
	existing := r.Existing
	before := apply.Series(src, existing)
	after := apply.Series(src, append(existing[:len(existing):len(existing)], plan.Patch))
	if after.Err != nil {
		return nil, after.Err
	}
	last := after.Patches[len(after.Patches)-1]
	// A dependency bump that does not apply is re-expressed at the pin:
	// raise what the pin does not cover yet (docs/obsolete-check.md).
	out := &Added{Plan: plan, SeriesFails: !before.OK}
	if last.Status != apply.StatusApplied && !r.Reference {
		if out.Raised, err = plan.RaiseBump(ctx, gomod.Go{Offline: into.Offline}, src, existing); err != nil {
			return nil, err
		}
		if out.Raised != "" {
			after = apply.Series(src, append(existing[:len(existing):len(existing)], plan.Patch))
			last = after.Patches[len(after.Patches)-1]
		}
	}
	out.Applies, out.Errors = last.Status == apply.StatusApplied, last.Errors
	if out.Applies || !r.Reference {
		if err := plan.WriteRepo(ctx, into.Root, into.Listed, into.Txn); err != nil {
			if errors.Is(err, ErrBadRequest) {
				return nil, &diag.UsageError{Err: err}
			}
			return nil, err
		}
		out.Written = true
	}
	return out, nil
}
