package verify

import (
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/patchkit/patchkit/internal/spec"
)

// PinFile is the file that holds a release-branch unit's pin, one line, in
// the repositories that build from one (aws/eks-distro, and
// eks-anywhere-build-tooling: GIT_TAG?=$(shell cat $(RELEASE_BRANCH)/GIT_TAG)).
const PinFile = "GIT_TAG"

// PinFileChecks is the pin check of a pin kept in a plain file. When the
// unit's directory holds a GIT_TAG that the spec does not read its pin from
// (a copied upstream.ref, or another source), it fails when GIT_TAG holds
// another ref than the one patchkit applies: the build clones what GIT_TAG
// says, so the image would not carry the series patchkit checked. When the
// spec reads its pin from a file (upstream.ref: {file: ...}) and checks,
// the checks so far, have no pin check (no Dockerfile that fetches), it
// passes saying where the pin was read: patchkit applies what the file says.
func PinFileChecks(root string, s *spec.Spec, checks []Check) []Check {
	c := Check{Patch: s.File, Check: CheckPin, Line: s.Line("upstream.ref")}
	src := s.Upstream.RefFrom
	file := path.Join(s.Dir, PinFile)
	if src == nil || src.TextFile == "" || src.File != file {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			return nil // no GIT_TAG (or none to read): no claim about the build
		}
		from := "copied into the spec"
		if src != nil {
			from = "read from " + src.Where()
		}
		got, line, err := spec.ReadTextValue(data, file)
		switch {
		case err != nil:
			c.Status, c.Message = StatusFail, fmt.Sprintf("%v: the build reads the pin from it", err)
		case got != s.Upstream.Ref:
			c.Status = StatusFail
			c.Message = fmt.Sprintf("the spec pins %s (%s), but %s:%d holds %s, the tag the build checks out: read the pin from it (upstream.ref: {file: ./%s}) so they are one", s.Upstream.Ref, from, file, line, got, PinFile)
		default:
			c.Status = StatusPass
			c.Message = fmt.Sprintf("%s (%s) is what %s:%d holds; upstream.ref: {file: ./%s} would keep them one", s.Upstream.Ref, from, file, line, PinFile)
		}
		return []Check{c}
	}
	for _, k := range checks {
		if k.Check == CheckPin && k.Patch == s.File {
			return nil
		}
	}
	c.Status = StatusPass
	c.Message = fmt.Sprintf("%s is read from %s: patchkit applies the series to what the file holds", s.Upstream.Ref, src.Where())
	return []Check{c}
}
