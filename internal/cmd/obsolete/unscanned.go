package obsolete

import (
	"context"

	obsoletestage "github.com/patchkit/patchkit/internal/obsolete"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/report"
)

// unscanned checks a unit that has nothing to scan without fetching its
// history: when the unit's cache is new or partial (a whole-history fetch
// is what Prepare would do next), it lists the upstream's tags (an empty
// cache fetches nothing more; see obsolete.Unscanned) and, when no tag is
// newer than the pin, returns the report. ok is false otherwise (offline
// with no listing recorded, --refs, --write, branches, a reference patch, a
// complete cache, or tags to scan): checkImage then runs as before. Bad input is left to Prepare,
// which reports it the same way whether or not this ran. Offline, the tags
// are those of the last online listing (obsolete.Unscanned); a cache that
// cannot be opened offline is left to Prepare too.
func unscanned(ctx context.Context, env pipeline.Env, name string, opts *Options) (out report.Obsolete, ok bool, err error) {
	if len(opts.Refs) > 0 || opts.Write {
		return out, false, nil
	}
	im, ok, err := pipeline.Peek(ctx, env, name)
	if env.Offline && err != nil {
		return out, false, nil
	}
	if err != nil || !ok {
		return out, false, err
	}
	defer im.Close()
	if !im.Cache.Partial() {
		return out, false, nil
	}
	rep, ok, err := obsoletestage.Unscanned(ctx, obsoletestage.Input{Cache: im.Cache, Spec: im.Spec, Patches: im.Patches})
	if err != nil || !ok {
		return out, false, err
	}
	return report.Obsolete{Image: name, Unit: im.Spec.Dir, Report: rep}, true, nil
}
