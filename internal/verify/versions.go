package verify

import (
	"fmt"

	"github.com/patchkit/patchkit/internal/spec"
)

// CheckVersions is the check that every other place naming the pinned
// version (upstream.versions) spells the pin: a Dockerfile's base image ARG,
// a vendored chart's appVersion. A place that disagrees means the image
// mixes two versions.
const CheckVersions = "versions"

// VersionChecks reads each upstream.versions place of s under root: pass
// when it holds the pin as the place spells it, fail when it holds another
// value or cannot be read.
func VersionChecks(root string, s *spec.Spec) []Check {
	var out []Check
	for i, v := range s.Upstream.Versions {
		want := v.Spell(s.Upstream.Ref)
		c := Check{Patch: s.File, Check: CheckVersions, Line: s.Line(fmt.Sprintf("upstream.versions[%d]", i))}
		got, line, err := spec.ReadVersion(root, v)
		switch {
		case err != nil:
			c.Status, c.Message = StatusFail, fmt.Sprintf("%s: cannot read it: %v", v, err)
		case got != want:
			c.Status = StatusFail
			c.Message = fmt.Sprintf("%s:%d holds %s, but the pin %s spells %s there: the image would mix two versions; `patchkit upgrade` moves every place, or make them one", v.File, line, got, s.Upstream.Ref, want)
		default:
			c.Status, c.Message = StatusPass, fmt.Sprintf("%s:%d holds %s (%s)", v.File, line, got, v.Name())
		}
		out = append(out, c)
	}
	return out
}
