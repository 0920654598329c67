package upstream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/tree"
)

// deltaRepo is a repository whose history rewrites similar files one line
// at a time, repacked so that most objects are deltas in long chains (as
// in a full-history cache); with ref, its deltas name their bases by id
// (REF_DELTA) instead of by offset.
func deltaRepo(t *testing.T, ref bool) *gittest.Repo {
	t.Helper()
	r := gittest.New(t)
	body := func(f, rev int) string {
		var s strings.Builder
		for l := 0; l < 60; l++ {
			fmt.Fprintf(&s, "file %d line %d: text shared by every file of the fixture\n", f%3, l)
		}
		fmt.Fprintf(&s, "file %d revision %d\n", f, rev)
		return s.String()
	}
	for f := 0; f < 12; f++ {
		r.Write(fmt.Sprintf("d%d/f%02d.txt", f%3, f), body(f, 0))
	}
	r.Write("same/a.txt", body(99, 0))
	r.Write("same/b.txt", body(99, 0)) // one blob at two paths
	r.Commit("v0")
	r.Tag("v0")
	for rev := 1; rev <= 30; rev++ {
		r.Write(fmt.Sprintf("d%d/f%02d.txt", rev%3, rev%12), body(rev%12, rev))
		r.Commit(fmt.Sprintf("rev %d", rev))
	}
	r.Tag("v1")
	args := []string{"repack", "-adfq", "--window=50", "--depth=50"}
	if ref {
		args = append([]string{"-c", "repack.useDeltaBaseOffset=false"}, args...)
	}
	r.Git(args...)
	return r
}

// repoPacks opens the packs of r, closed when the test ends.
func repoPacks(t *testing.T, r *gittest.Repo) *packSet {
	t.Helper()
	ps, err := openPacks(filepath.Join(r.Dir, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ps.close)
	return ps
}

// treeBlobs lists the blobs of the tree of rev, by path.
func treeBlobs(t *testing.T, r *gittest.Repo, rev string) map[string]plumbing.Hash {
	t.Helper()
	out := map[string]plumbing.Hash{}
	for _, l := range strings.Split(r.Git("ls-tree", "-r", rev), "\n") {
		f := strings.Fields(l)
		if len(f) == 4 && f[1] == "blob" {
			out[f[3]] = plumbing.NewHash(f[2])
		}
	}
	return out
}

// TestPackSetResolvesEachBaseOnce reads every blob of an old tree (deltas
// against later revisions) through a packSet: each reads back as git's
// cat-file gives it, each object of the chains is decoded exactly once
// (bases shared by several blobs are kept between their users), and each
// blob read is hashed once.
func TestPackSetResolvesEachBaseOnce(t *testing.T) {
	for _, ref := range []bool{false, true} {
		t.Run(fmt.Sprintf("ref-delta=%v", ref), func(t *testing.T) {
			r := deltaRepo(t, ref)
			ps := repoPacks(t, r)
			blobs := treeBlobs(t, r, "v0")
			keys := map[string]packKey{}
			for p, id := range blobs {
				k, ok := ps.locate(id)
				if !ok {
					t.Fatalf("blob %s of %s is in no pack", id, p)
				}
				if err := ps.plan(k); err != nil {
					t.Fatal(err)
				}
				keys[p] = k
			}
			deltas := 0
			for _, n := range ps.nodes {
				if isDelta(n.typ) {
					deltas++
				}
			}
			if deltas < len(blobs)/2 {
				t.Fatalf("only %d of %d planned objects are deltas: the fixture does not test chains", deltas, len(ps.nodes))
			}
			for p, id := range blobs {
				typ, data, _, err := ps.read(keys[p], id)
				if err != nil {
					t.Fatalf("read %s: %v", p, err)
				}
				want := r.Git("cat-file", "blob", id.String())
				if typ != plumbing.BlobObject || strings.TrimSuffix(string(data), "\n") != want {
					t.Errorf("read %s = %s %q, want blob %q", p, typ, data, want)
				}
			}
			if ps.stats.decoded != len(ps.nodes) {
				t.Errorf("decoded %d objects for %d planned: each should be decoded once", ps.stats.decoded, len(ps.nodes))
			}
			distinct := map[plumbing.Hash]bool{}
			for _, id := range blobs {
				distinct[id] = true
			}
			if ps.stats.hashed != len(distinct) || len(distinct) == len(blobs) {
				t.Errorf("hashed %d objects for %d reads of %d distinct blobs: want each blob hashed once", ps.stats.hashed, len(blobs), len(distinct))
			}
			if ps.held != 0 {
				t.Errorf("after the last read the packSet still keeps %d bytes of bases", ps.held)
			}
		})
	}
}

// TestPackSetWithoutBudget: with no room to keep bases, every read is still
// right; shared bases are then decoded again.
func TestPackSetWithoutBudget(t *testing.T) {
	r := deltaRepo(t, false)
	ps := repoPacks(t, r)
	ps.budget = 0
	blobs := treeBlobs(t, r, "v0")
	for _, id := range blobs {
		k, _ := ps.locate(id)
		if err := ps.plan(k); err != nil {
			t.Fatal(err)
		}
	}
	for p, id := range blobs {
		k, _ := ps.locate(id)
		if _, data, _, err := ps.read(k, id); err != nil || strings.TrimSuffix(string(data), "\n") != r.Git("cat-file", "blob", id.String()) {
			t.Fatalf("read %s = %v", p, err)
		}
	}
	if ps.stats.decoded <= len(ps.nodes) {
		t.Errorf("decoded %d objects for %d planned with no budget; want more (shared bases decoded again)", ps.stats.decoded, len(ps.nodes))
	}
}

// packEntry returns the offset and stored size of object id in the pack of
// repo (git verify-pack), and the pack's path.
func packEntry(t *testing.T, gitDir, id string) (pack string, off, size int64) {
	t.Helper()
	idx, _ := filepath.Glob(filepath.Join(gitDir, "objects/pack/*.idx"))
	for _, i := range idx {
		out, _, err := gittest.Run(gitDir, nil, "verify-pack", "-v", i)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			if len(f) >= 5 && f[0] == id {
				size, _ = strconv.ParseInt(f[3], 10, 64)
				off, _ = strconv.ParseInt(f[4], 10, 64)
				return strings.TrimSuffix(i, ".idx") + ".pack", off, size
			}
		}
	}
	t.Fatalf("%s is in no pack", id)
	return "", 0, 0
}

