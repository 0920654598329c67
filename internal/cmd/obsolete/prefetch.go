package obsolete

import (
	"context"
	"sync"

	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/report"
	"github.com/patchkit/patchkit/internal/spec"
)

// listBound is how many upstreams a run lists (and fetches) at once.
var listBound = 4

// runState is what the units of one run share: the upstream URLs fetched,
// and what prefetch found per unit.
type runState struct {
	fetched map[string]bool
	pre     map[string]prefetched
}

// prefetched is prefetch's answer for one unit: the report of a unit with
// nothing to scan (quick), or the error its preparation or fetch met.
type prefetched struct {
	out   report.Obsolete
	quick bool
	err   error
}

func newRunState() *runState {
	return &runState{fetched: map[string]bool{}, pre: map[string]prefetched{}}
}

// unscanned is the package's unscanned, answered by prefetch when it ran
// for the unit. An error prefetch met is returned once: a repaired cache is
// checked again for real.
func (st *runState) unscanned(ctx context.Context, env pipeline.Env, name string, opts *Options) (report.Obsolete, bool, error) {
	if p, ok := st.pre[name]; ok {
		delete(st.pre, name)
		if p.err != nil || p.quick {
			return p.out, p.quick, p.err
		}
	}
	return unscanned(ctx, env, name, opts)
}

// prefetch brings the upstreams of a run's units up to date before they are
// checked one by one, listBound upstreams at a time (a monorepo's units
// otherwise list their upstreams one after another), one worker per
// upstream URL taking its units in order: a unit with nothing to scan is
// answered from the listing (unscanned), the first other one is prepared
// and its cache fetched; the URL is then done. It changes no result and no
// order: checkImage runs as before, finding the caches fetched, and gets
// the error a unit met here as its own.
func prefetch(ctx context.Context, env pipeline.Env, images []string, opts *Options, st *runState) {
	if env.Offline || len(images) < 2 {
		return
	}
	var urls []string
	byURL := map[string][]string{}
	for _, name := range images {
		var s *spec.Spec
		var err error
		if env.Units != nil && env.Units.Root() == env.Root {
			s, err = env.Units.Load(name)
		} else {
			s, err = spec.Load(env.Root, name)
		}
		if err != nil {
			continue // checkImage reports it
		}
		url := s.Upstream.URL
		if env.UpstreamURL != "" {
			url = env.UpstreamURL
		}
		if byURL[url] == nil {
			urls = append(urls, url)
		}
		byURL[url] = append(byURL[url], name)
	}
	var mu sync.Mutex
	record := func(name string, p prefetched) {
		mu.Lock()
		defer mu.Unlock()
		st.pre[name] = p
	}
	sem := make(chan struct{}, max(listBound, 1))
	var wg sync.WaitGroup
	for _, url := range urls {
		wg.Add(1)
		sem <- struct{}{}
		go func(names []string) {
			defer wg.Done()
			defer func() { <-sem }()
			for _, name := range names {
				if ctx.Err() != nil {
					return
				}
				if out, ok, err := unscanned(ctx, env, name, opts); err != nil || ok {
					record(name, prefetched{out: out, quick: ok, err: err})
					if err != nil {
						return
					}
					continue
				}
				im, err := pipeline.Prepare(ctx, env, name, "")
				if err != nil {
					record(name, prefetched{err: err})
					continue
				}
				err = im.Cache.Fetch(ctx)
				im.Close()
				if err != nil {
					record(name, prefetched{err: err})
					return
				}
				mu.Lock()
				st.fetched[im.URL] = true
				mu.Unlock()
				return
			}
		}(byURL[url])
	}
	wg.Wait()
}
