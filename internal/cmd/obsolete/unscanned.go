package obsolete

import (
	"context"
	"path/filepath"

	obsoletestage "github.com/patchkit/patchkit/internal/obsolete"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/report"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/untrusted"
	"github.com/patchkit/patchkit/internal/upstream"
)

// unscanned checks a unit that has nothing to scan without fetching its
// history: when the unit's cache is new or partial (a whole-history fetch
// is what Prepare would do next), it lists the upstream's tags (an empty
// cache fetches nothing more; see obsolete.Unscanned) and, when no tag is
// newer than the pin, returns the report. ok is false otherwise (offline,
// --refs, --write, branches, a reference patch, a complete cache, or tags
// to scan): checkImage then runs as before. Bad input is left to Prepare,
// which reports it the same way whether or not this ran.
func unscanned(ctx context.Context, env pipeline.Env, name string, opts *Options) (out report.Obsolete, ok bool, err error) {
	if env.Offline || len(opts.Refs) > 0 || opts.Write {
		return out, false, nil
	}
	var s *spec.Spec
	if env.Units != nil && env.Units.Root() == env.Root {
		s, err = env.Units.Load(name)
	} else {
		s, err = spec.Load(env.Root, name)
	}
	if err != nil || len(s.Upstream.Branches) > 0 {
		return out, false, nil
	}
	if _, semver := upstream.CompareVersions(s.Upstream.Ref, s.Upstream.Ref); !semver {
		return out, false, nil
	}
	patches, err := series.Load(filepath.Join(env.Root, filepath.FromSlash(s.Patches)), s.Patches, pipeline.SeriesOptions(s)...)
	if err != nil {
		return out, false, nil
	}
	for _, p := range patches {
		if p.IsReference() {
			return out, false, nil
		}
	}
	url := s.Upstream.URL
	if env.UpstreamURL != "" {
		url = env.UpstreamURL
	}
	untrusted.AddURL(url)
	cache, err := upstream.Open(ctx, env.CacheDir, url,
		upstream.WithProgress(env.Progress),
		upstream.WithShallow(true),
		upstream.WithTimeouts(min(env.FetchTimeout, upstream.DefaultConnectTimeout), env.FetchTimeout))
	if err != nil {
		return out, false, err
	}
	defer cache.Close()
	if !cache.Partial() {
		return out, false, nil
	}
	rep, ok, err := obsoletestage.Unscanned(ctx, obsoletestage.Input{Cache: cache, Spec: s, Patches: patches})
	if err != nil || !ok {
		return out, false, err
	}
	return report.Obsolete{Image: name, Unit: s.Dir, Report: rep}, true, nil
}
