package obsolete

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
)

// verdictMemoName names the verdict memo's directory in the cache (upstream's
// DerivedDir), beside the history memo.
const verdictMemoName = "verdicts"

// verdictFormat names the verdict memo's format; a change of format is a
// change of key.
// 2: keys over the series' digest. Entries are gob, which keeps non-UTF-8
// subjects, paths and lines byte for byte (JSON would not).
const verdictFormat = "patchkit obsolete verdict memo 3"

// verdictMemo keeps each ref's results across runs. A ref's results are a
// function of content-addressed inputs only: the series (every patch's name,
// path and bytes, in order: a patch's verdict depends on those before it),
// the pin's commit, the ref's name, kind and commit (a commit id names its
// whole history), the cache's shallow boundary and grafts and the git
// executable (gitRunner.memoKey hashes those), and the rules, which are
// those of the running patchkit executable (its size and modification time
// name it, so that any rebuild is a new key). An entry is checksummed and
// written atomically (writeMemo); a damaged one is a miss and is rewritten.
// Like the history memo it is a shortcut only: failing to read or write it
// never fails the run.
type verdictMemo struct {
	g      gitRunner
	series string // the digest of the series, the pin and the rules
	ok     bool   // false: nothing identifies the rules, memoise nothing

	// The bundle holds, in one file, every entry of the last run with
	// this series and rules, by key: a warm run reads and decodes one file
	// instead of one per ref (a gob decoder compiles Result's types anew
	// for every stream, which cost a warm run on kube-ovn's shape a quarter
	// of its CPU). The entries stay the memo; the bundle is a shortcut to
	// them, rewritten (in place: its key is the series') by a run that took
	// any entry from elsewhere.
	bundle     map[string][]Result
	bundleRead bool
	run        map[string][]Result // this run's entries, as memoised
	stale      bool                // some entry of this run is not in the bundle
}

func newVerdictMemo(g gitRunner, in Input) *verdictMemo {
	m := &verdictMemo{g: g}
	self, err := os.Executable()
	if err != nil || g.cache == nil {
		return m
	}
	fi, err := os.Stat(self)
	if err != nil {
		return m
	}
	var b bytes.Buffer
	field := func(s string) { fmt.Fprintf(&b, "%d:%s\n", len(s), s) }
	field(verdictFormat)
	field(self + " " + strconv.FormatInt(fi.Size(), 10) + " " + strconv.FormatInt(fi.ModTime().UnixNano(), 10))
	field(in.PinCommit)
	field(strconv.Itoa(len(in.Patches)))
	for _, p := range in.Patches {
		field(p.Name)
		field(p.Path)
		field(string(p.Bytes()))
	}
	sum := sha256.Sum256(b.Bytes()) // hashed once, not again for every ref's key
	m.series, m.ok = hex.EncodeToString(sum[:]), true
	return m
}

// key is ref's entry's name, false when there is none.
func (m *verdictMemo) key(ref Ref) (string, bool) {
	if !m.ok {
		return "", false
	}
	return m.g.memoKey([]byte(m.series), []string{"verdicts", ref.Name, ref.Kind, ref.Commit})
}

func (m *verdictMemo) path(key string) string {
	return filepath.Join(m.g.cache.DerivedDir(verdictMemoName), key)
}

// verdictReads counts the verdict memo's files read; a test seam.
var verdictReads atomic.Int64

// bundlePrefix starts the bundle's file name (see verdictMemo).
const bundlePrefix = "series-"

// get returns ref's memoised results, when the memo has a whole entry for
// exactly these inputs: from the bundle, else from ref's own entry.
func (m *verdictMemo) get(ref Ref, patches int) ([]Result, bool) {
	key, ok := m.key(ref)
	if !ok {
		return nil, false
	}
	if !m.bundleRead {
		m.bundleRead = true
		m.bundle = m.readBundle()
	}
	if rs, ok := m.bundle[key]; ok && wholeEntry(rs, ref, patches) {
		m.record(key, rs, false)
		return slices.Clone(rs), true
	}
	verdictReads.Add(1)
	data, hit := readMemo(m.path(key))
	if !hit {
		return nil, false
	}
	var rs []Result
	if gob.NewDecoder(bytes.NewReader(data)).Decode(&rs) != nil || !wholeEntry(rs, ref, patches) {
		return nil, false
	}
	touchMemo(m.path(key))
	m.record(key, rs, true)
	return slices.Clone(rs), true
}

// wholeEntry reports whether rs are results of ref for each of patches.
func wholeEntry(rs []Result, ref Ref, patches int) bool {
	if len(rs) != patches {
		return false
	}
	for i := range rs {
		if rs[i].Ref != ref.Name {
			return false
		}
	}
	return true
}

// put records ref's results.
func (m *verdictMemo) put(ref Ref, rs []Result) {
	key, ok := m.key(ref)
	if !ok {
		return
	}
	var data bytes.Buffer
	if gob.NewEncoder(&data).Encode(rs) == nil {
		writeMemo(m.path(key), data.Bytes())
	}
	m.record(key, slices.Clone(rs), true)
}

// record notes an entry of this run for the bundle. The results handed
// out are copies (Check's version rules rewrite a result in place), so
// what is recorded is what was memoised.
func (m *verdictMemo) record(key string, rs []Result, stale bool) {
	if m.run == nil {
		m.run = map[string][]Result{}
	}
	m.run[key] = rs
	m.stale = m.stale || stale
}

// bundleKey names the bundle: the series', so that each run rewrites it.
func (m *verdictMemo) bundleKey() (string, bool) {
	if !m.ok {
		return "", false
	}
	return m.g.memoKey([]byte(m.series), []string{"verdict-bundle"})
}

func (m *verdictMemo) readBundle() map[string][]Result {
	key, ok := m.bundleKey()
	if !ok {
		return nil
	}
	verdictReads.Add(1)
	data, hit := readMemo(m.path(bundlePrefix + key))
	if !hit {
		return nil
	}
	var b map[string][]Result
	if gob.NewDecoder(bytes.NewReader(data)).Decode(&b) != nil {
		return nil
	}
	touchMemo(m.path(bundlePrefix + key))
	return b
}

// flush writes the bundle of this run's entries, when any came from
// elsewhere than the bundle read (Check calls it after its last ref).
func (m *verdictMemo) flush() {
	key, ok := m.bundleKey()
	if !ok || !m.stale {
		return
	}
	var data bytes.Buffer
	if gob.NewEncoder(&data).Encode(m.run) == nil {
		writeMemo(m.path(bundlePrefix+key), data.Bytes())
	}
}

// results returns ref's results from the memo, else from eval, recording
// them.
func (m *verdictMemo) results(ref Ref, patches int, eval func(Ref) ([]Result, error)) ([]Result, error) {
	if rs, ok := m.get(ref, patches); ok {
		return rs, nil
	}
	rs, err := eval(ref)
	if err != nil {
		return nil, err
	}
	m.put(ref, rs)
	return rs, nil
}

// lazyChecker returns the run's checker, made on first use, so that a run
// whose every ref is memoised makes none (and loads no patch-ids).
func lazyChecker(ctx context.Context, g gitRunner, in Input, refs []Ref, h *history) func() (*checker, error) {
	var c *checker
	return func() (*checker, error) {
		if c == nil {
			var err error
			if c, err = newChecker(ctx, g, in, refs, h); err != nil {
				return nil, err
			}
		}
		return c, nil
	}
}

// withEvaluated calls f for each ref Check evaluates rather than reads from
// the verdict memo; a test seam.
func withEvaluated(f func(Ref)) Option { return func(o *options) { o.evaluated = f } }
