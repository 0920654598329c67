package verify

import (
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/tree"
)

// TestPinFileChecks: a GIT_TAG in the unit's directory that the spec does
// not read its pin from must hold the spec's pin; a pin read from a file
// passes saying where, unless a Dockerfile's pin check already spoke.
func TestPinFileChecks(t *testing.T) {
	const unit = "projects/o/r/1-30"
	spec1 := func(ref string) string {
		return "upstream:\n  url: https://github.com/o/r.git\n  ref: " + ref + "\npatches: ./patches\n"
	}
	tests := []struct {
		name, spec, gitTag string // gitTag "" for none
		earlier            []Check
		status, msg        string // status "" for no check
	}{
		{"read from GIT_TAG", spec1("{file: ./GIT_TAG}"), "v1.2.0\n", nil, StatusPass, "v1.2.0 is read from projects/o/r/1-30/GIT_TAG:1"},
		{"read from GIT_TAG, a Dockerfile spoke", spec1("{file: ./GIT_TAG}"), "v1.2.0\n", []Check{{Patch: unit + "/patchkit.yaml", Check: CheckPin, Status: StatusPass}}, "", ""},
		{"copied, GIT_TAG agrees", spec1("v1.2.0"), "v1.2.0\n", nil, StatusPass, "v1.2.0 (copied into the spec) is what projects/o/r/1-30/GIT_TAG:1 holds"},
		{"copied, GIT_TAG edited", spec1("v1.2.0"), "v1.3.0\n", nil, StatusFail, "the spec pins v1.2.0 (copied into the spec), but projects/o/r/1-30/GIT_TAG:1 holds v1.3.0"},
		{"read from another file, GIT_TAG edited", spec1("{file: ./TAG}"), "v1.3.0\n", nil, StatusFail, "the spec pins v1.2.0 (read from projects/o/r/1-30/TAG:1), but projects/o/r/1-30/GIT_TAG:1 holds v1.3.0"},
		{"copied, GIT_TAG of two lines", spec1("v1.2.0"), "v1.2.0\nv1.3.0\n", nil, StatusFail, "projects/o/r/1-30/GIT_TAG:2: a second line"},
		{"copied, no GIT_TAG", spec1("v1.2.0"), "", nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			files := map[string]string{unit + "/patchkit.yaml": tt.spec, unit + "/patches/0001-x.patch": "", unit + "/TAG": "v1.2.0\n"}
			if tt.gitTag != "" {
				files[unit+"/GIT_TAG"] = tt.gitTag
			}
			gittest.WriteFiles(t, root, files)
			s, err := spec.Load(root, unit)
			if err != nil {
				t.Fatal(err)
			}
			got := PinFileChecks(root, s, tt.earlier)
			if tt.status == "" {
				if len(got) != 0 {
					t.Errorf("PinFileChecks() = %+v, want none", got)
				}
				return
			}
			if len(got) != 1 || got[0].Check != CheckPin || got[0].Status != tt.status || !strings.Contains(got[0].Message, tt.msg) || got[0].Line != 3 {
				t.Errorf("PinFileChecks() = %+v, want one %s pin check at line 3 saying %q", got, tt.status, tt.msg)
			}
		})
	}
}

// TestGoVersionChecks: a go place passes when it builds the go directive
// of the patched pin's go.mod, fails below it, and is skipped without one.
func TestGoVersionChecks(t *testing.T) {
	const unit = "projects/o/r/1-30"
	tests := []struct {
		name, golang string
		patched      tree.Source
		status, msg  string
	}{
		{"the release line builds it", "1.25\n", tree.Map{"go.mod": {Data: []byte("module x\n\ngo 1.25.3\n")}}, StatusPass, "GOLANG_VERSION:1 holds Go 1.25, which builds the pin's go 1.25.3"},
		{"below", "1.24\n", tree.Map{"go.mod": {Data: []byte("module x\n\ngo 1.25.0\n")}}, StatusFail, "GOLANG_VERSION:1 holds Go 1.24, below the go directive 1.25.0 of the pin's go.mod (with the series): the build needs Go 1.25"},
		{"a release below", "1.25.1\n", tree.Map{"go.mod": {Data: []byte("module x\n\ngo 1.25.3\n")}}, StatusFail, "the build needs Go 1.25.3"},
		{"no go.mod", "1.24\n", tree.Map{}, StatusSkip, "no go directive"},
		{"not a Go version", "latest\n", tree.Map{"go.mod": {Data: []byte("module x\n\ngo 1.25.0\n")}}, StatusFail, `"latest" is not a Go version`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			gittest.WriteFiles(t, root, map[string]string{
				unit + "/patchkit.yaml":        "upstream:\n  url: https://github.com/o/r.git\n  ref: v1.2.0\n  versions:\n    - {file: ./GOLANG_VERSION, whole-file: true}\npatches: ./patches\n",
				unit + "/patches/0001-x.patch": "",
				unit + "/GOLANG_VERSION":       tt.golang,
			})
			s, err := spec.Load(root, unit)
			if err != nil {
				t.Fatal(err)
			}
			got := VersionChecks(root, s, tt.patched)
			if len(got) != 1 || got[0].Status != tt.status || !strings.Contains(got[0].Message, tt.msg) {
				t.Errorf("VersionChecks() = %+v, want %s %q", got, tt.status, tt.msg)
			}
		})
	}
}
