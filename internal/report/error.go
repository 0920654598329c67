package report

import (
	"fmt"
	"io"
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
	// Kind is usage (a bad invocation), input (a bad file) or error (any
	// other fault: the network, the disk, the cache).
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
)

// RenderError writes e in format f: text prints nothing (the plain message
// goes to stderr), json one object, markdown a short block, github an
// ::error annotation, on the file and line when there are some.
func RenderError(w io.Writer, f Format, e Error) error {
	e.Message = untrusted.Text(e.Message)
	e.File = untrusted.Text(e.File)
	var s string
	switch f {
	case JSON:
		return writeJSON(w, []Error{e}, true)
	case Markdown:
		fence := "```"
		for strings.Contains(e.Message, fence) {
			fence += "`"
		}
		s = fmt.Sprintf("### ❌ patchkit: %s (exit %d)\n\n%s\n%s\n%s\n", e.Kind, e.ExitCode, fence, e.Message, fence)
	case GitHub:
		props := ""
		if e.File != "" {
			props = "file=" + ghProp(e.File) + ","
			if e.Line > 0 {
				props += fmt.Sprintf("line=%d,", e.Line)
			}
		}
		s = fmt.Sprintf("::error %stitle=%s::%s\n", props, ghProp("patchkit "+e.Kind), ghEscape(e.Message))
	default:
		return nil
	}
	_, err := io.WriteString(w, s)
	return err
}
