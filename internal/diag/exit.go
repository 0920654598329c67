package diag

import "errors"

// ExitCode maps a run's error to patchkit's exit code: nil is 0, findings
// (ErrFindings) are 1, bad input and bad invocations are 2. Any other error
// (the network, the disk) is 2 as well: the run could not give a verdict.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrFindings):
		return 1
	default:
		return 2
	}
}

// Exit is the error a run that reported each of its units ends with, for
// its worst exit code: nil for 0, ErrFindings for 1, ErrReported (already
// said, unit by unit) for 2.
func Exit(worst int) error {
	switch worst {
	case 0:
		return nil
	case 1:
		return ErrFindings
	}
	return ErrReported
}
