package series

// A line diff: Myers' O(ND) algorithm with the linear-space middle snake, as
// diff-match-patch's bisect implements it (its k-range trimming included).
// The renderer (render.go) and the three-way merge of internal/upgrade use it;
// it is deterministic, so the canonical text of a patch is a function of the
// two files alone.

// Op is the kind of one Edit.
type Op int

// The operations of an edit script.
const (
	OpEqual Op = iota
	OpDelete
	OpInsert
)

// Edit is one run of an edit script from a to b: N lines equal at A and B,
// N lines of a deleted at A, or N lines of b inserted at B (0-based).
type Edit struct {
	Op   Op
	A, B int
	N    int
}

// DiffLines returns the shortest edit script from a to b, lines compared as
// strings (a line keeps its "\n", so a last line without one differs from the
// same text with it). Runs of the same Op are merged; within a change,
// deletions come before insertions.
func DiffLines(a, b []string) []Edit {
	ids := map[string]int{}
	intern := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	d := &differ{a: intern(a), b: intern(b)}
	d.delA = make([]bool, len(a))
	d.insB = make([]bool, len(b))
	d.compare(0, len(a), 0, len(b))
	return d.script()
}

type differ struct {
	a, b       []int
	delA, insB []bool
}

// compare marks the changed lines of a[a0:a1] against b[b0:b1].
func (d *differ) compare(a0, a1, b0, b1 int) {
	for a0 < a1 && b0 < b1 && d.a[a0] == d.b[b0] {
		a0++
		b0++
	}
	for a0 < a1 && b0 < b1 && d.a[a1-1] == d.b[b1-1] {
		a1--
		b1--
	}
	switch {
	case a0 == a1:
		for j := b0; j < b1; j++ {
			d.insB[j] = true
		}
	case b0 == b1:
		for i := a0; i < a1; i++ {
			d.delA[i] = true
		}
	default:
		x, y, ok := d.bisect(a0, a1, b0, b1)
		if !ok {
			for i := a0; i < a1; i++ {
				d.delA[i] = true
			}
			for j := b0; j < b1; j++ {
				d.insB[j] = true
			}
			return
		}
		d.compare(a0, x, b0, y)
		d.compare(x, a1, y, b1)
	}
}

// bisect finds the middle snake of a[a0:a1] and b[b0:b1] and returns the
// point (absolute indexes) where the problem splits in two.
func (d *differ) bisect(a0, a1, b0, b1 int) (int, int, bool) {
	n, m := a1-a0, b1-b0
	maxD := (n + m + 1) / 2
	off := maxD
	vlen := 2*maxD + 2
	v1 := make([]int, vlen)
	v2 := make([]int, vlen)
	for i := range v1 {
		v1[i], v2[i] = -1, -1
	}
	v1[off+1], v2[off+1] = 0, 0
	delta := n - m
	front := delta%2 != 0
	k1start, k1end, k2start, k2end := 0, 0, 0, 0
	for dd := 0; dd < maxD; dd++ {
		for k1 := -dd + k1start; k1 <= dd-k1end; k1 += 2 {
			k1o := off + k1
			var x1 int
			if k1 == -dd || (k1 != dd && v1[k1o-1] < v1[k1o+1]) {
				x1 = v1[k1o+1]
			} else {
				x1 = v1[k1o-1] + 1
			}
			y1 := x1 - k1
			for x1 < n && y1 < m && d.a[a0+x1] == d.b[b0+y1] {
				x1++
				y1++
			}
			v1[k1o] = x1
			switch {
			case x1 > n:
				k1end += 2
			case y1 > m:
				k1start += 2
			case front:
				k2o := off + delta - k1
				if k2o >= 0 && k2o < vlen && v2[k2o] != -1 && x1 >= n-v2[k2o] {
					return a0 + x1, b0 + y1, true
				}
			}
		}
		for k2 := -dd + k2start; k2 <= dd-k2end; k2 += 2 {
			k2o := off + k2
			var x2 int
			if k2 == -dd || (k2 != dd && v2[k2o-1] < v2[k2o+1]) {
				x2 = v2[k2o+1]
			} else {
				x2 = v2[k2o-1] + 1
			}
			y2 := x2 - k2
			for x2 < n && y2 < m && d.a[a1-1-x2] == d.b[b1-1-y2] {
				x2++
				y2++
			}
			v2[k2o] = x2
			switch {
			case x2 > n:
				k2end += 2
			case y2 > m:
				k2start += 2
			case !front:
				k1o := off + delta - k2
				if k1o >= 0 && k1o < vlen && v1[k1o] != -1 {
					x1 := v1[k1o]
					y1 := off + x1 - k1o
					if x1 >= n-x2 {
						return a0 + x1, b0 + y1, true
					}
				}
			}
		}
	}
	return 0, 0, false
}

// script turns the change marks into runs.
func (d *differ) script() []Edit {
	var out []Edit
	add := func(op Op, a, b int) {
		if k := len(out) - 1; k >= 0 && out[k].Op == op {
			out[k].N++
			return
		}
		out = append(out, Edit{Op: op, A: a, B: b, N: 1})
	}
	i, j := 0, 0
	for i < len(d.a) || j < len(d.b) {
		switch {
		case i < len(d.a) && d.delA[i]:
			add(OpDelete, i, j)
			i++
		case j < len(d.b) && d.insB[j]:
			add(OpInsert, i, j)
			j++
		default:
			add(OpEqual, i, j)
			i++
			j++
		}
	}
	return out
}
