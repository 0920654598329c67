package upgrade

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/gomod"
	"github.com/patchkit/patchkit/internal/refresh"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/txn"
	"github.com/patchkit/patchkit/internal/upstream"
)

// RefreshInput is one image's series to rewrite canonically at its pin
// (`patchkit refresh`).
type RefreshInput struct {
	Root      string
	Spec      *spec.Spec
	Cache     *upstream.Cache
	PinCommit string
	Patches   []*series.Patch // the series, in order
	// Names limits the rewrite to these patch files (names or paths);
	// none is every patch. A name not in the series is a bad invocation.
	Names   []string
	Offline bool // the go command may not reach GOPROXY (GOPROXY=off)
	Txn     txn.Options
}

// Refreshed is one patch file refresh looked at, and whether it changed.
type Refreshed struct {
	File    string
	Changed bool
}

// Refresh renders the patches named canonically at the pin (a dependency
// bump that no longer applies re-expressed there, CanonicalBumps) and
// writes those that changed, as one transaction. A patch that does not
// apply at the pin is a finding (diag.ErrFindings), and nothing is written.
func Refresh(ctx context.Context, in RefreshInput) ([]Refreshed, error) {
	if err := series.CheckRewritable(in.Patches); err != nil {
		return nil, err
	}
	want, err := selected(in.Spec, in.Patches, in.Names)
	if err != nil {
		return nil, err
	}
	src, err := in.Cache.Source(in.PinCommit)
	if err != nil {
		return nil, err
	}
	rendered, err := refresh.CanonicalBumps(ctx, gomod.Go{Offline: in.Offline}, src, in.Patches, apply.ForTool(in.Spec.Apply.Whitespace, in.Spec.Apply.Fuzz, in.Spec.Apply.Loose)...)
	var na *refresh.NotApplyingError
	if errors.As(err, &na) {
		return nil, fmt.Errorf("%w: %v", diag.ErrFindings, err)
	}
	if err != nil {
		return nil, err
	}
	var out []Refreshed
	plan := &Result{}
	for _, r := range rendered {
		if !want[r.Patch.Path] {
			continue
		}
		out = append(out, Refreshed{File: r.Patch.Path, Changed: r.Changed})
		if r.Changed {
			plan.Writes = append(plan.Writes, Write{Path: r.Patch.Path, Data: r.Text, Prior: r.Read})
		}
	}
	set, err := plan.WriteSet(in.Root, in.Spec, in.Patches)
	if err != nil {
		return nil, err
	}
	if _, err := set.Commit(ctx, in.Txn); err != nil {
		return nil, txn.Explain(err)
	}
	return out, nil
}

// selected returns the patch paths to rewrite: all, or those named (by file
// name or path); a name that is not in the series is a bad invocation.
func selected(s *spec.Spec, patches []*series.Patch, names []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, p := range patches {
		if len(names) == 0 {
			out[p.Path] = true
		}
	}
	for _, n := range names {
		found := false
		for _, p := range patches {
			if n == p.Path || n == p.Name || path.Clean(n) == p.Path {
				out[p.Path], found = true, true
			}
		}
		if !found {
			return nil, &diag.UsageError{Err: fmt.Errorf("%s is not a patch of %s's series", n, s.Name)}
		}
	}
	return out, nil
}
