package verify

import (
	"fmt"

	"golang.org/x/mod/modfile"

	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/tree"
)

// CheckVersions is the check that every other place naming the pinned
// version (upstream.versions) spells the pin: a Dockerfile's base image ARG,
// a vendored chart's appVersion. A place that disagrees means the image
// mixes two versions.
const CheckVersions = "versions"

// VersionChecks reads each upstream.versions place of s under root: pass
// when it holds the pin as the place spells it, fail when it holds another
// value or cannot be read. A go place (spelling go) passes when the Go
// release it holds builds the go directive of the go.mod at the root of
// patched (the pin with the series), fails when it is below it, and is
// skipped when patched is nil or has no go directive.
func VersionChecks(root string, s *spec.Spec, patched tree.Source) []Check {
	var out []Check
	goDirective, goErr := goDirective(patched)
	for i, v := range s.Upstream.Versions {
		want := v.Spell(s.Upstream.Ref)
		c := Check{Patch: s.File, Check: CheckVersions, Line: s.Line(fmt.Sprintf("upstream.versions[%d]", i))}
		got, line, err := spec.ReadVersion(root, v)
		switch {
		case err != nil:
			c.Status, c.Message = StatusFail, fmt.Sprintf("%s: cannot read it: %v", v, err)
		case v.Spelling == spec.SpellingGo:
			c.Status, c.Message = goCheck(v, got, line, goDirective, goErr)
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

// goCheck is the versions check of a go place holding have at line.
func goCheck(v spec.Version, have string, line int, directive string, err error) (string, string) {
	if err != nil {
		return StatusFail, fmt.Sprintf("%s:%d holds Go %s, but the go.mod of the pin cannot be read: %v", v.File, line, have, err)
	}
	if directive == "" {
		return StatusSkip, fmt.Sprintf("%s:%d holds Go %s; the pin has no go directive at its root to compare it with", v.File, line, have)
	}
	needs, err := spec.GoNeeds(have, directive)
	switch {
	case err != nil:
		return StatusFail, fmt.Sprintf("%s:%d: %v", v.File, line, err)
	case needs != have:
		return StatusFail, fmt.Sprintf("%s:%d holds Go %s, below the go directive %s of the pin's go.mod (with the series): the build needs Go %s; `patchkit upgrade` raises it, or raise it by hand", v.File, line, have, directive, needs)
	}
	return StatusPass, fmt.Sprintf("%s:%d holds Go %s, which builds the pin's go %s", v.File, line, have, directive)
}

// goDirective is the go directive of the go.mod at the root of t, or ""
// when t is nil or has none.
func goDirective(t tree.Source) (string, error) {
	if t == nil {
		return "", nil
	}
	f, ok, err := t.Read("go.mod")
	if err != nil || !ok {
		return "", err
	}
	mf, err := modfile.ParseLax("go.mod", f.Data, nil)
	if err != nil {
		return "", err
	}
	if mf.Go == nil {
		return "", nil
	}
	return mf.Go.Version, nil
}
