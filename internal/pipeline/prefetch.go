package pipeline

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/upstream"
)

// Prefetched is what Prefetch found for a run's units, for the units to
// take as they run one by one (Each): the answer of a unit with nothing to
// fetch (quick), the error a unit met, the upstream URLs whose caches are
// already fetched, and the images prepared and fetched, still open.
type Prefetched[R any] struct {
	quick   func(ctx context.Context, name string) (R, bool, error)
	mu      sync.Mutex
	fetched map[string]bool
	pre     map[string]prefetched[R]
	// images are the units' images Prefetch prepared and fetched, kept
	// open for the unit's run to take (Take) instead of opening its cache
	// again; Close closes those never taken.
	images map[string]*Image
	// shared are the caches of more than one of the run's upstream URLs
	// (upstream.CachePath): no image of theirs is kept.
	shared map[string]bool
	// ready holds, per unit Prefetch works on, a channel closed once
	// every worker of the unit's cache is done: its unit waits for it
	// (wait). Written before the workers start, read-only after.
	ready map[string]chan struct{}
	// workers are the workers still running (Wait).
	workers sync.WaitGroup
	// bound is Prefetch's: the most images kept at once.
	bound int
}

// keepIdxBytes is the most pack index bytes an image Prefetch keeps may
// have on disk: an open cache holds its indexes in memory, so a large
// upstream's image is closed, and its unit's run opens it again.
var keepIdxBytes int64 = 8 << 20

// prefetched is Prefetch's answer for one unit: quick's report (ok), or the
// error its quick answer, preparation or fetch met.
type prefetched[R any] struct {
	out R
	ok  bool
	err error
}

// Prefetch brings the upstreams of a run's units up to date while they are
// done one by one, bound upstreams at a time (a monorepo's units otherwise
// list their upstreams one after another): one worker per upstream URL
// takes its units in order, the URLs in the order of their first unit. A
// unit quick answers (ok, with no history fetched: obsolete-check's units
// with nothing to scan) is recorded and the worker goes on to the next;
// the first other unit is prepared and its cache fetched, and the URL is
// done. An error ends the URL's worker and is recorded for its unit.
//
// Prefetch returns at once; the workers go on in the background. The run's
// units then call Quick, Fetch and Take, which first wait until every
// worker of the unit's cache is done (so a unit runs while the next
// upstreams are listed, and a repair of its cache waits for no worker),
// hand back what was recorded, and do the work themselves otherwise. It
// changes no result and no order. The image a URL's worker prepared and
// fetched is kept open, for its unit's run to take (Take, through
// Runner.Prepared) rather than open the cache again; the caller waits for
// the workers and closes the images left with Close, once the run is
// done. An error recorded is handed back once, so that a unit run through
// upstream.RetryRepaired is checked again for real once its cache is
// repaired. Offline, or with fewer than two units, nothing is prefetched.
// A unit whose spec cannot be loaded is left to the run, which reports it.
func Prefetch[R any](ctx context.Context, env Env, names []string, bound int, quick func(ctx context.Context, name string) (R, bool, error)) *Prefetched[R] {
	p := &Prefetched[R]{quick: quick, fetched: map[string]bool{}, pre: map[string]prefetched[R]{}, images: map[string]*Image{}, shared: map[string]bool{}, bound: max(bound, 1)}
	if env.Offline || len(names) < 2 {
		return p
	}
	var urls []string
	byURL := map[string][]string{}
	for _, name := range names {
		s, err := env.load(name)
		if err != nil {
			continue
		}
		// env.url makes the URL known to untrusted before any unit runs and
		// says anything (see Open).
		url, err := env.url(s)
		if err != nil {
			continue
		}
		if byURL[url] == nil {
			urls = append(urls, url)
		}
		byURL[url] = append(byURL[url], name)
	}
	// A unit waits until every worker of its cache is done: a repair of
	// the cache waits for every reader of this process. A cache several
	// URLs share keeps no image (keep).
	p.ready = map[string]chan struct{}{}
	pathOf := map[string]string{}
	left := map[string]int{}
	readyOf := map[string]chan struct{}{}
	for _, url := range urls {
		path := upstream.CachePath(env.CacheDir, url)
		pathOf[url] = path
		if readyOf[path] == nil {
			readyOf[path] = make(chan struct{})
		} else {
			p.shared[path] = true
		}
		left[path]++
		for _, name := range byURL[url] {
			p.ready[name] = readyOf[path]
		}
	}
	var mu sync.Mutex
	done := func(url string) {
		mu.Lock()
		defer mu.Unlock()
		if left[pathOf[url]]--; left[pathOf[url]] == 0 {
			close(readyOf[pathOf[url]])
		}
	}
	sem := make(chan struct{}, max(bound, 1))
	p.workers.Add(len(urls))
	go func() {
		for _, url := range urls {
			sem <- struct{}{}
			go func() {
				defer p.workers.Done()
				defer func() { <-sem }()
				defer done(url)
				p.prefetch(ctx, env, byURL[url])
			}()
		}
	}()
	return p
}

