package upstream

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/klauspost/compress/zlib"
	"golang.org/x/sys/unix"
)

// packSet reads objects straight from the pack files of a cache, for a walk
// over a whole tree (Snapshot.Walk). go-git resolves each deltified object
// from scratch through an LRU that hashes every object it caches; in a
// full-history cache, where a pinned release's blobs are deltas in chains
// against later revisions, that was most of `apply --out`'s time. A
// packSet plans the walk first: it reads the object headers of every
// chain the walk needs and counts how many planned objects use each one.
// Then either forest decodes all of them depth-first, each once, holding
// only the chain at hand (the blobs), or read decodes one object at a time,
// keeping a base (within the budget) only until its last planned user (the
// trees, which the walk needs one by one to find the blobs). Each object
// handed out is verified once, by hashing its content against its id; the
// bases of its chain are not hashed (a damaged base yields a damaged
// object, which its hash catches, and zlib checks each stream's Adler-32
// anyway).
//
// A packSet has its own file descriptors and is not safe for concurrent
// use. Objects it does not find in a pack (loose ones) are for go-git.
type packSet struct {
	packs []*packFile
	nodes map[packKey]*packNode
	// budget bounds the bytes of decoded bases kept for later users; past
	// it a base is decoded again when needed.
	budget, held int
	br           *bufio.Reader
	zr           io.ReadCloser
	delta        []byte    // the current delta's instructions, reused
	pool         *blobPool // where buffers come from, and bases' go back to
	stats        packStats
}

// packStats counts a packSet's work, for tests: decoded is every object
// produced (a full object inflated or a delta applied), hashed every
// object verified.
type packStats struct{ decoded, hashed int }

// packKey names an object by where it is stored.
type packKey struct {
	pack int
	off  int64
}

// packNode is one object of a planned walk.
type packNode struct {
	typ  plumbing.ObjectType // as stored: a delta type, or the object's type
	size int64               // of the stored data (a delta's instructions)
	pack int                 // the pack holding it
	data int64               // offset of its zlib stream
	base packKey             // a delta's base
	// uses is how many planned objects still need this one: the deltas
	// based on it and the walk's own requests.
	uses    int
	content []byte              // the decoded object while kept for later uses
	otype   plumbing.ObjectType // the decoded object's type
	out     bool                // handed out: its buffer is never reused
	done    bool                // decoded at least once
	checked bool                // its content (kept) hashed to its id
	off     int64               // its offset in its pack
	// want is set on the objects a forest walk hands out, with their id.
	want    bool
	id      plumbing.Hash
	planned bool // its chain is planned (false: a cycle)
}

// packFile is one pack and its index, mapped read-only.
type packFile struct {
	idx  []byte
	n    int
	f    *os.File
	size int64
}

// maxDeltaChain bounds a delta chain (git writes at most 4095).
const maxDeltaChain = 10000

// defaultPackBudget bounds the bases a packSet keeps between their users.
const defaultPackBudget = 32 << 20

// openPacks opens every pack of the repository at repo. A pack or index
// that does not read as one is an error; the caller then reads through
// go-git, which reports the damage as such.
func openPacks(repo string) (*packSet, error) {
	idxs, err := filepath.Glob(filepath.Join(repo, "objects", "pack", "pack-*.idx"))
	if err != nil {
		return nil, err
	}
	ps := &packSet{nodes: map[packKey]*packNode{}, budget: defaultPackBudget, pool: &blobPool{}}
	for _, idx := range idxs {
		pf, err := openPack(idx)
		if err != nil {
			ps.close()
			return nil, err
		}
		ps.packs = append(ps.packs, pf)
	}
	return ps, nil
}