// baseOnly returns an object that is a delta base of a blob of v0 and not
// itself a blob of v0.
func baseOnly(t *testing.T, r *gittest.Repo) (base string, user plumbing.Hash) {
	t.Helper()
	wanted := map[string]bool{}
	blobs := treeBlobs(t, r, "v0")
	for _, id := range blobs {
		wanted[id.String()] = true
	}
	idx, _ := filepath.Glob(filepath.Join(r.Dir, ".git/objects/pack/*.idx"))
	out, _, _ := gittest.Run(r.Dir, nil, "verify-pack", "-v", idx[0])
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 7 && wanted[f[0]] && !wanted[f[6]] {
			return f[6], plumbing.NewHash(f[0])
		}
	}
	t.Fatal("no blob of v0 is a delta against an object outside v0")
	return "", plumbing.ZeroHash
}

// TestPackSetDamagedBase: a byte flipped inside an object that only serves
// as a delta base, never read itself, still makes the blob built on it an
// error (not wrong content, not a panic).
func TestPackSetDamagedBase(t *testing.T) {
	r := deltaRepo(t, false)
	gitDir := filepath.Join(r.Dir, ".git")
	base, user := baseOnly(t, r)
	pack, off, size := packEntry(t, gitDir, base)
	gittest.FlipBit(t, pack, off+size-3)
	ps, err := openPacks(gitDir)
	if err != nil {
		t.Fatal(err)
	}
	defer ps.close()
	k, _ := ps.locate(user)
	if err := ps.plan(k); err != nil {
		t.Fatal(err)
	}
	if _, data, _, err := ps.read(k, user); err == nil {
		t.Fatalf("read of a blob whose base is damaged = %q, want an error", data)
	}
}

// TestWalkDamagedDeltaBase: Materialize from a cache whose pack has a
// damaged delta base (an object of the history the tree does not hold) is
// a cache fault naming the blob, and writes nothing.
func TestWalkDamagedDeltaBase(t *testing.T) {
	r := deltaRepo(t, false)
	dir := t.TempDir()
	c := open(t, dir, r.URL())
	base, user := baseOnly(t, r)
	pack, off, size := packEntry(t, c.Path(), base)
	gittest.FlipBit(t, pack, off+size-3)
	out := filepath.Join(t.TempDir(), "out")
	err := c.Materialize(context.Background(), "v0", out)
	var cf *CacheFaultError
	if !errors.As(err, &cf) || !strings.Contains(err.Error(), user.String()) {
		t.Fatalf("Materialize() on a damaged base = %v, want a *CacheFaultError naming %s", err, user)
	}
	if _, err := os.Lstat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Materialize() that failed left %s (%v)", out, err)
	}
	if got := leftovers(t, filepath.Dir(out)); len(got) != 0 {
		t.Errorf("Materialize() that failed left %v", got)
	}
}

