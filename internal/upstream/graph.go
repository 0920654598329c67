package upstream

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io/fs"
	"math/bits"
	"os"
	"path/filepath"
	"strings"
)

// The housekeeping after a fetch costs what the fetch brought, as git's own
// automatic maintenance does: the commit-graph grows by a layer holding the
// new commits (a split graph, written by git fetch itself), and the loose
// refs a fetch writes are packed only once they are many.

// graphFile is the single-file commit-graph (caches before split graphs);
// graphDir holds a split graph: its chain file and one file per layer.
func graphFile(repo string) string { return filepath.Join(repo, "objects", "info", "commit-graph") }
func graphDir(repo string) string  { return filepath.Join(repo, "objects", "info", "commit-graphs") }

// hasCommitGraph reports whether the repository at repo has a commit-graph,
// a single file or a chain.
func hasCommitGraph(repo string) bool {
	for _, p := range []string{graphFile(repo), filepath.Join(graphDir(repo), "commit-graph-chain")} {
		if _, err := os.Lstat(p); err == nil {
			return true
		}
	}
	return false
}

// ensureCommitGraph writes the commit-graph of s whole when it has none and
// is not shallow (git ignores a graph there, so a partial cache does not pay
// for one): git fetch writes a layer of the commits it brought, which
// assumes the older ones are in the graph already; a cache whose graph
// the integrity check removed, or a partial cache just completed, has none.
func ensureCommitGraph(ctx context.Context, s *store) error {
	if hasShallow(s) || hasCommitGraph(s.path) {
		return nil
	}
	return writeCommitGraph(ctx, s.path)
}

// checkCommitGraph removes the commit-graph of the repository at repo when
// a file of it is damaged: git does not check a graph's trailing checksum
// (SHA-1 of the rest, as git writes it) when it reads it, and would take a
// damaged one's parents for the history. A split graph's chain names each
// layer by that checksum, and each layer names the layers below it (its
// BASE chunk): a layer whose checksum fails, a missing one or a chain that
// does not match its layers' own lists removes the whole split graph. The
// graph only speeds git up; without it git reads the commits themselves,
// and the next fetch writes it again (ensureCommitGraph).
func checkCommitGraph(repo string) {
	if data, err := os.ReadFile(graphFile(repo)); err == nil || !errors.Is(err, fs.ErrNotExist) {
		if err != nil || graphSum(data) == nil {
			os.Remove(graphFile(repo))
		}
	}
	chain, err := os.ReadFile(filepath.Join(graphDir(repo), "commit-graph-chain"))
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil || !graphChainOK(repo, chain) {
		removeSplitGraph(repo)
	}
}

// graphChainOK reports whether every layer the chain names is present,
// intact, and lists as its bases the layers before it in the chain.
func graphChainOK(repo string, chain []byte) bool {
	lines := strings.Split(strings.TrimSuffix(string(chain), "\n"), "\n")
	var below [][]byte
	for _, name := range lines {
		want, err := hex.DecodeString(name)
		if err != nil || len(want) != sha1.Size {
			return false
		}
		data, err := os.ReadFile(filepath.Join(graphDir(repo), "graph-"+name+".graph"))
		if err != nil {
			return false
		}
		if sum := graphSum(data); !bytes.Equal(sum, want) {
			return false
		}
		bases, ok := graphBases(data)
		if !ok || len(bases) != len(below) {
			return false
		}
		for i := range bases {
			if !bytes.Equal(bases[i], below[i]) {
				return false
			}
		}
		below = append(below, want)
	}
	return true
}

// graphSum is the trailing checksum of a commit-graph file when it matches
// the file's content, nil otherwise.
func graphSum(data []byte) []byte {
	if len(data) <= sha1.Size {
		return nil
	}
	sum := sha1.Sum(data[:len(data)-sha1.Size])
	if !bytes.Equal(sum[:], data[len(data)-sha1.Size:]) {
		return nil
	}
	return sum[:]
}

