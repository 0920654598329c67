package obsolete

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// memoName names the memo's directory in the cache (upstream's
// DerivedDir), which a repair empties with the rest of the repository.
const memoName = "memo"

// memoFormat names the memo's format; a change of format is a change of key.
const memoFormat = "patchkit obsolete history memo 4"

// memoed returns what parse made of the stdout of `git args` fed stdin,
// from the cache's memo when it holds it, else by running git and recording
// the result (with encoding/gob, which keeps strings byte for byte: commit
// subjects and paths need not be UTF-8).
//
// git's answer is a function of the commits it is asked about, which are
// named by id in args and stdin, and of what else decides reachability: the
// shallow boundary and grafts (replace refs are off, see upstream.GitEnv).
// The key hashes all of them and the git executable's identity, so an
// upstream that moves on (new tags, a deepened cache) asks git again. An
// entry is checksummed: a damaged or truncated one is a miss, and is
// rewritten. The memo is only ever a shortcut: failing to read or write it
// never fails the run.
func memoed[T any](ctx context.Context, g gitRunner, stdin []byte, parse func(io.Reader) (T, error), args ...string) (T, error) {
	key, ok := g.memoKey(stdin, args)
	if ok {
		var v T
		if data, hit := readMemo(g.memoPath(key)); hit && gob.NewDecoder(bytes.NewReader(data)).Decode(&v) == nil {
			touchMemo(g.memoPath(key))
			return v, nil
		}
	}
	var v T
	err := g.run(ctx, stdin, func(r io.Reader) error {
		var perr error
		v, perr = parse(r)
		return perr
	}, args...)
	if err != nil {
		return v, err
	}
	if ok {
		var data bytes.Buffer
		if err := gob.NewEncoder(&data).Encode(v); err == nil {
			writeMemo(g.memoPath(key), data.Bytes())
		}
	}
	return v, nil
}

func (g gitRunner) memoPath(key string) string {
	return filepath.Join(g.cache.DerivedDir(memoName), key)
}

// memoKey hashes what git's answer depends on. ok is false when the git
// executable cannot be identified (then nothing is memoised).
func (g gitRunner) memoKey(stdin []byte, args []string) (string, bool) {
	if g.cache == nil {
		return "", false
	}
	id, ok := g.gitIdentity()
	if !ok {
		return "", false
	}
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s\n", len(s), s) }
	field(memoFormat)
	field(id)
	for _, name := range []string{"shallow", filepath.Join("info", "grafts")} {
		b, err := os.ReadFile(filepath.Join(g.gitDir, name))
		if err != nil && !os.IsNotExist(err) {
			return "", false
		}
		field(name)
		field(string(b))
	}
	field(strings.Join(args, "\x00"))
	field(string(stdin))
	return hex.EncodeToString(h.Sum(nil)), true
}

// gitIdentity names the git executable g runs: its path, size and
// modification time; ok is false when it cannot be found. A Check asks once
// (g.ident), not once per memo key: finding it searches $PATH.
func (g gitRunner) gitIdentity() (string, bool) {
	if g.ident == nil {
		return findGit(g.bin)
	}
	g.ident.once.Do(func() { g.ident.id, g.ident.ok = findGit(g.bin) })
	return g.ident.id, g.ident.ok
}

// gitIdent is a gitRunner's git executable's identity, found once.
type gitIdent struct {
	once sync.Once
	id   string
	ok   bool
}

func findGit(name string) (string, bool) {
	bin, err := exec.LookPath(name)
	if err != nil {
		return "", false
	}
	fi, err := os.Stat(bin)
	if err != nil {
		return "", false
	}
	return fmt.Sprintf("%s %d %d", bin, fi.Size(), fi.ModTime().UnixNano()), true
}

// readMemo returns an entry's payload when its checksum holds.
func readMemo(path string) ([]byte, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	sum, payload, found := bytes.Cut(b, []byte("\n"))
	if !found {
		return nil, false
	}
	want := sha256.Sum256(payload)
	if string(sum) != hex.EncodeToString(want[:]) {
		return nil, false
	}
	return payload, true
}

// staleTemp is how old a temporary memo file must be before a run takes it
// for the leftover of a killed run and removes it.
const staleTemp = 10 * time.Minute

// unusedEntry is how long an entry may go unread before a run that writes
// the memo removes it: an upstream that keeps moving leaves an entry per
// state, and only the latest few are read again.
const unusedEntry = 30 * 24 * time.Hour

// touchMemo marks an entry read (at most once a day), so that it is kept.
func touchMemo(path string) {
	if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) > 24*time.Hour {
		now := time.Now()
		os.Chtimes(path, now, now)
	}
}

// writeMemo writes an entry atomically (a temporary file renamed into
// place), so that a killed run leaves either no entry or a whole one, and
// removes the temporary files of runs killed earlier and the entries no run
// has read for a long time (sweepMemo, once per directory and process).
func writeMemo(path string, payload []byte) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	if _, done := swept.LoadOrStore(dir, true); !done {
		sweepMemo(dir)
	}
	f, err := os.CreateTemp(dir, "tmp-*")
	if err != nil {
		return
	}
	sum := sha256.Sum256(payload)
	err = f.Chmod(0o644)
	if err == nil {
		_, err = fmt.Fprintf(f, "%s\n", hex.EncodeToString(sum[:]))
	}
	if err == nil {
		_, err = f.Write(payload)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
}

// swept holds the memo directories this process has swept (sweepMemo). A
// cold run writes an entry per ref, hundreds, and sweeping before each
// one listed and statted the whole directory every time: a cold run's cost
// grew with the square of the refs.
var swept sync.Map

// sweepCount counts sweepMemo's runs; a test seam.
var sweepCount atomic.Int64

// sweepMemo removes from dir the temporary files older than staleTemp
// (those of killed runs) and the entries unread for unusedEntry.
func sweepMemo(dir string) {
	sweepCount.Add(1)
	names, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range names {
		limit := unusedEntry
		if strings.HasPrefix(e.Name(), "tmp-") {
			limit = staleTemp
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > limit {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