// TestWalkHashesEachBlobOnce: a Walk over a deltified cache reads every
// blob through one packSet, hashing each blob it reads once and decoding
// each object of the chains once; blobs Read already verified (in the
// memo) are neither read nor hashed again.
func TestWalkHashesEachBlobOnce(t *testing.T) {
	r := deltaRepo(t, false)
	c := open(t, t.TempDir(), r.URL())
	snap, err := c.Source("v0")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := snap.Read("d0/f00.txt"); !ok || err != nil {
		t.Fatalf("Read = %v %v", ok, err)
	}
	distinct := map[plumbing.Hash]bool{}
	blobs := treeBlobs(t, r, "v0")
	for _, id := range blobs {
		distinct[id] = true
	}
	got := map[string]string{}
	if err := snap.Walk(func(p string, f *tree.File) error {
		got[p] = string(f.Data)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for p, id := range blobs {
		if strings.TrimSuffix(got[p], "\n") != r.Git("cat-file", "blob", id.String()) {
			t.Errorf("Walk gave %s = %q", p, got[p])
		}
	}
	trees := strings.Count(r.Git("ls-tree", "-r", "-d", "v0"), "\n") + 2 // and the root
	// Read verified one blob and two trees (the root and d0), which the
	// walk takes from the memo; the two paths of one blob share a read.
	if want := len(distinct) - 1 + trees - 2; snap.walked.hashed != want {
		t.Errorf("Walk hashed %d objects, want %d (%d distinct blobs and %d trees, less the blob and two trees Read verified)", snap.walked.hashed, want, len(distinct), trees)
	}
	if snap.walked.decoded == 0 {
		t.Error("Walk read nothing through the packs")
	}
}

// FuzzApplyDelta: delta instructions of any shape give a result or an
// error, never a panic, and never a result of another size than the one
// the delta states.
func FuzzApplyDelta(f *testing.F) {
	f.Add([]byte("hello world"), []byte{11, 5, 0x90, 5})                   // copy 5 from 0
	f.Add([]byte("hello world"), []byte{11, 3, 3, 'a', 'b', 'c'})          // insert
	f.Add([]byte("hello world"), []byte{11, 5, 0x91, 8, 5})                // copy past the end
	f.Add([]byte("hello world"), []byte{11, 5, 0})                         // opcode 0
	f.Add([]byte("hello world"), []byte{10, 1, 1, 'x'})                    // wrong base size
	f.Add([]byte("hello world"), []byte{11, 0x80})                         // truncated size
	f.Add([]byte("hello world"), []byte{11, 4, 0xff, 0, 0, 0, 0, 4, 0, 0}) // every copy byte
	f.Add([]byte(""), []byte{0, 0x80, 0x80, 0x04, 0x80})                   // 64 KiB target, 0-size copy
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		ps := &packSet{pool: &blobPool{}}
		out, err := ps.applyDelta(base, delta)
		if err != nil {
			return
		}
		_, rest, _ := deltaSize(delta)
		want, _, _ := deltaSize(rest)
		if uint64(len(out)) != want {
			t.Fatalf("applyDelta gave %d bytes, the delta states %d", len(out), want)
		}
	})
}

// TestWalkTruncatedPack: Materialize from a cache whose pack is cut short
// inside a blob of the tree is a cache fault, and writes nothing.
func TestWalkTruncatedPack(t *testing.T) {
	r := deltaRepo(t, false)
	c := open(t, t.TempDir(), r.URL())
	id := treeBlobs(t, r, "v0")["d1/f04.txt"]
	pack, off, size := packEntry(t, c.Path(), id.String())
	if err := os.Truncate(pack, off+size/2); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	err := c.Materialize(context.Background(), "v0", out)
	var cf *CacheFaultError
	if !errors.As(err, &cf) {
		t.Fatalf("Materialize() on a truncated pack = %v, want a *CacheFaultError", err)
	}
	if _, err := os.Lstat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Materialize() that failed left %s (%v)", out, err)
	}
}

// TestWalkLargeObjectsThroughGoGit: objects larger than a packSet reads
// whole are read through go-git, and the walk still gives every file.
func TestWalkLargeObjectsThroughGoGit(t *testing.T) {
	r := deltaRepo(t, false)
	c := open(t, t.TempDir(), r.URL())
	defer func(l int64) { packReadLimit = l }(packReadLimit)
	packReadLimit = 100 // below every blob of the fixture
	snap, err := c.Source("v0")
	if err != nil {
		t.Fatal(err)
	}
	blobs := treeBlobs(t, r, "v0")
	n := 0
	if err := snap.Walk(func(p string, f *tree.File) error {
		n++
		if want := r.Git("cat-file", "blob", blobs[p].String()); strings.TrimSuffix(string(f.Data), "\n") != want {
			t.Errorf("Walk gave %s = %q, want %q", p, f.Data, want)
		}
		return nil
	}); err != nil {
		t.Fatalf("Walk() = %v", err)
	}
	if n != len(blobs) {
		t.Errorf("Walk gave %d files, want %d", n, len(blobs))
	}
}

