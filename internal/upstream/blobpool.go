package upstream

import (
	"math/bits"
	"sync"

	"github.com/patchkit/patchkit/internal/tree"
)

// blobPool holds the buffers of blobs a Snapshot's walk handed out and its
// consumer gave back (tree.Recycler: WriteAtomic, once a file is written),
// so that a walk over thousands of files reuses a few hundred buffers
// rather than growing the heap by the size of the tree. Buffers have
// power-of-two capacities; a walk only ever hands out a buffer it filled
// completely. Safe for concurrent use.
type blobPool struct {
	mu   sync.Mutex
	free [poolClasses][][]byte
	held int
	// owned are the files whose buffer no one else holds (not the memo's,
	// not kept for another path): only those are taken back.
	owned map[*tree.File]struct{}
}

const (
	poolMin     = 9  // buffers under 512 bytes are not pooled
	poolClasses = 21 // nor those over 1 MiB
	poolMax     = 8 << 20
)

func poolClass(n int) int { return bits.Len(uint(n - 1)) }

// get returns a buffer of n bytes whose content is to be overwritten.
func (bp *blobPool) get(n int) []byte {
	c := poolClass(n)
	if n <= 0 || c < poolMin || c >= poolClasses {
		return make([]byte, n)
	}
	bp.mu.Lock()
	defer bp.mu.Unlock()
	if l := len(bp.free[c]); l > 0 {
		b := bp.free[c][l-1]
		bp.free[c] = bp.free[c][:l-1]
		bp.held -= cap(b)
		return b[:n]
	}
	return make([]byte, n, 1<<c)
}

// own records that f's buffer, from get, is f's alone.
func (bp *blobPool) own(f *tree.File) {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	if bp.owned == nil {
		bp.owned = map[*tree.File]struct{}{}
	}
	bp.owned[f] = struct{}{}
}

// put takes back f's buffer if f owns it.
func (bp *blobPool) put(f *tree.File) {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	if _, ok := bp.owned[f]; !ok {
		return
	}
	delete(bp.owned, f)
	bp.putLocked(f.Data)
}

// putBuf takes back a buffer from get that no one holds any longer.
func (bp *blobPool) putBuf(b []byte) {
	bp.mu.Lock()
	defer bp.mu.Unlock()
	bp.putLocked(b)
}

func (bp *blobPool) putLocked(b []byte) {
	c := poolClass(cap(b))
	if cap(b) != 1<<c || c < poolMin || c >= poolClasses || bp.held+cap(b) > poolMax {
		return
	}
	bp.free[c] = append(bp.free[c], b[:0])
	bp.held += cap(b)
}

// Recycle implements tree.Recycler: WriteAtomic gives back each file of
// Walk once written.
func (s *Snapshot) Recycle(f *tree.File) { s.pool.put(f) }

var _ tree.Recycler = (*Snapshot)(nil)
