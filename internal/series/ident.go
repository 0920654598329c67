package series

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Ident names one patch of a series for provenance: its file name and its
// patch-id.
type Ident struct {
	// Name is the patch's file name (0001-fix.diff).
	Name string `json:"name"`
	// ID is the patch's `git patch-id --stable`; for a traditional diff,
	// which git gives no patch-id, "sha256:" and the hash of its diff text.
	ID string `json:"patchID"`
}

// Idents names each patch of ps, in order.
func Idents(ps []*Patch) []Ident {
	out := make([]Ident, 0, len(ps))
	for _, p := range ps {
		id := p.PatchID
		if id == "" {
			sum := sha256.Sum256(p.Diff())
			id = "sha256:" + hex.EncodeToString(sum[:])
		}
		out = append(out, Ident{Name: p.Name, ID: id})
	}
	return out
}

// Fingerprint is the content hash of a series: sha256 over each patch's
// name and ID, in order, as "sha256:<hex>". Two series with the same
// fingerprint apply the same changes in the same order; a changed header
// alone (a note, a Subject) keeps it.
func Fingerprint(ids []Ident) string {
	h := sha256.New()
	for _, id := range ids {
		fmt.Fprintf(h, "%s\x00%s\n", id.Name, id.ID)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
