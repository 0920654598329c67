package cmdutil

import (
	"errors"
	"fmt"
	"strings"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/report"
	"github.com/patchkit/patchkit/internal/untrusted"
)

// Finish reports how a run ended and returns its exit code. A run that found
// problems and returns diag.ErrFindings itself already printed them; one
// that returns it wrapped with a reason has the reason printed too. Any
// other error goes to stderr as a plain
// line and, when nothing else was printed on stdout, to stdout in the output
// format (-o json: an object {"error","exitCode","kind",...}; github: an
// ::error annotation; markdown: a short block), so that a script reading
// stdout learns why. Every message passes through untrusted.Text. args are
// the command line, read for -o when flag parsing stopped before it.
func Finish(f *Factory, args []string, err error) int {
	code := ExitCode(err)
	if err == nil || errors.Is(err, diag.ErrReported) || (code == ExitFindings && err == diag.ErrFindings) {
		return code
	}
	untrusted.AddURL(f.UpstreamURL)
	msg := untrusted.Error(err)
	kind := report.KindFault
	if code == ExitFindings {
		// A finding that carries its reason (diag.ErrFindings wrapped
		// with %w) may be one no report printed: every non-zero exit
		// says why.
		msg, kind = strings.TrimPrefix(msg, diag.ErrFindings.Error()+": "), report.KindFinding
	}
	fmt.Fprintln(f.IO.ErrOut, "patchkit: "+msg)
	format := errorFormat(f.Output, args)
	if format == report.Text || f.IO.OutWritten() {
		return code
	}
	f.IO.AllowCommands(format == report.GitHub)
	e := report.Error{Message: msg, ExitCode: code, Kind: kind}
	var ue *UsageError
	var ie *diag.InputError
	switch {
	case errors.As(err, &ue):
		e.Kind = report.KindUsage
	case errors.As(err, &ie):
		e.Kind, e.File, e.Line, e.Key = report.KindInput, ie.File, ie.Line, ie.Key
	}
	if rerr := report.RenderError(f.IO.Out, format, e); rerr != nil {
		fmt.Fprintln(f.IO.ErrOut, "patchkit: writing the error: "+untrusted.Error(rerr))
	}
	return code
}

// errorFormat is the output format to report an error in: -o as parsed, or,
// when parsing stopped before it (a bad flag), as the command line gives it.
// An invalid format falls back to text.
func errorFormat(parsed string, args []string) report.Format {
	if fm, err := report.ParseFormat(parsed); err == nil && fm != report.Text {
		return fm
	}
	fm, err := report.ParseFormat(outputArg(args))
	if err != nil {
		return report.Text
	}
	return fm
}

// outputArg returns the last -o/--output value of args, as pflag reads it.
func outputArg(args []string) string {
	val := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return val
		case a == "-o" || a == "--output":
			if i+1 < len(args) {
				val = args[i+1]
				i++
			}
		case strings.HasPrefix(a, "--output="):
			val = strings.TrimPrefix(a, "--output=")
		case strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--"):
			val = strings.TrimPrefix(strings.TrimPrefix(a, "-o"), "=")
		}
	}
	return val
}
