package cmdutil

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
)

// TestFinishSaysWhy: every non-zero exit says why. A finding a report
// already printed (plain diag.ErrFindings) adds nothing; a finding that
// carries its reason (the series does not apply at the pin, as upgrade and
// refresh return it before any report) is said on stderr and, in json,
// on stdout, as a finding.
func TestFinishSaysWhy(t *testing.T) {
	cases := []struct {
		name           string
		err            error
		args           []string
		code           int
		stderr, stdout string
	}{
		{"reported finding", diag.ErrFindings, nil, 1, "", ""},
		{"finding with its reason", fmt.Errorf("%w: the series does not apply at the pin: 0001.patch: trailing whitespace", diag.ErrFindings), nil, 1,
			"patchkit: the series does not apply at the pin: 0001.patch: trailing whitespace\n", ""},
		{"finding in json", fmt.Errorf("%w: the series does not apply at the pin", diag.ErrFindings), []string{"-o", "json"}, 1,
			"patchkit: the series does not apply at the pin\n",
			"{\n  \"error\": \"the series does not apply at the pin\",\n  \"exitCode\": 1,\n  \"kind\": \"finding\"\n}\n"},
		{"fault", errors.New("disk full"), nil, 2, "patchkit: disk full\n", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			f := &Factory{IO: Test(&out, &errOut)}
			if code := Finish(f, tc.args, tc.err); code != tc.code {
				t.Errorf("Finish() = %d, want %d", code, tc.code)
			}
			if errOut.String() != tc.stderr || out.String() != tc.stdout {
				t.Errorf("Finish() printed stderr %q stdout %q, want %q %q", errOut.String(), out.String(), tc.stderr, tc.stdout)
			}
		})
	}
}
