package cmdutil

import (
	"fmt"
	"io"
	"sync"
)

// UnitProgress says on stderr how a run over several units goes, as docker,
// git and gh do on a terminal and a CI log can follow:
//
//   - one line per unit as it finishes, terminal or not, on stderr:
//     "patchkit: NAME: VERDICT" (a unit that fails alone has its own line,
//     "patchkit: NAME: ERROR", from Failed);
//   - on a terminal, also the step each unit is at, as it starts it:
//     "patchkit: [3/58] NAME: fetching URL" (git's own fetch progress,
//     with the bytes received, follows it: IOStreams.Progress).
//
// Stdout stays the report only. A nil *UnitProgress says nothing: the run
// of a single unit, which the report alone answers.
type UnitProgress struct {
	w   io.Writer
	tty bool
	n   int

	mu   sync.Mutex
	seen map[string]int // each unit's place in the run, from 1
}

// UnitProgress is the progress of a run over n units, on stderr; nil when
// n is less than 2.
func (f *Factory) UnitProgress(n int) *UnitProgress {
	if n < 2 {
		return nil
	}
	return &UnitProgress{w: f.IO.ErrOut, tty: f.IO.errTTY, n: n, seen: map[string]int{}}
}

// place is the unit's place in the run: the order units were first heard of.
func (p *UnitProgress) place(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	i, ok := p.seen[name]
	if !ok {
		i = len(p.seen) + 1
		p.seen[name] = i
	}
	return i
}

// Step says, on a terminal, that the unit name is now at step ("fetching
// https://…", "scanning 4 refs").
func (p *UnitProgress) Step(name, step string) {
	if p == nil {
		return
	}
	i := p.place(name)
	if p.tty {
		fmt.Fprintf(p.w, "patchkit: [%d/%d] %s: %s\n", i, p.n, name, step)
	}
}

// Done says that the unit name finished, with its verdict ("ok (5 pass)").
func (p *UnitProgress) Done(name, verdict string) {
	if p == nil {
		return
	}
	p.place(name)
	fmt.Fprintf(p.w, "patchkit: %s: %s\n", name, verdict)
}

// Failed wraps a runner's Failed (pipeline.Runner.Failed, which says a unit
// that fails alone on stderr): the unit counts as done.
func (p *UnitProgress) Failed(next func(name string, err error)) func(name string, err error) {
	if p == nil {
		return next
	}
	return func(name string, err error) {
		p.place(name)
		if next != nil {
			next(name, err)
		}
	}
}
