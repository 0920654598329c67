package verify

import (
	"errors"

	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/refresh"
)

// CheckCanonical warns when a patch is not in the canonical form that
// `patchkit refresh` writes (see internal/series/render.go): its hunks and
// index lines would churn between contributors.
const CheckCanonical = "canonical"

// checkCanonical renders the series canonically at the pin and warns for
// each patch whose text differs. Backports (a header that names the
// upstream commit) and reference files are skipped: they keep upstream's
// text, which the backport check compares. It is skipped when the series does not
// apply (the apply check says why), and, unless patches.canonical says
// otherwise, for a series patchkit did not write (no patch canonical yet):
// a repository adopting patchkit is not told to rewrite every patch.
func (v *verifier) checkCanonical() error {
	src, err := v.im.Cache.Source(v.im.Commit)
	if err != nil {
		return err
	}
	rendered, err := refresh.Canonical(src, v.im.Patches, pipeline.ApplyOptions(v.im.Spec)...)
	var na *refresh.NotApplyingError
	if errors.As(err, &na) {
		for _, e := range v.entries {
			if e.patch != nil {
				e.set(Check{Check: CheckCanonical, Status: StatusSkip, Message: "the series does not apply at the pin"})
			}
		}
		return nil
	}
	if err != nil {
		return err
	}
	changed := map[string]bool{}
	written := false // some patch is canonical: patchkit wrote the series
	for _, r := range rendered {
		changed[r.Patch.Path] = r.Changed
		if !r.Changed && r.Patch.Header.Origin.Commit == "" && r.Patch.Reference == nil {
			written = true
		}
	}
	skip := ""
	switch opt := v.im.Spec.Series.Canonical; {
	case opt != nil && !*opt:
		skip = "patches.canonical is false"
	case opt == nil && !written:
		skip = "no patch is in the text patchkit writes, so patchkit did not write this series: set patches.canonical: true to check it"
	}
	for _, e := range v.entries {
		if e.patch == nil {
			continue
		}
		if e.patch.Header.Origin.Commit != "" || e.patch.Reference != nil {
			// A backport keeps upstream's text: the backport check compares it.
			e.set(Check{Check: CheckCanonical, Status: StatusSkip, Message: "a backport keeps the text of its upstream commit"})
			continue
		}
		if skip != "" {
			e.set(Check{Check: CheckCanonical, Status: StatusSkip, Message: skip})
			continue
		}
		if changed[e.patch.Path] {
			e.set(Check{Check: CheckCanonical, Status: StatusWarn, Message: "not canonical: `patchkit refresh " + v.im.Spec.Name + " " + e.patch.Name + "` rewrites it"})
		} else {
			e.set(Check{Check: CheckCanonical, Status: StatusPass, Message: "canonical"})
		}
	}
	return nil
}
