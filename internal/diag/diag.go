// Package diag holds the typed errors that decide patchkit's exit codes.
package diag

import (
	"errors"
	"fmt"
)

// InputError is bad input: a file that patchkit cannot accept. It maps to exit
// code 2, and its message names the file and, where there is one, the line or key.
type InputError struct {
	File string // the file at fault, as the user names it
	Line int    // 1-based line, or 0
	Key  string // the offending key (spec files), or ""
	Msg  string
	Err  error // the underlying cause, if any
}

func (e *InputError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", loc, e.Line)
	}
	msg := e.Msg
	if e.Key != "" {
		msg = e.Key + ": " + msg
	}
	if e.Err != nil {
		msg = msg + ": " + e.Err.Error()
	}
	if loc == "" {
		return msg
	}
	return loc + ": " + msg
}

func (e *InputError) Unwrap() error { return e.Err }

// Inputf builds an InputError for file and line.
func Inputf(file string, line int, format string, args ...any) *InputError {
	return &InputError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// IsInput reports whether err is, or wraps, an InputError.
func IsInput(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}

// ErrFindings is returned by a command whose run completed but found problems
// (a patch that does not apply, a failed check). It maps to exit code 1.
var ErrFindings = errors.New("findings")

// UsageError is a bad invocation (a flag, an environment variable, a
// combination the command cannot run with): exit code 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// ErrReported is returned by a command that ran every unit and already
// reported, unit by unit, an error that alone would exit 2 (a unit whose
// upstream could not be fetched): exit 2, with nothing more printed.
var ErrReported = errors.New("errors reported per unit")
