package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
)

// ErrRefNotFound is wrapped by errors about a ref that is neither a tag, a
// branch nor a commit of the upstream.
var ErrRefNotFound = errors.New("ref not found")

// ErrAbbreviatedID is wrapped by the error for an abbreviated commit id
// that names several commits: the error lists them.
var ErrAbbreviatedID = errors.New("abbreviated commit id")

// ErrOffline is wrapped by errors for work that needs the network while the
// cache is offline.
var ErrOffline = errors.New("offline")

// DefaultCacheDir returns <os.UserCacheDir()>/patchkit.
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user cache directory: %w", err)
	}
	return filepath.Join(d, "patchkit"), nil
}

type options struct {
	progress io.Writer
	offline  bool
	shallow  bool
	branches []string
	// connectTimeout and idleTimeout bound a fetch (see WithTimeouts).
	connectTimeout, idleTimeout time.Duration
}

// Option configures Open.
type Option func(*options)

// WithProgress sends fetch progress (git's "Receiving objects" lines) to w.
// The CLI passes stderr only when it is a terminal. The default discards it.
func WithProgress(w io.Writer) Option {
	return func(o *options) {
		if w == nil {
			w = io.Discard
		}
		o.progress = w
	}
}

// WithOffline forbids any network access: Open needs an existing cache,
// Fetch does nothing, and Ensure fails for a ref the cache lacks, telling the
// user to run once without --offline.
func WithOffline(offline bool) Option {
	return func(o *options) { o.offline = offline }
}

// WithBranches names extra branches to keep: refs/heads/<b> of the upstream is
// fetched into refs/heads/<b> of the cache. A "refs/heads/" prefix is allowed.
// The default branch is always kept (HEAD, which names it, is left out).
func WithBranches(branches ...string) Option {
	return func(o *options) { o.branches = append(o.branches, branches...) }
}

// Cache is the bare cache of one upstream URL. Its methods and the Snapshots
// it returns are safe for concurrent use; separate Caches, even in separate
// processes, coordinate through a lock file.
type Cache struct {
	url      string // as given; may hold credentials, never printed
	fetchURL string // url through git's insteadOf settings (MirrorURL): where fetches go
	redacted string
	dir      string
	key      string
	opts     options

	// lastAdv is the upstream's advertisement this Cache last read, which
	// narrow fetches reuse (see advertiseFor). Only used under the exclusive
	// lock.
	lastAdv *packp.AdvRefs

	mu        sync.Mutex // serializes use of the object store
	store     *store
	memo      objectMemo // verified objects the Snapshots read, under mu
	readers   *fileLock  // the shared lock on readersLockPath, held while open
	closed    bool
	closeOnce sync.Once
}

// Open opens the cache for url under dir, creating it if needed: one bare
// repository per URL at dir/<sanitized-host-path>-<short sha256 of url>.git.
// A missing cache is cloned (unless offline); a cache left half-written by an
// interrupted run is detected and cloned afresh.
func Open(ctx context.Context, dir, url string, opts ...Option) (*Cache, error) {
	o := options{progress: io.Discard}
	for _, opt := range opts {
		opt(&o)
	}
	red := Redact(url)
	if strings.TrimSpace(url) == "" {
		return nil, errors.New("opening upstream cache: the upstream url is empty")
	}
	if dir == "" {
		return nil, fmt.Errorf("opening cache of %s: no cache directory given", red)
	}
	if err := CheckURL(url); err != nil {
		return nil, scrub(url, fmt.Errorf("opening cache of %s: %w", red, err))
	}
	fetchURL := MirrorURL(url)
	if fetchURL != url {
		if err := CheckURL(fetchURL); err != nil {
			return nil, scrub(url, scrub(fetchURL, fmt.Errorf("opening cache of %s: git's insteadOf rewrites it to %s: %w", red, Redact(fetchURL), err)))
		}
	}
	branches, err := cleanBranches(o.branches)
	if err != nil {
		return nil, fmt.Errorf("opening cache of %s: %w", red, err)
	}
	o.branches = branches
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("opening cache of %s: %w", red, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("opening cache of %s: creating the cache directory: %w", red, err)
	}
	c := &Cache{url: url, fetchURL: fetchURL, redacted: red, dir: abs, key: cacheKey(url), opts: o}
	if err := c.open(ctx); err != nil {
		return nil, c.errorf("opening cache of %s: %w", red, err)
	}
	if !o.shallow {
		// This user walks history: a partial cache's boundaries are not its end.
		if err := c.Deepen(ctx); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

func cleanBranches(in []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, b := range in {
		b = strings.TrimPrefix(b, "refs/heads/")
		if b == "HEAD" {
			continue // the default branch, which every cache keeps
		}
		if b == "" {
			return nil, errors.New("empty branch name")
		}
		if err := plumbing.NewBranchReferenceName(b).Validate(); err != nil || strings.HasPrefix(b, "-") {
			return nil, fmt.Errorf("invalid branch name %q", b)
		}
		if !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	return out, nil
}

// Path is the bare repository of the cache. It never holds credentials.
func (c *Cache) Path() string { return filepath.Join(c.dir, c.key+".git") }

// DerivedDir is a directory, inside the bare repository, where a stage
// may keep what it derived from the cache's objects (obsolete-check's
// history memo is one). It goes with the repository: a repair (a fresh
// clone swapped in) starts it empty. The caller creates it, and keeps what
// it writes there valid on its own (the cache never reads it).
func (c *Cache) DerivedDir(name string) string {
	return filepath.Join(c.Path(), "patchkit-"+name)
}

// URL is the upstream URL with its credentials redacted, safe to print.
func (c *Cache) URL() string { return c.redacted }

// Offline reports whether the cache was opened offline.
func (c *Cache) Offline() bool { return c.opts.offline }

// repo is the go-git repository of the cache, for the package's tests. Its
// use is not serialized with the Cache's own methods; everything outside
// upstream reads objects through the Cache's checked methods.
func (c *Cache) repo() *git.Repository {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.store.repo
}

// Close releases the cache's files. It is safe to call more than once.
func (c *Cache) Close() error {
	var err error
	c.closeOnce.Do(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.closed = true
		if c.store != nil {
			err = c.store.close()
			c.store = nil
		}
		c.readers.release()
		c.readers = nil
	})
	if err != nil {
		return c.errorf("closing cache of %s: %w", c.redacted, err)
	}
	return nil
}

func (c *Cache) lockPath() string        { return filepath.Join(c.dir, c.key+".lock") }
func (c *Cache) readersLockPath() string { return filepath.Join(c.dir, c.key+".readers.lock") }
func (c *Cache) markerPath() string      { return filepath.Join(c.dir, c.key+".fetching") }
func (c *Cache) tmpPrefix() string       { return c.key + ".git.tmp-" }
func (c *Cache) oldPrefix() string       { return c.key + ".git.old-" }

// errorf formats an error and removes the URL's credentials from its message.
func (c *Cache) errorf(format string, args ...any) error {
	return scrub(c.fetchURL, scrub(c.url, fmt.Errorf(format, args...)))
}

// withStore runs fn on the open store, serialized with other users.
func (c *Cache) withStore(fn func(s *store) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errors.New("cache is closed")
	}
	return fn(c.store)
}
