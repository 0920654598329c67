package upstream

import (
	"compress/flate"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// ErrCacheDamaged is wrapped by every *CacheFaultError: the cache lacks an
// object it refers to, or holds one that does not read back as written.
var ErrCacheDamaged = errors.New("cache damaged")

// CacheFaultError is a damaged cache: a missing or corrupt object (a deleted
// loose object, a truncated pack, a flipped byte), or a cache an interrupted
// run left half-written. It is never a verdict on a patch: commands exit 2,
// or, online, repair the cache (Repair) and run again. It is reachable with
// errors.As through every wrapping.
type CacheFaultError struct {
	Path    string // the bare repository of the cache
	Object  string // the object id that could not be read, or ""
	Offline bool   // the run may not repair it
	Err     error  // what went wrong, e.g. plumbing.ErrObjectNotFound or a zlib error

	cache *Cache // repairs it; nil for a fault found without an open Cache
}

func (e *CacheFaultError) Error() string {
	msg := "cache damaged: " + e.Path
	if e.Object != "" {
		msg += ": object " + e.Object
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Offline {
		msg += "; run without --offline to repair it"
	}
	return msg
}

// Unwrap returns ErrCacheDamaged and the cause, so that both errors.Is(err,
// ErrCacheDamaged) and errors.Is(err, cause) hold.
func (e *CacheFaultError) Unwrap() []error { return []error{ErrCacheDamaged, e.Err} }

// fault makes err, met while reading object id (may be zero-length), a
// *CacheFaultError of c. A fault already made, and a cancelled context, pass
// through unchanged.
func (c *Cache) fault(id string, err error) error {
	if err == nil {
		return nil
	}
	var cf *CacheFaultError
	if errors.As(err, &cf) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &CacheFaultError{Path: c.Path(), Object: id, Offline: c.opts.offline, Err: scrub(c.url, err), cache: c}
}

// gitFaultRe matches what the git CLI says about a repository with missing or
// corrupt objects (bad object, missing blob, inflate and pack errors, a
// sha1 mismatch, a loose object that is corrupt, an unreadable pack).
var gitFaultRe = regexp.MustCompile(`(?m)(bad object|missing (blob|tree|commit|tag|object)|unable to read [0-9a-f]{40}|invalid object|` +
	`inflate|corrupt|sha1 mismatch|hash mismatch|packfile .* cannot be accessed|bad packed object|` +
	`packed object .* is corrupt|failed to read object|unable to unpack|could not read [0-9a-f]{40}|` +
	`Could not read [0-9a-f]{40}|premature end of pack|pack has bad object|index file .* is too small|` +
	`is far too short to be a packfile|non-monotonic index|unknown object type)`)

var hexIDRe = regexp.MustCompile(`\b[0-9a-f]{40}\b`)

// GitFault reports whether stderr, the error output of a git command run on
// the cache, says the cache is damaged, and if so returns the
// *CacheFaultError (naming the first object id git mentions), wrapping err.
// Otherwise it returns nil. Stages that run the git CLI on Path call it on
// every failure.
func (c *Cache) GitFault(stderr string, err error) error {
	if !gitFaultRe.MatchString(stderr) {
		return nil
	}
	id := hexIDRe.FindString(stderr)
	msg := strings.TrimSpace(stderr)
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return c.fault(id, fmt.Errorf("git: %s: %w", msg, err))
}

// Repair repairs the cache a *CacheFaultError in err's chain names, under the
// exclusive locks, once every other reader of the cache is done (see
// Cache.Repair). It returns err itself when err holds no fault, when the
// fault is offline, or when it cannot be repaired.
func Repair(ctx context.Context, err error) error {
	var cf *CacheFaultError
	if !errors.As(err, &cf) || cf.Offline || cf.cache == nil {
		return err
	}
	if rerr := cf.cache.repairOpen(ctx, cf.Object, cf.Object == ""); rerr != nil {
		return fmt.Errorf("%w; repairing it: %w", err, rerr)
	}
	return nil
}

// RetryRepaired runs fn, and when it fails with a cache fault that can be
// repaired (online), repairs the cache and runs fn once more. fn must close
// every Cache it opened before it returns, and must not have printed a
// result: a repair waits until no reader uses the cache, this process
// included.
func RetryRepaired(ctx context.Context, fn func() error) error {
	err := fn()
	var cf *CacheFaultError
	if err == nil || !errors.As(err, &cf) || cf.Offline || cf.cache == nil {
		return err
	}
	if rerr := Repair(ctx, err); rerr != nil {
		return rerr
	}
	return fn()
}

// AsFault returns err as a *CacheFaultError of c when it says that an object
// of the cache is missing or does not read back (go-git's
// plumbing.ErrObjectNotFound, zlib, flate and pack errors, a short read), and
// err unchanged otherwise. Stages that read the cache through Repo call it on
// their errors.
func (c *Cache) AsFault(err error) error {
	var oe *objectError
	var corrupt flate.CorruptInputError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &oe):
		return c.objectFault(err)
	case errors.Is(err, plumbing.ErrObjectNotFound), errors.Is(err, zlib.ErrChecksum), errors.Is(err, zlib.ErrHeader),
		errors.Is(err, zlib.ErrDictionary), errors.As(err, &corrupt), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, packfile.ErrInvalidObject), errors.Is(err, packfile.ErrZLib), errors.Is(err, packfile.ErrBadSignature),
		errors.Is(err, packfile.ErrUnsupportedVersion), errors.Is(err, packfile.ErrInvalidDelta), errors.Is(err, packfile.ErrDeltaCmd):
		return c.fault(hexIDRe.FindString(err.Error()), err)
	}
	return err
}
