package verify

import (
	"strings"

	"github.com/patchkit/patchkit/internal/series"
)

// readmeProvenance gives each patch whose header says nothing of its
// origin what the patch directory's README says: the upstream commit it
// names (the backport check then compares with it) and its summary. It
// returns where each was read.
func (v *verifier) readmeProvenance() map[string]series.Provenance {
	var names []string
	for _, e := range v.entries {
		if e.patch != nil && noOrigin(e.patch.Header) {
			names = append(names, e.patch.Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	prov := series.Readme(v.root, v.im.Spec.Patches, names)
	for _, e := range v.entries {
		pr, ok := prov[e.name]
		if e.patch == nil || !ok {
			continue
		}
		h := &e.patch.Header
		if rh, err := series.ParseHeader([]byte(strings.Join(pr.Lines, "\n")+"\n"), pr.Where); err == nil && rh.Origin.Commit != "" {
			h.Origin, h.Origins = rh.Origin, rh.Origins
			h.Origin.Line = 0
		}
		if h.Subject == "" {
			s := pr.Text
			if _, after, ok := strings.Cut(s, e.name); ok {
				s = strings.TrimLeft(after, "`*_:;,- ")
			}
			if i := strings.IndexAny(s, ";."); i > 0 {
				s = s[:i]
			}
			h.Subject = strings.TrimSpace(s)
		}
	}
	return prov
}

func noOrigin(h series.Header) bool {
	if h.Origin.Kind != "" || h.Origin.Commit != "" {
		return false
	}
	for _, f := range h.Fields {
		if strings.EqualFold(f.Key, "origin") {
			return false
		}
	}
	return true
}