// TestPackSetForest: a forest walk hands out every wanted blob once, as
// git's cat-file gives it, decoding each planned object exactly once
// (whatever the budget: it keeps no base beyond the chain at hand) and
// hashing each wanted object once; a blob no delta is based on is the
// only kind whose buffer may serve again.
func TestPackSetForest(t *testing.T) {
	for _, ref := range []bool{false, true} {
		t.Run(fmt.Sprintf("ref-delta=%v", ref), func(t *testing.T) {
			r := deltaRepo(t, ref)
			ps := repoPacks(t, r)
			ps.budget = 0
			want := map[plumbing.Hash]bool{}
			for _, id := range treeBlobs(t, r, "v0") {
				k, _ := ps.locate(id)
				if err := ps.plan(k); err != nil {
					t.Fatal(err)
				}
				ps.nodes[k].want, ps.nodes[k].id = true, id
				want[id] = true
			}
			got := map[plumbing.Hash]int{}
			bad, err := ps.forest(func(n *packNode, data []byte, reusable bool) error {
				got[n.id]++
				if w := r.Git("cat-file", "blob", n.id.String()); strings.TrimSuffix(string(data), "\n") != w {
					t.Errorf("forest gave %s = %q, want %q", n.id, data, w)
				}
				based := false
				for _, m := range ps.nodes {
					based = based || (isDelta(m.typ) && ps.nodes[m.base] == n)
				}
				if reusable == based {
					t.Errorf("%s: reusable = %v, but it is a delta base: %v", n.id, reusable, based)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("forest() = %v at %v", err, bad)
			}
			for id := range want {
				if got[id] != 1 {
					t.Errorf("%s handed out %d times, want once", id, got[id])
				}
			}
			if ps.stats.decoded != len(ps.nodes) || ps.stats.hashed != len(want) {
				t.Errorf("decoded %d objects for %d planned, hashed %d for %d wanted: want each once", ps.stats.decoded, len(ps.nodes), ps.stats.hashed, len(want))
			}
		})
	}
}

// TestCheckReadsNoPackedRef: the integrity check on open finds every ref's
// object in a pack index without reading it (an upstream's hundreds of
// tags cost an index lookup each), and still fails on a ref at an object
// no pack or loose file holds.
func TestCheckReadsNoPackedRef(t *testing.T) {
	r := deltaRepo(t, false)
	for i := 0; i < 20; i++ {
		r.Git("tag", "-a", "-m", "t", fmt.Sprintf("nightly-%d", i), "v0")
	}
	dir := t.TempDir()
	c := open(t, dir, r.URL())
	s, err := openStore(c.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if out, _, _ := gittest.Run(c.Path(), nil, "tag", "-l", "nightly-*"); strings.Count(out, "nightly-") != 20 {
		t.Fatalf("the cache holds tags %q, want the 20 nightly ones", out)
	}
	before := hasReads.Load()
	if err := s.check(); err != nil {
		t.Fatalf("check() = %v", err)
	}
	if n := hasReads.Load() - before; n != 0 {
		t.Errorf("check() read %d objects that a pack index lists", n)
	}
	if err := os.WriteFile(filepath.Join(c.Path(), "refs/tags/nightly-3"), []byte(strings.Repeat("ab", 20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.check(); err == nil {
		t.Error("check() with a ref at a missing object = nil, want an error")
	}
}

// TestMaterializeDeltified: Materialize of an old tree of a deltified cache
// (blobs read depth-first through their chains, their buffers given back
// by the writer and used again) writes every file as git has it.
func TestMaterializeDeltified(t *testing.T) {
	r := deltaRepo(t, false)
	c := open(t, t.TempDir(), r.URL())
	out := filepath.Join(t.TempDir(), "out")
	if err := c.Materialize(context.Background(), "v0", out); err != nil {
		t.Fatal(err)
	}
	for p, id := range treeBlobs(t, r, "v0") {
		b, err := os.ReadFile(filepath.Join(out, p))
		if want := r.Git("cat-file", "blob", id.String()); err != nil || strings.TrimSuffix(string(b), "\n") != want {
			t.Errorf("%s = %q (%v), want %q", p, b, err, want)
		}
	}
}