// graphBases reads the layers a commit-graph file is built on: the header's
// count (its eighth byte) and the ids in its BASE chunk, found through the
// chunk table that follows the 8-byte header (an id and an offset, 12 bytes
// each, ended by a zero id).
func graphBases(data []byte) ([][]byte, bool) {
	if len(data) < 8 || string(data[:4]) != "CGPH" {
		return nil, false
	}
	n := int(data[7])
	if n == 0 {
		return nil, true
	}
	chunks := int(data[6])
	for i := 0; i < chunks; i++ {
		at := 8 + 12*i
		if at+24 > len(data) {
			return nil, false
		}
		if string(data[at:at+4]) != "BASE" {
			continue
		}
		start, end := binary.BigEndian.Uint64(data[at+4:]), binary.BigEndian.Uint64(data[at+16:])
		if start > end || end > uint64(len(data)) || end-start != uint64(n*sha1.Size) {
			return nil, false
		}
		var bases [][]byte
		for j := 0; j < n; j++ {
			o := int(start) + j*sha1.Size
			bases = append(bases, data[o:o+sha1.Size])
		}
		return bases, true
	}
	return nil, false
}

// removeSplitGraph removes a split commit-graph: the chain first, so that
// git never reads a chain whose layers are going.
func removeSplitGraph(repo string) {
	dir := graphDir(repo)
	os.Remove(filepath.Join(dir, "commit-graph-chain"))
	os.RemoveAll(dir)
}

// removeGraphLeftovers removes what a killed commit-graph write leaves: the
// lock of the single file or of the chain, and a layer's temporary file.
// It runs under the exclusive lock, so no live git is writing them.
func removeGraphLeftovers(repo string) {
	os.Remove(graphFile(repo) + ".lock")
	os.Remove(filepath.Join(graphDir(repo), "commit-graph-chain.lock"))
	removeMatching(graphDir(repo), "tmp_graph_")
	removeMatching(filepath.Join(repo, "objects", "info"), "tmp_graph_")
}

// packRefsIfMany packs the loose refs of the bare repository at dir (see
// packRefs) once they are many, by the measure of git's own pack-refs
// --auto (git 2.46; this code runs with older gits): at least 16, and 5
// more each time packed-refs doubles past 100 bytes a ref. A first fetch
// writes a loose ref per tag and packs them; a fetch that brings a release
// writes two or three, which cost a later run as many file reads.
func packRefsIfMany(ctx context.Context, dir string) error {
	var packed int64
	if fi, err := os.Stat(filepath.Join(dir, "packed-refs")); err == nil {
		packed = fi.Size()
	}
	limit := packRefsLimit(packed)
	if looseRefs(dir, limit) < limit {
		return nil
	}
	return packRefs(ctx, dir)
}

// packRefsLimit is git's threshold of loose refs for a packed-refs file of
// size bytes: 5 × log2(size / 100), at least 16.
func packRefsLimit(size int64) int {
	limit := 0
	if n := uint64(size / 100); n > 0 {
		limit = 5 * (bits.Len64(n) - 1)
	}
	return max(limit, 16)
}

// looseRefs counts the loose ref files under dir/refs, up to stop.
func looseRefs(dir string, stop int) int {
	n := 0
	errStop := errors.New("stop")
	filepath.WalkDir(filepath.Join(dir, "refs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(d.Name(), ".lock") {
			return nil
		}
		if n++; n >= stop {
			return errStop
		}
		return nil
	})
	return n
}

// reindexIfChanged makes go-git read the pack indexes again when the packs
// changed since the store began reading them: another process fetched.
// Reading them costs every index of the cache, so a run that finds the
// packs as it opened them (a run with nothing new) keeps what it read.
// Packs are only ever added (no gc runs on a cache; a repair replaces the
// whole directory under the readers lock), so indexes read after the listing
// hold at least the packs it names.
func (s *store) reindexIfChanged() {
	if now := packNames(s.path); now != s.packs {
		s.st.Reindex()
		s.packs = now
	}
}

// packNames lists the pack files of the repository at repo, one string.
func packNames(repo string) string {
	entries, err := os.ReadDir(filepath.Join(repo, "objects", "pack"))
	if err != nil {
		return ""
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".pack") {
			names = append(names, e.Name())
		}
	}
	return strings.Join(names, "\n")
}
