// Package cmdutil holds what every command shares: the IOStreams, the Factory
// of global flags, and the mapping of errors to exit codes.
package cmdutil

import (
	"io"
	"os"

	"golang.org/x/term"

	"github.com/patchkit/patchkit/internal/untrusted"
)

// IOStreams is the one place commands write to. Results go to Out; progress
// goes to ErrOut only when it is a terminal. Both pass every byte through
// untrusted.Writer: no secret reaches either, and neither carries a workflow
// command except patchkit's own annotations on Out in the github format.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	out, errOut    *untrusted.Writer
	outTTY, errTTY bool
}

// System returns the process's streams, detecting terminals.
func System() *IOStreams {
	s := newStreams(os.Stdout, os.Stderr)
	s.In = os.Stdin
	s.outTTY = term.IsTerminal(int(os.Stdout.Fd()))
	s.errTTY = term.IsTerminal(int(os.Stderr.Fd()))
	return s
}

// Test returns streams backed by the given writers, neither a terminal.
func Test(out, errOut io.Writer) *IOStreams {
	s := newStreams(out, errOut)
	s.In = eofReader{}
	return s
}

func newStreams(out, errOut io.Writer) *IOStreams {
	s := &IOStreams{out: untrusted.NewWriter(out), errOut: untrusted.NewWriter(errOut)}
	s.Out, s.ErrOut = s.out, s.errOut
	return s
}

// AllowCommands lets patchkit's own workflow commands through on Out: the
// github output format calls it. ErrOut never carries any.
func (s *IOStreams) AllowCommands(allow bool) { s.out.AllowCommands(allow) }

// OutWritten reports whether anything was written to Out.
func (s *IOStreams) OutWritten() bool { return s.out.Written() > 0 }

// SetTTY marks stdout and stderr as terminals or not (tests use it).
func (s *IOStreams) SetTTY(out, err bool) { s.outTTY, s.errTTY = out, err }

// IsStdoutTTY reports whether results go to a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.outTTY }

// Progress is where progress goes: stderr when it is a terminal, else nowhere.
func (s *IOStreams) Progress() io.Writer {
	if s.errTTY {
		return s.ErrOut
	}
	return io.Discard
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