func openPack(idxPath string) (*packFile, error) {
	fi, err := os.Open(idxPath)
	if err != nil {
		return nil, err
	}
	defer fi.Close()
	st, err := fi.Stat()
	if err != nil {
		return nil, err
	}
	const head = 8 + 256*4
	if st.Size() < head+40 || st.Size() > 1<<40 {
		return nil, fmt.Errorf("%s: not a pack index", idxPath)
	}
	idx, err := unix.Mmap(int(fi.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mapping %s: %w", idxPath, err)
	}
	pf := &packFile{idx: idx}
	bad := func(why string) (*packFile, error) {
		pf.close()
		return nil, fmt.Errorf("%s: %s", idxPath, why)
	}
	if !bytes.Equal(idx[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		return bad("not a version 2 pack index")
	}
	pf.n = int(binary.BigEndian.Uint32(idx[8+255*4:]))
	if int64(head)+int64(pf.n)*28+40 > int64(len(idx)) {
		return bad("shorter than its object count")
	}
	pf.f, err = os.Open(strings.TrimSuffix(idxPath, ".idx") + ".pack")
	if err != nil {
		pf.close()
		return nil, err
	}
	ps, err := pf.f.Stat()
	if err != nil {
		pf.close()
		return nil, err
	}
	pf.size = ps.Size()
	var hdr [12]byte
	if _, err := pf.f.ReadAt(hdr[:], 0); err != nil || string(hdr[:4]) != "PACK" {
		return bad("its pack does not start with a pack header")
	}
	return pf, nil
}

func (pf *packFile) close() {
	if pf.idx != nil {
		unix.Munmap(pf.idx)
		pf.idx = nil
	}
	if pf.f != nil {
		pf.f.Close()
	}
}

func (ps *packSet) close() {
	for _, pf := range ps.packs {
		pf.close()
	}
	ps.packs = nil
}

// find returns the offset of object h in pf, or -1.
func (pf *packFile) find(h plumbing.Hash) int64 {
	const head = 8 + 256*4
	lo := 0
	if h[0] > 0 {
		lo = int(binary.BigEndian.Uint32(pf.idx[8+(int(h[0])-1)*4:]))
	}
	hi := int(binary.BigEndian.Uint32(pf.idx[8+int(h[0])*4:]))
	if hi > pf.n || lo > hi {
		return -1
	}
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		c := bytes.Compare(pf.idx[head+mid*20:head+mid*20+20], h[:])
		switch {
		case c == 0:
			return pf.offset(mid)
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return -1
}

// offset is the pack offset of the i-th object of the index, -1 when the
// index does not hold a valid one.
func (pf *packFile) offset(i int) int64 {
	at := 8 + 256*4 + pf.n*24 + i*4
	v := binary.BigEndian.Uint32(pf.idx[at:])
	if v&0x80000000 == 0 {
		return int64(v)
	}
	at = 8 + 256*4 + pf.n*28 + int(v&0x7fffffff)*8
	if at+8 > len(pf.idx)-40 {
		return -1
	}
	off := binary.BigEndian.Uint64(pf.idx[at:])
	if off > 1<<62 {
		return -1
	}
	return int64(off)
}

// locate returns where object h is stored; ok is false when no pack holds
// it (or ps is nil).
func (ps *packSet) locate(h plumbing.Hash) (packKey, bool) {
	if ps == nil {
		return packKey{}, false
	}
	for i, pf := range ps.packs {
		if off := pf.find(h); off >= 0 {
			return packKey{i, off}, true
		}
	}
	return packKey{}, false
}

// errBadPack is a pack entry that does not parse.
var errBadPack = errors.New("malformed pack entry")

// errTooLarge is an object, or a delta, larger than a packSet reads whole
// (packReadLimit): go-git streams it instead.
var errTooLarge = errors.New("too large to read whole")

// packReadLimit is the largest object or delta a packSet reads whole.
var packReadLimit int64 = maxObjectBuffer

// header reads the entry header at k.
func (ps *packSet) header(k packKey) (*packNode, error) {
	pf := ps.packs[k.pack]
	if k.off < 12 || k.off >= pf.size-20 {
		return nil, fmt.Errorf("%w: offset %d outside the pack", errBadPack, k.off)
	}
	var buf [32]byte
	n, err := pf.f.ReadAt(buf[:], k.off)
	if n == 0 && err != nil {
		return nil, err
	}
	b := buf[:n]
	i := 0
	next := func() (byte, bool) {
		if i >= len(b) {
			return 0, false
		}
		i++
		return b[i-1], true
	}
	c, _ := next()
	node := &packNode{typ: plumbing.ObjectType((c >> 4) & 7), size: int64(c & 15), pack: k.pack, off: k.off}
	for shift := 4; c&0x80 != 0; shift += 7 {
		var ok bool
		if c, ok = next(); !ok || shift > 56 {
			return nil, fmt.Errorf("%w at offset %d: size", errBadPack, k.off)
		}
		node.size |= int64(c&0x7f) << shift
	}
	switch node.typ {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	case plumbing.OFSDeltaObject:
		c, ok := next()
		rel := int64(c & 0x7f)
		for ok && c&0x80 != 0 {
			if c, ok = next(); !ok || rel > 1<<48 {
				break
			}
			rel = (rel+1)<<7 | int64(c&0x7f)
		}
		if !ok || rel <= 0 || rel > k.off {
			return nil, fmt.Errorf("%w at offset %d: delta base", errBadPack, k.off)
		}
		node.base = packKey{k.pack, k.off - rel}
	case plumbing.REFDeltaObject:
		if i+20 > len(b) {
			return nil, fmt.Errorf("%w at offset %d: delta base", errBadPack, k.off)
		}
		var h plumbing.Hash
		copy(h[:], b[i:i+20])
		i += 20
		base, ok := ps.locate(h)
		if !ok {
			return nil, fmt.Errorf("delta base %s of the entry at offset %d: %w", h, k.off, plumbing.ErrObjectNotFound)
		}
		node.base = base
	default:
		return nil, fmt.Errorf("%w at offset %d: type %d", errBadPack, k.off, node.typ)
	}
	node.data = k.off + int64(i)
	return node, nil
}

// plan adds object k, and the chain of bases it is stored against, to the
// walk: one more use of k.
func (ps *packSet) plan(k packKey) error {
	var added []*packNode
	defer func() {
		for _, n := range added {
			n.planned = true
		}
	}()
	for {
		if n, ok := ps.nodes[k]; ok {
			if !n.planned {
				return fmt.Errorf("%w at offset %d: delta cycle", errBadPack, k.off)
			}
			n.uses++
			return nil
		}
		n, err := ps.header(k)
		if err != nil {
			return err
		}
		n.uses = 1
		ps.nodes[k] = n
		added = append(added, n)
		if !isDelta(n.typ) {
			n.otype = n.typ
			return nil
		}
		if len(added) > maxDeltaChain {
			return fmt.Errorf("%w at offset %d: delta chain longer than %d", errBadPack, k.off, maxDeltaChain)
		}
		k = n.base
	}
}

func isDelta(t plumbing.ObjectType) bool {
	return t == plumbing.OFSDeltaObject || t == plumbing.REFDeltaObject
}

// read returns the content of planned object k, verified against id, and
// uses it once. The packSet never reuses the slice; owned says no other
// read returned it or will (the object was decoded for this read and not
// kept for another).
func (ps *packSet) read(k packKey, id plumbing.Hash) (t plumbing.ObjectType, data []byte, owned bool, err error) {
	n := ps.nodes[k]
	if n == nil || !n.planned {
		return 0, nil, false, fmt.Errorf("object at offset %d was not planned", k.off)
	}
	fresh := n.content == nil
	data, err = ps.produce(n)
	if err != nil {
		return 0, nil, false, err
	}
	if fresh || !n.checked {
		if got := hashObject(n.otype, data); got != id {
			return 0, nil, false, errHashMismatch
		}
		ps.stats.hashed++
	}
	n.out = true
	ps.keep(n, data)
	n.checked = n.content != nil
	if n.uses--; n.uses <= 0 {
		ps.drop(n)
	}
	return n.otype, data, fresh && n.content == nil, nil
}

// forest decodes every planned object once, depth-first from the full
// object at the bottom of each chain (in pack order) through the deltas
// based on it, the way git's index-pack resolves a pack: only the objects
// on the path from the bottom to the delta at hand are held, whatever the
// budget. Each object marked want is hashed against its id and handed to
// emit; reusable says nothing reads data after emit returns (the object is
// no delta's base), so its buffer may serve again. On an object that does
// not decode or hash, forest returns it (or, for a base, the first wanted
// object built on it) with the error; an error of emit comes back as is
// with a nil object.
func (ps *packSet) forest(emit func(n *packNode, data []byte, reusable bool) error) (*packNode, error) {
	children := map[*packNode][]*packNode{}
	var roots []*packNode
	for _, n := range ps.nodes {
		if !isDelta(n.typ) {
			roots = append(roots, n)
			continue
		}
		b := ps.nodes[n.base]
		if b == nil {
			return ps.wanted(n, children), fmt.Errorf("%w: delta base at offset %d was not planned", errBadPack, n.base.off)
		}
		children[b] = append(children[b], n)
	}
	byOffset := func(ns []*packNode) {
		sort.Slice(ns, func(i, j int) bool {
			if ns[i].pack != ns[j].pack {
				return ns[i].pack < ns[j].pack
			}
			return ns[i].off < ns[j].off
		})
	}
	byOffset(roots)
	var visit func(n *packNode, data []byte) (*packNode, error)
	visit = func(n *packNode, data []byte) (*packNode, error) {
		kids := children[n]
		if n.want {
			if hashObject(n.otype, data) != n.id {
				return n, errHashMismatch
			}
			ps.stats.hashed++
			if err := emit(n, data, len(kids) == 0); err != nil {
				return nil, err
			}
		}
		byOffset(kids)
		for _, c := range kids {
			if c.size > packReadLimit {
				return ps.wanted(c, children), fmt.Errorf("delta of %d bytes: %w", c.size, errTooLarge)
			}
			if cap(ps.delta) < int(c.size) {
				ps.delta = make([]byte, c.size)
			}
			delta := ps.delta[:c.size]
			if err := ps.inflate(ps.packs[c.pack], c.data, delta); err != nil {
				return ps.wanted(c, children), err
			}
			out, err := ps.applyDelta(data, delta)
			if err != nil {
				return ps.wanted(c, children), err
			}
			ps.stats.decoded++
			c.otype = n.otype
			if bad, err := visit(c, out); err != nil {
				return bad, err
			}
		}
		if !n.want {
			ps.recycle(data)
		}
		return nil, nil
	}
	for _, r := range roots {
		if r.size > packReadLimit {
			return ps.wanted(r, children), fmt.Errorf("object of %d bytes: %w", r.size, errTooLarge)
		}
		data := ps.alloc(int(r.size))
		if err := ps.inflate(ps.packs[r.pack], r.data, data); err != nil {
			return ps.wanted(r, children), err
		}
		ps.stats.decoded++
		r.otype = r.typ
		if bad, err := visit(r, data); err != nil {
			return bad, err
		}
	}
	return nil, nil
}

// wanted is n if the walk wants it, else the first wanted object built on
// it (n itself when none is).
func (ps *packSet) wanted(n *packNode, children map[*packNode][]*packNode) *packNode {
	if n.want {
		return n
	}
	for _, c := range children[n] {
		if w := ps.wanted(c, children); w.want {
			return w
		}
	}
	return n
}

// produce decodes n: from the nearest kept object of its chain, or from
// the chain's full object, applying the deltas above it. Every object
// decoded on the way that has later uses is kept (within the budget); the
// others' buffers are reused.
func (ps *packSet) produce(n *packNode) ([]byte, error) {
	if n.content != nil {
		return n.content, nil
	}
	var chain []*packNode
	b := n
	for b.content == nil && isDelta(b.typ) {
		chain = append(chain, b)
		next := ps.nodes[b.base]
		if next == nil || len(chain) > maxDeltaChain {
			return nil, fmt.Errorf("%w: delta base at offset %d was not planned", errBadPack, b.base.off)
		}
		b = next
	}
	cur := b.content
	if cur == nil {
		if b.size > packReadLimit {
			return nil, fmt.Errorf("object of %d bytes: %w", b.size, errTooLarge)
		}
		cur = ps.alloc(int(b.size))
		if err := ps.inflate(ps.packs[b.pack], b.data, cur); err != nil {
			return nil, err
		}
		ps.stats.decoded++
		b.done = true
		if b != n {
			ps.keep(b, cur)
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		d, base := chain[i], b
		if d.size > packReadLimit {
			return nil, fmt.Errorf("delta of %d bytes: %w", d.size, errTooLarge)
		}
		if cap(ps.delta) < int(d.size) {
			ps.delta = make([]byte, d.size)
		}
		delta := ps.delta[:d.size]
		if err := ps.inflate(ps.packs[d.pack], d.data, delta); err != nil {
			return nil, err
		}
		out, err := ps.applyDelta(cur, delta)
		if err != nil {
			return nil, err
		}
		ps.stats.decoded++
		d.done, d.otype = true, base.otype
		// base has been used once more.
		kept := base.content != nil
		if base.uses--; base.uses <= 0 {
			ps.drop(base)
		}
		if !kept {
			ps.recycle(cur)
		}
		if d != n {
			ps.keep(d, out)
		}
		cur, b = out, d
	}
	return cur, nil
}

// keep holds n's content for its later uses, within the budget.
// It is called before the use at hand is counted: n is kept when it has
// another.
func (ps *packSet) keep(n *packNode, content []byte) {
	if n.uses <= 1 || n.content != nil || ps.held+len(content) > ps.budget {
		return
	}
	n.content = content
	ps.held += len(content)
}

// drop forgets n's content; its buffer is reused unless handed out.
func (ps *packSet) drop(n *packNode) {
	if n.content == nil {
		return
	}
	ps.held -= len(n.content)
	if !n.out {
		ps.recycle(n.content)
	}
	n.content, n.checked = nil, false
}

// alloc returns a buffer of n bytes, to be overwritten whole.
func (ps *packSet) alloc(n int) []byte { return ps.pool.get(n) }

// recycle gives back the buffer of a base no one holds any longer.
func (ps *packSet) recycle(b []byte) { ps.pool.putBuf(b) }

// inflate reads the zlib stream at off of pf into dst, which must be
// exactly its size: the stream must end there (its checksum is checked).
func (ps *packSet) inflate(pf *packFile, off int64, dst []byte) error {
	if off >= pf.size {
		return fmt.Errorf("%w: data at offset %d outside the pack", errBadPack, off)
	}
	sec := io.NewSectionReader(pf.f, off, pf.size-off)
	if ps.br == nil {
		ps.br = bufio.NewReaderSize(sec, 8<<10)
	} else {
		ps.br.Reset(sec)
	}
	var err error
	if ps.zr == nil {
		ps.zr, err = zlib.NewReader(ps.br)
	} else {
		err = ps.zr.(zlib.Resetter).Reset(ps.br, nil)
	}
	if err != nil {
		return fmt.Errorf("inflating the entry at offset %d: %w", off, err)
	}
	if _, err := io.ReadFull(ps.zr, dst); err != nil {
		return fmt.Errorf("inflating the entry at offset %d: %w", off, err)
	}
	var one [1]byte
	if m, err := ps.zr.Read(one[:]); m > 0 || !errors.Is(err, io.EOF) {
		if err == nil || m > 0 {
			err = errors.New("longer than its stated size")
		}
		return fmt.Errorf("inflating the entry at offset %d: %w", off, err)
	}
	return nil
}

// applyDelta applies git delta instructions to base.
func (ps *packSet) applyDelta(base, delta []byte) ([]byte, error) {
	bad := func(why string) ([]byte, error) { return nil, fmt.Errorf("%w: delta %s", errBadPack, why) }
	src, delta, ok := deltaSize(delta)
	if !ok || src != uint64(len(base)) {
		return bad("base size does not match")
	}
	dst, delta, ok := deltaSize(delta)
	if !ok {
		return bad("target size")
	}
	if dst > uint64(packReadLimit) {
		return nil, fmt.Errorf("delta target of %d bytes: %w", dst, errTooLarge)
	}
	out := ps.alloc(int(dst))
	w := 0
	for len(delta) > 0 {
		c := delta[0]
		delta = delta[1:]
		switch {
		case c&0x80 != 0:
			var off, size uint64
			for i := 0; i < 4; i++ {
				if c&(1<<i) != 0 {
					if len(delta) == 0 {
						return bad("copy truncated")
					}
					off |= uint64(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			for i := 0; i < 3; i++ {
				if c&(0x10<<i) != 0 {
					if len(delta) == 0 {
						return bad("copy truncated")
					}
					size |= uint64(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			if size == 0 {
				size = 0x10000
			}
			if off+size > uint64(len(base)) || uint64(w)+size > dst {
				return bad("copy out of bounds")
			}
			w += copy(out[w:], base[off:off+size])
		case c != 0:
			if int(c) > len(delta) || w+int(c) > int(dst) {
				return bad("insert out of bounds")
			}
			w += copy(out[w:], delta[:c])
			delta = delta[c:]
		default:
			return bad("opcode 0")
		}
	}
	if uint64(w) != dst {
		return bad("shorter than its target size")
	}
	return out, nil
}

// deltaSize reads one of the variable-length sizes opening a delta.
func deltaSize(b []byte) (uint64, []byte, bool) {
	var v uint64
	for i, shift := 0, 0; i < len(b) && shift < 64; i, shift = i+1, shift+7 {
		v |= uint64(b[i]&0x7f) << shift
		if b[i]&0x80 == 0 {
			return v, b[i+1:], true
		}
	}
	return 0, nil, false
}

// hashObject is the object id of content of type t.
func hashObject(t plumbing.ObjectType, content []byte) plumbing.Hash {
	sum := sha1.New()
	var hdr [32]byte
	h := append(append(append(hdr[:0], t.String()...), ' '), strconv.Itoa(len(content))...)
	sum.Write(append(h, 0))
	sum.Write(content)
	var id plumbing.Hash
	sum.Sum(id[:0])
	return id
}
