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
	"strconv"
)

// verdictMemoName names the verdict memo's directory in the cache (upstream's
// DerivedDir), beside the history memo.
const verdictMemoName = "verdicts"

// verdictFormat names the verdict memo's format; a change of format is a
// change of key.
// 2: keys over the series' digest. Entries are gob, which keeps non-UTF-8
// subjects, paths and lines byte for byte (JSON would not).
const verdictFormat = "patchkit obsolete verdict memo 2"

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

// get returns ref's memoised results, when the memo has a whole entry for
// exactly these inputs.
func (m *verdictMemo) get(ref Ref, patches int) ([]Result, bool) {
	key, ok := m.key(ref)
	if !ok {
		return nil, false
	}
	data, hit := readMemo(m.path(key))
	if !hit {
		return nil, false
	}
	var rs []Result
	if gob.NewDecoder(bytes.NewReader(data)).Decode(&rs) != nil || len(rs) != patches {
		return nil, false
	}
	for i := range rs {
		if rs[i].Ref != ref.Name {
			return nil, false
		}
	}
	touchMemo(m.path(key))
	return rs, true
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
