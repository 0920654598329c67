package pipeline

import (
	"context"
	"errors"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/upstream"
)

// Runner runs a per-image command's work on each unit it was given, in
// order: the run every such command (apply, obsolete-check, verify, gate,
// build, refresh, upgrade, forward, backport, status) shares. The command
// keeps its flags and its rendering; the runner owns what comes between:
// preparing each unit (Run), repairing a damaged cache (Repair), and
// letting one unit fail alone (Alone).
type Runner struct {
	Env Env
	// Ref is the upstream ref Run prepares each unit at; "" is its pin.
	Ref string
	// Repair runs each unit's work through upstream.RetryRepaired: a
	// damaged cache is never a verdict; online it is repaired and the unit
	// done again, offline it is a cache fault (exit 2). The work must read
	// the cache before it writes or prints anything.
	Repair bool
	// Alone makes a unit's error its own: it is kept in the unit's
	// outcome (Unit.Err) and the next unit runs. Without it, the first
	// error ends the run. A cancelled run, and an error wrapped with Stop,
	// always end it.
	Alone bool
	// Failed, when set, is told of each unit that failed alone, as it
	// fails (commands say it on stderr, between the units' progress).
	Failed func(name string, err error)
	// EmptySeries: a unit whose patch directory does not exist yet has an
	// empty series (backport writes its first patch) rather than bad input.
	EmptySeries bool
	// Prepared, when set, hands over an image already prepared at the
	// pin for the unit, once (Prefetched.Take): With works on it instead
	// of preparing the unit again, when it prepares at the pin (Ref "")
	// without EmptySeries. nil means prepare.
	Prepared func(name string) *Image
}

// Unit is the outcome of one unit of a run.
type Unit[R any] struct {
	Name   string
	Result R     // the work's result, when Err is nil
	Err    error // the unit failed alone (Runner.Alone)
	// Dir is the unit's directory when it failed alone and can still be
	// found ("" otherwise), for the line that reports it.
	Dir string
}

// File is the unit's patchkit.yaml, relative to the root; the name when
// the unit cannot be found.
func (u Unit[R]) File() string {
	if u.Dir == "" {
		return u.Name
	}
	return spec.Unit{Dir: u.Dir}.File()
}

// stopError ends a run even when its units fail alone.
type stopError struct{ err error }

func (e *stopError) Error() string { return e.err.Error() }
func (e *stopError) Unwrap() error { return e.err }

// Stop wraps err so that it ends the run even when units fail alone
// (Runner.Alone): the runner returns err itself. nil stays nil.
func Stop(err error) error {
	if err == nil {
		return nil
	}
	return &stopError{err}
}

// Each runs work on each named unit, in order, and returns their outcomes.
// work gets the unit's name; it prepares what it needs (Run prepares the
// Image for it). The error is the one that ended the run: a unit's, without
// Alone or wrapped with Stop (returned unwrapped), or the context's.
func Each[R any](ctx context.Context, r Runner, names []string, work func(ctx context.Context, name string) (R, error)) ([]Unit[R], error) {
	out := make([]Unit[R], 0, len(names))
	for _, name := range names {
		var res R
		do := func() error {
			var err error
			res, err = work(ctx, name)
			return err
		}
		var err error
		if r.Repair {
			err = upstream.RetryRepaired(ctx, do)
		} else {
			err = do()
		}
		if err != nil {
			var stop *stopError
			if errors.As(err, &stop) {
				return out, stop.err
			}
			if !r.Alone || ctx.Err() != nil {
				return out, err
			}
			if r.Failed != nil {
				r.Failed(name, err)
			}
			u := Unit[R]{Name: name, Err: err}
			if found, ferr := r.Env.find(name); ferr == nil {
				u.Dir = found.Dir
			}
			out = append(out, u)
			continue
		}
		out = append(out, Unit[R]{Name: name, Result: res})
	}
	return out, nil
}

// Run is Each with each unit prepared (Prepare, at r.Ref) before work runs
// on it, and its cache closed after.
func Run[R any](ctx context.Context, r Runner, names []string, work func(ctx context.Context, im *Image) (R, error)) ([]Unit[R], error) {
	return Each(ctx, r, names, func(ctx context.Context, name string) (R, error) {
		return With(ctx, r, name, work)
	})
}

// With prepares the unit name as r says (Prepare at r.Ref; EmptySeries),
// or takes the image r.Prepared hands over for it, runs work on it and
// closes its cache. It is one unit of Run, for work that checks something
// of its own first (Each). A unit done again (Runner.Repair) prepares
// afresh: an image is handed over once.
func With[R any](ctx context.Context, r Runner, name string, work func(ctx context.Context, im *Image) (R, error)) (R, error) {
	var zero R
	var im *Image
	if r.Prepared != nil && r.Ref == "" && !r.EmptySeries {
		im = r.Prepared(name)
	}
	if im == nil {
		prepare := Prepare
		if r.EmptySeries {
			prepare = prepareEmptyOK
		}
		var err error
		if im, err = prepare(ctx, r.Env, name, r.Ref); err != nil {
			return zero, err
		}
	}
	defer im.Close()
	return work(ctx, im)
}

// One runs work on the one unit name (Run with a single unit) and returns
// its result: the run of a command that takes exactly one IMAGE.
func One[R any](ctx context.Context, r Runner, name string, work func(ctx context.Context, im *Image) (R, error)) (R, error) {
	r.Alone = false
	units, err := Run(ctx, r, []string{name}, work)
	if err != nil {
		var zero R
		return zero, err
	}
	return units[0].Result, nil
}

// Worst is the worst outcome of a run's units: 0 when none failed alone, 1
// when the worst was a finding (diag.ErrFindings), 2 otherwise.
func Worst[R any](units []Unit[R]) int {
	worst := 0
	for _, u := range units {
		worst = max(worst, diag.ExitCode(u.Err))
	}
	return worst
}
