package chart

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/patchkit/patchkit/internal/upstream"
)

// The chart cache keeps what Helm repositories, OCI registries and
// release-asset URLs serve, beside the git upstream caches, under
// <cache-dir>/charts:
//
//	blobs/sha256-<hex>       an archive (a chart .tgz, an OCI chart layer, an asset), named by its sha256
//	entries/<key>.json       which blob a source serves at a version: {source, version, digest, size}
//	lists/<key>.json         the versions a source listed when last asked (read offline only)
//
// A version's archive is immutable, so a warm run reads it from the cache
// and asks no server; a listing (index.yaml, OCI tags) is asked online every
// time and kept for --offline. Every file is written to a temporary name in
// its directory, synced and renamed, a blob before the entry naming it, so a
// run killed at any point leaves either no entry or a whole one. Every read
// checks the blob against its digest: a damaged entry is fetched afresh
// online, and offline is a cache fault (upstream.CacheFaultError, exit 2).
type chartCache struct {
	dir string // <cache-dir>/charts
}

// cacheEntry is one entries/<key>.json.
type cacheEntry struct {
	Source  string `json:"source"` // without credentials
	Version string `json:"version"`
	Digest  string `json:"digest"` // sha256:<hex> of the blob
	Size    int64  `json:"size"`
}

// cacheList is one lists/<key>.json.
type cacheList struct {
	Source   string   `json:"source"`
	Versions []string `json:"versions"`
	Sum      string   `json:"sum"` // sha256 of the versions, one a line
}

func (f *Fetcher) chartCache() *chartCache {
	if f.CacheDir == "" {
		return nil
	}
	return &chartCache{dir: filepath.Join(f.CacheDir, "charts")}
}

// cacheKey names a source at a version (or a listing, version ""): the
// sha256 of its kind, its URL without credentials and the version.
func cacheKey(kind, source, version string) string {
	sum := sha256.Sum256([]byte(kind + "\x00" + upstream.Redact(source) + "\x00" + version))
	return hex.EncodeToString(sum[:])
}

func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func (c *chartCache) entryPath(key string) string {
	return filepath.Join(c.dir, "entries", key+".json")
}

func (c *chartCache) blobPath(digest string) string {
	return filepath.Join(c.dir, "blobs", strings.Replace(digest, ":", "-", 1))
}

// fault is a damaged cache file.
func (c *chartCache) fault(path, object string, offline bool, err error) error {
	return &upstream.CacheFaultError{Path: path, Object: object, Offline: offline, Err: err}
}

// get returns the blob the entry of key names. ok is false when there is
// no entry; a damaged entry or blob (unreadable, or its bytes not its
// digest) is a *upstream.CacheFaultError.
func (c *chartCache) get(key string, offline bool) (data []byte, ok bool, err error) {
	ep := c.entryPath(key)
	raw, err := os.ReadFile(ep)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, c.fault(ep, "", offline, err)
	}
	var e cacheEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, false, c.fault(ep, "", offline, fmt.Errorf("reading the entry: %w", err))
	}
	if !validDigest(e.Digest) {
		return nil, false, c.fault(ep, "", offline, fmt.Errorf("the entry names no sha256 digest (%q)", e.Digest))
	}
	bp := c.blobPath(e.Digest)
	data, err = os.ReadFile(bp)
	if err != nil {
		return nil, false, c.fault(bp, e.Digest, offline, err)
	}
	if got := digestOf(data); got != e.Digest || int64(len(data)) != e.Size {
		return nil, false, c.fault(bp, e.Digest, offline, fmt.Errorf("the file holds %d bytes of %s, not %d bytes of %s", len(data), got, e.Size, e.Digest))
	}
	return data, true, nil
}

func validDigest(d string) bool {
	h, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(h) != 64 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

// staleTemp is how old a temporary cache file must be before a run takes
// it for a killed writer's and removes it (a younger one may be another
// run's, still writing).
const staleTemp = 10 * time.Minute

// sweepTemps removes the stale temporary files of dir.
func sweepTemps(dir string) {
	tmps, _ := filepath.Glob(filepath.Join(dir, ".tmp-*"))
	for _, t := range tmps {
		if info, err := os.Lstat(t); err == nil && info.Mode().IsRegular() && time.Since(info.ModTime()) > staleTemp {
			os.Remove(t)
		}
	}
}

// put stores data as what source serves at version: the blob, then the
// entry. A killed writer's stale temporary files are removed on the way.
func (c *chartCache) put(key, source, version string, data []byte) error {
	sweepTemps(filepath.Join(c.dir, "blobs"))
	sweepTemps(filepath.Join(c.dir, "entries"))
	d := digestOf(data)
	bp := c.blobPath(d)
	if old, err := os.ReadFile(bp); err != nil || digestOf(old) != d {
		if err := writeFileAtomic(bp, data); err != nil {
			return err
		}
	}
	e, err := json.MarshalIndent(cacheEntry{Source: upstream.Redact(source), Version: version, Digest: d, Size: int64(len(data))}, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(c.entryPath(key), append(e, '\n'))
}

// drop removes a damaged entry (its blob too), so that it is fetched afresh.
func (c *chartCache) drop(key string, err error) {
	var cf *upstream.CacheFaultError
	if errors.As(err, &cf) && strings.HasPrefix(cf.Path, filepath.Join(c.dir, "blobs")+string(filepath.Separator)) {
		os.Remove(cf.Path)
	}
	os.Remove(c.entryPath(key))
}

func listSum(versions []string) string {
	sum := sha256.Sum256([]byte(strings.Join(versions, "\n")))
	return hex.EncodeToString(sum[:])
}

// putList keeps the versions source listed, for --offline.
func (c *chartCache) putList(key, source string, versions []string) error {
	b, err := json.MarshalIndent(cacheList{Source: upstream.Redact(source), Versions: versions, Sum: listSum(versions)}, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(c.dir, "lists", key+".json"), append(b, '\n'))
}

// getList returns the versions source listed when last asked; ok is false
// when it never was.
func (c *chartCache) getList(key string) ([]string, bool, error) {
	p := filepath.Join(c.dir, "lists", key+".json")
	raw, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, c.fault(p, "", true, err)
	}
	var l cacheList
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, false, c.fault(p, "", true, fmt.Errorf("reading the list: %w", err))
	}
	if listSum(l.Versions) != l.Sum {
		return nil, false, c.fault(p, "", true, errors.New("the versions are not those its sum names"))
	}
	return l.Versions, true, nil
}

// testHookBeforeRename, set by a test, runs once a temporary file is
// whole and synced, before it is renamed over path.
var testHookBeforeRename func(path string)

// writeFileAtomic writes data to path through a synced temporary file in
// the same directory and a rename: a reader (or a run after a kill -9)
// sees the old file, no file, or the whole new one.
func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if testHookBeforeRename != nil {
		testHookBeforeRename(path)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
