package image

import (
	"strings"
	"time"

	"github.com/patchkit/patchkit/internal/series"
)

// The provenance annotations (and labels) of a built image.
const (
	// AnnotationSource is the upstream repository URL, without credentials.
	AnnotationSource = "org.opencontainers.image.source"
	// AnnotationRevision is the pinned upstream commit.
	AnnotationRevision = "org.opencontainers.image.revision"
	// AnnotationCreated is the build's reproducible time (RFC 3339).
	AnnotationCreated = "org.opencontainers.image.created"
	// AnnotationImage is the image unit's name.
	AnnotationImage = "dev.patchkit.image"
	// AnnotationUpstreamRef is the pin as the spec names it (a tag or a commit).
	AnnotationUpstreamRef = "dev.patchkit.upstream.ref"
	// AnnotationPatches lists the series in order as name=patch-id, comma-separated.
	AnnotationPatches = "dev.patchkit.patches"
	// AnnotationSeries is the series' content hash (series.Fingerprint),
	// the one a stamp records beside the digest it writes.
	AnnotationSeries = "dev.patchkit.series"
)

// Provenance says what an image was built from.
type Provenance struct {
	Image    string
	Source   string // the upstream URL; pass it redacted
	Ref      string
	Revision string
	Created  time.Time
	Patches  []PatchID
}

// PatchID is one patch of the series: its name and patch-id (series.Idents).
type PatchID = series.Ident

// Annotations renders the provenance as annotations (used as labels too).
func (p Provenance) Annotations() map[string]string {
	ids := make([]string, 0, len(p.Patches))
	for _, pt := range p.Patches {
		ids = append(ids, pt.Name+"="+pt.ID)
	}
	m := map[string]string{
		AnnotationSource:      p.Source,
		AnnotationRevision:    p.Revision,
		AnnotationCreated:     epoch(p.Created).Format(time.RFC3339),
		AnnotationImage:       p.Image,
		AnnotationUpstreamRef: p.Ref,
		AnnotationPatches:     strings.Join(ids, ","),
		AnnotationSeries:      series.Fingerprint(p.Patches),
	}
	for k, v := range m {
		if v == "" && k != AnnotationPatches {
			delete(m, k)
		}
	}
	return m
}
