package obsolete

import (
	"context"
	"path"

	"github.com/patchkit/patchkit/internal/upstream"
)

// Unscanned answers, from the upstream's tag names alone (Cache.RemoteTags:
// what `git ls-remote --tags` lists, no objects), a scan with nothing to
// scan: it returns Check's report and true when there are no --refs and no
// branches, the pin is a tag that is a semantic version, and every tag
// matching upstream.releases is a semantic version not newer than the pin.
// Check would then scan no ref and skip each of those tags as not newer
// than the pin; it needs no history, so a caller that has only the pin
// (a partial cache, upstream.WithShallow) need not fetch any. Otherwise it
// returns false: only the history says which tags are newer.
//
// Offline, the tags are those the last online listing of this cache
// returned (the listing memo, see listedTags): the cache as it was when it
// was last refreshed, as for every offline answer. With no listing recorded
// it returns false.
//
// An empty in.PinCommit is the pin tag's commit as the upstream lists it.
// A matching tag that does not point at a commit is skipped as not newer
// here (a name cannot tell), as Check skips it.
func Unscanned(ctx context.Context, in Input) (*Report, bool, error) {
	up := in.Spec.Upstream
	if len(in.Refs) > 0 || len(up.Branches) > 0 {
		return nil, false, nil
	}
	if _, ok := upstream.CompareVersions(up.Ref, up.Ref); !ok {
		return nil, false, nil
	}
	tags, ok, err := listedTags(ctx, in.Cache)
	if err != nil || !ok {
		return nil, false, err
	}
	pinTag, pinCommit := false, ""
	var skipped []Skipped
	for _, t := range tags {
		if t.Name == up.Ref {
			pinTag, pinCommit = true, t.Peeled
			continue
		}
		if up.Releases == "" {
			continue
		}
		match, err := path.Match(up.Releases, t.Name)
		if err != nil {
			return nil, false, nil // Check says what is wrong with the glob
		}
		if !match {
			continue
		}
		if cmp, ok := upstream.CompareVersions(t.Name, up.Ref); !ok || cmp > 0 {
			return nil, false, nil
		}
		skipped = append(skipped, Skipped{Ref: t.Name, Reason: skipNotNewer})
	}
	if !pinTag {
		return nil, false, nil
	}
	if in.PinCommit == "" {
		in.PinCommit = pinCommit
	}
	rep := &Report{
		URL:       in.Cache.URL(),
		Pin:       up.Ref,
		PinCommit: in.PinCommit,
		Skipped:   skipped,
		Patches:   make([]PatchReport, len(in.Patches)),
	}
	for i, p := range in.Patches {
		rep.Patches[i] = PatchReport{Patch: p, File: p.Path, Results: []Result{}}
	}
	return rep, true, nil
}
