package verify

import (
	"errors"

	"github.com/patchkit/patchkit/internal/upgrade"
)

// CheckCanonical warns when a patch is not in the canonical form that
// `patchkit refresh` writes (see internal/series/render.go): its hunks and
// index lines would churn between contributors.
const CheckCanonical = "canonical"

// checkCanonical renders the series canonically at the pin and warns for
// each patch whose text differs. Backports (a header that names the
// upstream commit) and reference files are skipped: they keep upstream's
// text, which the backport check compares. It is skipped when the series does not
// apply (the apply check says why).
func (v *verifier) checkCanonical() error {
	src, err := v.im.Cache.Source(v.im.Commit)
	if err != nil {
		return err
	}
	rendered, err := upgrade.Canonical(src, v.im.Patches)
	var na *upgrade.NotApplyingError
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
	for _, r := range rendered {
		changed[r.Patch.Path] = r.Changed
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
		if changed[e.patch.Path] {
			e.set(Check{Check: CheckCanonical, Status: StatusWarn, Message: "not canonical: `patchkit refresh " + v.im.Spec.Name + " " + e.patch.Name + "` rewrites it"})
		} else {
			e.set(Check{Check: CheckCanonical, Status: StatusPass, Message: "canonical"})
		}
	}
	return nil
}
