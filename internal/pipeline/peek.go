package pipeline

import (
	"context"
	"path/filepath"

	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/upstream"
)

// Peek opens the unit name without fetching anything: its spec, its parsed
// series and its upstream cache opened shallow, for a command that may
// answer from the upstream's listing alone (obsolete-check's units with
// nothing to scan). ok is false, with no error, when the unit is not such a
// candidate: bad input (Prepare reports it the same way later), branches
// to follow, a pin that is not a version, a reference patch (its diff
// comes from history), or a cache that holds the history already
// (upstream.Complete: it is not opened). The Image has no Ref and no Commit: nothing is
// resolved. The caller closes it.
func Peek(ctx context.Context, env Env, name string) (im *Image, ok bool, err error) {
	s, err := env.load(name)
	if err != nil || len(s.Upstream.Branches) > 0 {
		return nil, false, nil
	}
	if _, semver := upstream.CompareVersions(s.Upstream.Ref, s.Upstream.Ref); !semver {
		return nil, false, nil
	}
	url, err := env.url(s)
	if err != nil {
		return nil, false, nil
	}
	if upstream.Complete(env.CacheDir, url) {
		return nil, false, nil // a cache with the history answers from it (Prepare)
	}
	patches, err := series.Load(filepath.Join(env.Root, filepath.FromSlash(s.Patches)), s.Patches, SeriesOptions(s)...)
	if err != nil {
		return nil, false, nil
	}
	for _, p := range patches {
		if p.IsReference() {
			return nil, false, nil
		}
	}
	cache, err := upstream.Open(ctx, env.CacheDir, url,
		upstream.WithProgress(env.Progress),
		upstream.WithOffline(env.Offline),
		upstream.WithShallow(true),
		upstream.WithTimeouts(min(env.FetchTimeout, upstream.DefaultConnectTimeout), env.FetchTimeout))
	if err != nil {
		return nil, false, err
	}
	return &Image{Name: name, Spec: s, URL: url, Cache: cache, Patches: patches}, true, nil
}