// wait waits until Prefetch is done with the cache of the unit name (at
// once for a unit it does not work on), or ctx is done.
func (p *Prefetched[R]) wait(ctx context.Context, name string) error {
	ready, ok := p.ready[name]
	if !ok {
		return nil
	}
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Wait waits until every worker of Prefetch is done.
func (p *Prefetched[R]) Wait() { p.workers.Wait() }

// prefetch is the worker of one upstream URL: names are its units, in
// order.
func (p *Prefetched[R]) prefetch(ctx context.Context, env Env, names []string) {
	for _, name := range names {
		if ctx.Err() != nil {
			return
		}
		if out, ok, err := p.quick(ctx, name); err != nil || ok {
			p.record(name, prefetched[R]{out: out, ok: ok, err: err})
			if err != nil {
				return
			}
			continue
		}
		// Not quick: recorded, so that the unit's run does not ask again
		// (its cache is fetched below, and a fetched cache is never quick).
		p.record(name, prefetched[R]{})
		im, err := Prepare(ctx, env, name, "")
		if err != nil {
			p.record(name, prefetched[R]{err: err})
			continue
		}
		if err = im.Cache.Fetch(ctx); err != nil {
			im.Close()
			p.record(name, prefetched[R]{err: err})
			return
		}
		p.mu.Lock()
		p.fetched[im.URL] = true
		p.mu.Unlock()
		p.keep(name, im)
		return
	}
}

// keep keeps im, prepared and fetched for the unit name, for the unit's
// run to take, when it is what the run would prepare now and is cheap to
// hold. Its ref must still resolve to the commit it was prepared at (the
// fetch may have moved a branch pin), and its cache be no other URL's of
// the run: a repair of a cache waits until no Cache of this process has it
// open, so an image kept for a later unit must not share the cache of a
// unit that runs before it (the units of one URL are prepared in order:
// the one kept is the first to open the cache). And it must be cheap: at
// most bound images are kept at once, each with at most keepIdxBytes of
// pack indexes (which an open cache holds in memory). It closes im
// otherwise.
func (p *Prefetched[R]) keep(name string, im *Image) {
	if commit, err := im.Cache.Resolve(im.Ref); err != nil || commit != im.Commit || p.shared[im.Cache.Path()] || idxBytes(im.Cache.Path()) > keepIdxBytes {
		im.Close()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.images) >= p.bound {
		im.Close()
		return
	}
	p.images[name] = im
}

// idxBytes is the size of the pack indexes of the cache at path; an index
// that cannot be read counts as too large.
func idxBytes(path string) int64 {
	dir := filepath.Join(path, "objects", "pack")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return math.MaxInt64
	}
	var n int64
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".idx") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return math.MaxInt64
		}
		n += fi.Size()
	}
	return n
}

// Take hands over the image Prefetch prepared at the pin and fetched for
// the unit name, once: the caller closes it. It is nil when there is none,
// or when it was taken already (a unit done again after its cache was
// repaired prepares it afresh). It is the run's Runner.Prepared.
func (p *Prefetched[R]) Take(name string) *Image {
	if p.wait(context.Background(), name) != nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	im := p.images[name]
	delete(p.images, name)
	return im
}

// Close closes the images Prefetch kept that no unit took (a run that
// ended early), releasing their caches' locks. It is safe to call more
// than once.
func (p *Prefetched[R]) Close() error {
	p.Wait()
	p.mu.Lock()
	images := p.images
	p.images = map[string]*Image{}
	p.mu.Unlock()
	var errs []error
	for _, im := range images {
		errs = append(errs, im.Close())
	}
	return errors.Join(errs...)
}

func (p *Prefetched[R]) record(name string, r prefetched[R]) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pre[name] = r
}

// Quick is the quick answer for the unit name: the one Prefetch recorded
// (its report, "not quick", or the error it met, handed back once), or
// quick's own, asked now. ok is false when the unit needs the full work.
func (p *Prefetched[R]) Quick(ctx context.Context, name string) (R, bool, error) {
	if err := p.wait(ctx, name); err != nil {
		var zero R
		return zero, false, err
	}
	p.mu.Lock()
	r, found := p.pre[name]
	delete(p.pre, name)
	p.mu.Unlock()
	if found {
		return r.out, r.ok, r.err
	}
	return p.quick(ctx, name)
}

// Fetch brings im's upstream cache up to date once per run: not again
// when Prefetch, or an earlier unit on the same URL, fetched it.
func (p *Prefetched[R]) Fetch(ctx context.Context, im *Image) error {
	if err := p.wait(ctx, im.Name); err != nil {
		return err
	}
	p.mu.Lock()
	done := p.fetched[im.URL]
	p.mu.Unlock()
	if done {
		return nil
	}
	if err := im.Cache.Fetch(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	p.fetched[im.URL] = true
	p.mu.Unlock()
	return nil
}

// load loads the spec of the unit name: from the run's one tree walk
// (Units) when it walked this root, from the tree otherwise.
func (env Env) load(name string) (*spec.Spec, error) {
	if env.Units != nil && env.Units.Root() == env.Root {
		return env.Units.Load(name)
	}
	return spec.Load(env.Root, name)
}

// find finds the unit name (spec.Find) from the run's one tree walk when it
// walked this root, from the tree otherwise.
func (env Env) find(name string) (spec.Unit, error) {
	if env.Units != nil && env.Units.Root() == env.Root {
		return env.Units.Find(name)
	}
	return spec.Find(env.Root, name)
}
