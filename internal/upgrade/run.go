package upgrade

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/gate"
	"github.com/patchkit/patchkit/internal/gomod"
	"github.com/patchkit/patchkit/internal/refresh"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/txn"
	"github.com/patchkit/patchkit/internal/upstream"
)

// Request is one `patchkit upgrade` of an image unit that is prepared: its
// spec, its upstream cache, the pin resolved and its series.
type Request struct {
	Root      string
	Cache     *upstream.Cache
	Spec      *spec.Spec
	PinCommit string
	Patches   []*series.Patch
	// To is the ref to move to; "" is the newest final release (Target).
	To string
	// DryRun writes nothing; KeepConflicts writes the rest of a failed
	// upgrade; Offline neither fetches nor lets the go command reach
	// GOPROXY.
	DryRun, KeepConflicts, Offline bool
	// Into is upgrade --into: the unit is copied into this new directory
	// (relative to the root, checked by IntoDir) and carried there; the
	// unit itself is only read. With it, no release newer than the pin
	// copies the unit at its pin.
	Into string
	// GateOptions are the gate's (offline, progress, test seams).
	GateOptions []gate.Option
	Txn         txn.Options
}

// Outcome is what an upgrade planned, checked and wrote.
type Outcome struct {
	*Result
	// Gate is the gate's run on the new ref with the kept series; nil
	// when the spec has no test.
	Gate *gate.Result
	// DroppedTests are the tests the dropped patches owned, with their
	// status in the gate run: they must pass on the new ref without them.
	DroppedTests []TestStatus
	// OK: every patch has a fate, the gate passed and so did every
	// dropped patch's test.
	OK bool
	// Written is every file written or deleted, in order.
	Written []txn.Done
}

// TestStatus is one test's status in a gate run ("" when it did not run).
type TestStatus struct {
	Name, Patch, Status string
}

// Run upgrades one image, in order: refresh the upstream cache (not
// Offline), choose the target (ErrUpToDate when there is nothing newer),
// plan each patch's fate (Plan), run the gate on the new ref, and write
// the plan as one transaction when it is OK (or KeepConflicts), unless
// DryRun. A bad --to is bad input; a series that does not apply at the pin
// is a finding.
func Run(ctx context.Context, req Request) (*Outcome, error) {
	if !req.Offline {
		if err := req.Cache.Fetch(ctx); err != nil {
			return nil, err
		}
	}
	to, err := Target(req.Cache, req.Spec, req.To)
	if errors.Is(err, ErrUpToDate) && req.Into != "" {
		to, err = req.Spec.Upstream.Ref, nil
	}
	if errors.Is(err, ErrUpToDate) {
		return nil, err
	}
	if err != nil {
		return nil, &diag.InputError{File: req.Spec.File, Key: "upstream.releases", Msg: "choosing the release", Err: err}
	}
	commit, err := resolveTo(ctx, req.Cache, to)
	if err != nil {
		return nil, err
	}
	res, err := Plan(ctx, Input{
		Cache: req.Cache, Spec: req.Spec, PinCommit: req.PinCommit, Patches: req.Patches, To: to,
		Pin: PinFor(req.Root, req.Spec), Root: req.Root,
		Go: gomod.Go{Offline: req.Offline},
	}, commit)
	if err != nil {
		return nil, planError(err)
	}
	var set *txn.Set
	if req.Into != "" {
		set, err = res.Into(req.Root, req.Spec, req.Patches, req.Into)
	} else {
		set, err = res.WriteSet(req.Root, req.Spec, req.Patches)
	}
	if err != nil {
		return nil, err
	}
	out := &Outcome{Result: res, Written: []txn.Done{}}
	if req.Spec.Test != nil {
		g, err := gate.New(req.Root, req.Spec, req.GateOptions...)
		if err != nil {
			return nil, err
		}
		if out.Gate, err = g.Run(ctx, res.Source, res.Changes); err != nil {
			return nil, err
		}
	}
	out.DroppedTests = droppedTests(res, out.Gate)
	out.OK = res.OK() && (out.Gate == nil || out.Gate.OK) && allPass(out.DroppedTests)
	if !req.DryRun && (out.OK || req.KeepConflicts) {
		undo := func() {}
		if req.Into != "" {
			if undo, err = res.mkdirs(req.Root); err != nil {
				return nil, err
			}
		}
		done, err := set.Commit(ctx, req.Txn)
		if err != nil {
			if len(done) == 0 {
				undo()
			}
			return nil, txn.Explain(err)
		}
		out.Written = append(out.Written, done...)
		if err := res.chmodCopies(req.Root); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// resolveTo fetches and resolves the target; a ref upstream lacks is a bad --to.
func resolveTo(ctx context.Context, c *upstream.Cache, to string) (string, error) {
	if err := c.Ensure(ctx, to); err != nil {
		return "", &diag.InputError{File: "--to", Msg: "bad ref", Err: err}
	}
	commit, err := c.Resolve(to)
	if err != nil {
		return "", &diag.InputError{File: "--to", Msg: "bad ref", Err: err}
	}
	return commit, nil
}

// planError makes a series that does not apply at the pin a finding.
func planError(err error) error {
	var na *refresh.NotApplyingError
	if errors.As(err, &na) {
		return fmt.Errorf("%w: the series does not apply at the pin: %v", diag.ErrFindings, err)
	}
	return err
}

// droppedTests gives the status, in the gate run, of each test a dropped
// patch owned (a Test: entry names a test or a subtest prefix).
func droppedTests(res *Result, g *gate.Result) []TestStatus {
	if g == nil {
		return nil
	}
	var out []TestStatus
	for _, p := range res.Patches {
		if p.Fate != FateDropped {
			continue
		}
		for _, name := range p.Tests {
			st := g.Status(name)
			for _, t := range g.Tests {
				if st == "" && strings.HasPrefix(t.Name, name+"/") {
					st = t.Status
				}
				if strings.HasPrefix(t.Name, name+"/") && t.Status == gate.StatusFail {
					st = t.Status
				}
			}
			out = append(out, TestStatus{Name: name, Patch: p.File, Status: st})
		}
	}
	return out
}

func allPass(ts []TestStatus) bool {
	for _, t := range ts {
		if t.Status != gate.StatusPass {
			return false
		}
	}
	return true
}
