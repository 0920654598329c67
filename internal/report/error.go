package report

import (
	"fmt"
	"strings"

	"github.com/patchkit/patchkit/internal/untrusted"
)

// Error is a run that ended without a verdict: a bad invocation, bad input
// or a fault (exit code 2). -o json prints it as one object on stdout, so a
// script reads why from the same stream as results.
type Error struct {
	// Message is the error's message, redacted and neutralised.
	Message string `json:"error"`
	// ExitCode is the process's exit code.
	ExitCode int `json:"exitCode"`
	// Kind is usage (a bad invocation), input (a bad file), finding (exit
	// 1 that no report printed) or error (any other fault: the network,
	// the disk, the cache).
	Kind string `json:"kind"`
	// File, Line and Key locate bad input, where known.
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Key  string `json:"key,omitempty"`
}

// The kinds of Error.
const (
	KindUsage = "usage"
	KindInput = "input"
	KindFault = "error"
	// KindFinding is a finding (exit 1) that no report printed: the
	// message says what was found.
	KindFinding = "finding"
)

// Command implements Result.
func (Error) Command() string { return "patchkit" }

func (e Error) clean() Result {
	e.Message = untrusted.Text(e.Message)
	e.File = untrusted.Text(e.File)
	return e
}

// Text implements Texter: nothing, as the message goes to stderr.
func (Error) Text() string { return "" }

// Markdown implements Markdowner.
func (e Error) Markdown() string {
	fence := untrusted.Fence(e.Message)
	return fmt.Sprintf("### ❌ patchkit: %s (exit %d)\n\n%s\n%s\n%s\n", e.Kind, e.ExitCode, fence, e.Message, fence)
}

// GitHub implements GitHubber.
func (e Error) GitHub() string {
	var b strings.Builder
	annotate(&b, "error", e.File, e.Line, "patchkit "+e.Kind, ghEscape(e.Message))
	return b.String()
}
