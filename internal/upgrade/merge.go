package upgrade

import (
	"slices"

	"github.com/patchkit/patchkit/internal/series"
)

// chunk is one change of a side against the base: base[b0:b1] became
// side[s0:s1].
type chunk struct{ b0, b1, s0, s1 int }

func chunks(base, side []string) []chunk {
	var out []chunk
	for _, e := range series.DiffLines(base, side) {
		switch e.Op {
		case series.OpDelete:
			out = append(out, chunk{e.A, e.A + e.N, e.B, e.B})
		case series.OpInsert:
			if k := len(out) - 1; k >= 0 && out[k].b1 == e.A && out[k].s1 == e.B {
				out[k].s1 = e.B + e.N // a replacement: the deletion just before
				continue
			}
			out = append(out, chunk{e.A, e.A, e.B, e.B + e.N})
		}
	}
	return out
}

// MergeConflict is one region where both sides changed the base differently.
type MergeConflict struct {
	// BaseLine is the 1-based line of the base where the region starts.
	BaseLine int
	Base     []string
	Ours     []string
	Theirs   []string
}

// Merge3 is a three-way merge of line sequences, as `git merge-file` does it:
// the changes from base to ours and from base to theirs are laid together;
// where both sides change the same or adjacent lines differently, the region
// is a conflict. It returns the merged lines (ours where a region conflicts)
// and the conflicts; the merge is clean when there are none.
func Merge3(base, ours, theirs []string) ([]string, []MergeConflict) {
	c1, c2 := chunks(base, ours), chunks(base, theirs)
	var out []string
	var conflicts []MergeConflict
	pos, i, j := 0, 0, 0
	for i < len(c1) || j < len(c2) {
		lo, hi := len(base)+1, -1
		i0, j0 := i, j
		takeA := func() { lo, hi = min(lo, c1[i].b0), max(hi, c1[i].b1); i++ }
		takeB := func() { lo, hi = min(lo, c2[j].b0), max(hi, c2[j].b1); j++ }
		if j >= len(c2) || (i < len(c1) && c1[i].b0 <= c2[j].b0) {
			takeA()
		} else {
			takeB()
		}
		for {
			switch {
			case i < len(c1) && c1[i].b0 <= hi:
				takeA()
			case j < len(c2) && c2[j].b0 <= hi:
				takeB()
			default:
				goto group
			}
		}
	group:
		out = append(out, base[pos:lo]...)
		o := sideRange(base, ours, c1[i0:i], lo, hi)
		t := sideRange(base, theirs, c2[j0:j], lo, hi)
		switch {
		case i0 == i:
			out = append(out, t...)
		case j0 == j, slices.Equal(o, t):
			out = append(out, o...)
		default:
			conflicts = append(conflicts, MergeConflict{BaseLine: lo + 1, Base: base[lo:hi], Ours: o, Theirs: t})
			out = append(out, o...)
		}
		pos = hi
	}
	return append(out, base[pos:]...), conflicts
}

// sideRange returns the side's lines for base[lo:hi], given the side's chunks
// that fall in it.
func sideRange(base, side []string, cs []chunk, lo, hi int) []string {
	if len(cs) == 0 {
		return base[lo:hi]
	}
	first, last := cs[0], cs[len(cs)-1]
	return side[first.s0-(first.b0-lo) : last.s1+(hi-last.b1)]
}
