// Package cmdutil holds what every command shares: the IOStreams, the Factory
// of global flags, and the mapping of errors to exit codes.
package cmdutil

import (
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams is the one place commands write to. Results go to Out; progress
// goes to ErrOut only when it is a terminal.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	outTTY, errTTY bool
}

// System returns the process's streams, detecting terminals.
func System() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		outTTY: term.IsTerminal(int(os.Stdout.Fd())),
		errTTY: term.IsTerminal(int(os.Stderr.Fd())),
	}
}

// Test returns streams backed by the given writers, neither a terminal.
func Test(out, errOut io.Writer) *IOStreams {
	return &IOStreams{In: eofReader{}, Out: out, ErrOut: errOut}
}

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
