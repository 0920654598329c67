package obsolete

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/upstream"
)

// selectRefs returns the refs to scan, in order, the release tags it skips,
// and the history of the range between the pin and the refs:
//
//  1. the tags matching upstream.releases (path.Match) that are newer than
//     the pin (see newerTags). Semantic versions (with or without a leading
//     v, as upstream.CompareVersions reads them) come first, in version
//     order; the others follow by commit date, flagged NonSemver;
//  2. then upstream.branches, in the spec's order.
//
// Input.Refs replaces both, scanned in the order given.
func selectRefs(ctx context.Context, g gitRunner, in Input) ([]Ref, []Skipped, *history, error) {
	c := in.Cache
	if len(in.Refs) > 0 {
		tags, err := c.Tags()
		if err != nil {
			return nil, nil, nil, err
		}
		refs, err := explicitRefs(ctx, c, in.Refs, tagNamesOf(tags))
		if err != nil {
			return nil, nil, nil, err
		}
		var tips []string
		for _, r := range refs {
			tips = append(tips, r.Commit)
		}
		h, err := loadRange(ctx, g, in.PinCommit, tips)
		if err != nil {
			return nil, nil, nil, err
		}
		return refs, nil, h, nil
	}

	up := in.Spec.Upstream
	matching, tagNames, notCommits, err := releaseTags(in)
	if err != nil {
		return nil, nil, nil, err
	}
	var branches []Ref
	for i, b := range up.Branches {
		id, err := c.Resolve(b)
		if err != nil {
			key := fmt.Sprintf("upstream.branches[%d]", i)
			return nil, nil, nil, &diag.InputError{File: in.Spec.File, Line: in.Spec.Line(key), Key: key,
				Msg: fmt.Sprintf("branch %q is not in the upstream cache", b), Err: err}
		}
		branches = append(branches, Ref{Name: b, Kind: KindBranch, Commit: id})
	}
	var tips []string
	for _, t := range matching {
		tips = append(tips, t.Commit)
	}
	for _, b := range branches {
		tips = append(tips, b.Commit)
	}
	h, err := loadRange(ctx, g, in.PinCommit, dedupe(tips))
	if err != nil {
		return nil, nil, nil, err
	}
	semver, other, skipped, err := newerTags(in, h, matching, tagNames, notCommits)
	if err != nil {
		return nil, nil, nil, err
	}
	var refs []Ref
	for _, t := range semver {
		refs = append(refs, Ref{Name: t.Name, Kind: KindTag, Commit: t.Commit})
	}
	for _, t := range other {
		refs = append(refs, Ref{Name: t.Name, Kind: KindTag, Commit: t.Commit, NonSemver: true})
	}
	refs = append(refs, branches...)
	return refs, skipped, h, nil
}

// Reasons a matching release tag is not scanned.
const (
	skipNotNewer     = "not newer than the pin"
	skipPinHasIt     = "the pin contains it"
	skipBeforeBase   = "older than %s, the latest release the pin contains, and does not contain the pin"
	skipBeforeCommit = "committed before the pin, and does not contain it"
	skipNotCommit    = "names a tree or a blob, not a commit"
)

// releaseTags returns the tags matching upstream.releases that point at
// commits, the names of those and of the pin's tag, when it points at a
// commit, and the names of the matching tags that point at no commit (a
// tree or a blob), sorted. Only these tags' objects are read: an
// upstream's many other tags cost nothing but their names in packed-refs.
func releaseTags(in Input) ([]upstream.Tag, map[string]bool, []string, error) {
	up := in.Spec.Upstream
	names, err := in.Cache.TagNames()
	if err != nil {
		return nil, nil, nil, err
	}
	release := map[string]bool{}
	if up.Releases != "" {
		for _, n := range names {
			if ok, err := path.Match(up.Releases, n); err != nil {
				return nil, nil, nil, &diag.InputError{File: in.Spec.File, Line: in.Spec.Line("upstream.releases"), Key: "upstream.releases", Msg: fmt.Sprintf("bad glob %q", up.Releases), Err: err}
			} else if ok {
				release[n] = true
			}
		}
	}
	tags, err := in.Cache.TagsMatching(func(n string) bool { return release[n] || n == up.Ref })
	if err != nil {
		return nil, nil, nil, err
	}
	var matching []upstream.Tag
	for _, t := range tags {
		if release[t.Name] {
			matching = append(matching, t)
		}
	}
	commits := tagNamesOf(tags)
	var notCommits []string
	for n := range release {
		if !commits[n] {
			notCommits = append(notCommits, n)
		}
	}
	sort.Strings(notCommits)
	return matching, commits, notCommits, nil
}

func tagNamesOf(tags []upstream.Tag) map[string]bool {
	names := map[string]bool{}
	for _, t := range tags {
		names[t.Name] = true
	}
	return names
}

// newerTags splits the matching tags into those to scan (semantic versions
// in version order, the others by commit date) and those skipped, with why.
//
// When the pin is a semantic-version tag, newer is a higher version (tags
// that are not versions: those the pin does not reach). Otherwise (a commit
// id, or a tag that is not a version) a tag is newer when it contains the
// pin, or, when it does not and the pin does not contain it either (another
// branch), when it is a higher version than the latest release the pin
// contains (its base), or, without a base or a version, when its commit is
// younger than the pin's. notCommits, matching tags that name a tree or a
// blob, are skipped.
func newerTags(in Input, h *history, matching []upstream.Tag, tagNames map[string]bool, notCommits []string) (semver, other []upstream.Tag, skipped []Skipped, err error) {
	pin := in.Spec.Upstream.Ref
	_, pinSemver := upstream.CompareVersions(pin, pin)
	pinSemver = pinSemver && tagNames[pin]
	base := ""
	if !pinSemver {
		for _, t := range matching {
			if _, ok := upstream.CompareVersions(t.Name, t.Name); ok && !h.inRange(t.Commit) {
				if cmp, _ := upstream.CompareVersions(t.Name, base); base == "" || cmp > 0 {
					base = t.Name
				}
			}
		}
	}
	var pinTime time.Time
	if !pinSemver {
		cm, err := in.Cache.Commit(in.PinCommit)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("reading the pinned commit %s: %w", in.PinCommit, err)
		}
		pinTime = cm.Committer.When
	}
	for _, t := range matching {
		if t.Name == pin {
			continue
		}
		_, isSemver := upstream.CompareVersions(t.Name, t.Name)
		reason := ""
		switch {
		case isSemver && pinSemver:
			if cmp, _ := upstream.CompareVersions(t.Name, pin); cmp <= 0 {
				reason = skipNotNewer
			}
		case !h.inRange(t.Commit):
			reason = skipPinHasIt
		case pinSemver || h.containsPin(t.Commit):
		case isSemver && base != "":
			if cmp, _ := upstream.CompareVersions(t.Name, base); cmp <= 0 {
				reason = fmt.Sprintf(skipBeforeBase, base)
			}
		case !t.Time.After(pinTime):
			reason = skipBeforeCommit
		}
		switch {
		case reason != "":
			skipped = append(skipped, Skipped{Ref: t.Name, Reason: reason})
		case isSemver:
			semver = append(semver, t)
		default:
			other = append(other, t)
		}
	}
	// Matching tags that name no commit are skipped too; a version not
	// newer than a version pin is that first, as Unscanned says from names
	// alone.
	for _, n := range notCommits {
		reason := skipNotCommit
		if cmp, ok := upstream.CompareVersions(n, pin); ok && pinSemver && cmp <= 0 {
			reason = skipNotNewer
		}
		skipped = append(skipped, Skipped{Ref: n, Reason: reason})
	}
	if len(notCommits) > 0 {
		sort.Slice(skipped, func(i, j int) bool { return skipped[i].Ref < skipped[j].Ref })
	}
	sort.SliceStable(semver, func(i, j int) bool {
		if cmp, _ := upstream.CompareVersions(semver[i].Name, semver[j].Name); cmp != 0 {
			return cmp < 0
		}
		return semver[i].Name < semver[j].Name
	})
	sort.SliceStable(other, func(i, j int) bool {
		if !other[i].Time.Equal(other[j].Time) {
			return other[i].Time.Before(other[j].Time)
		}
		return other[i].Name < other[j].Name
	})
	return semver, other, skipped, nil
}

// IsPrerelease reports whether a release tag is a prerelease (v1.34.0-rc.1)
// of a project whose releases the glob releases selects and whose pin is
// pin. A suffix that the glob names literally ("*-edge") or that the pin
// carries (26.3.6-edge) is the project's release line, not a prerelease:
// 26.3.7-edge is a final release there, 26.3.7-rc.1-edge a prerelease.
func IsPrerelease(name, releases, pin string) bool {
	pre := prereleasePart(name)
	if pre == "" {
		return false
	}
	for _, line := range []string{prereleasePart(pin), globSuffix(releases)} {
		if !isLineSuffix(line) {
			continue
		}
		if pre == line {
			return false
		}
		if rest, ok := strings.CutSuffix(pre, "-"+line); ok && rest != "" {
			return true
		}
	}
	return true
}

// isLineSuffix reports whether a version suffix can name a release line:
// not empty, no digit (rc.1, beta2) and no prerelease word.
func isLineSuffix(s string) bool {
	if s == "" || strings.ContainsAny(s, "0123456789") {
		return false
	}
	switch strings.ToLower(s) {
	case "alpha", "beta", "rc", "pre", "preview", "dev", "snapshot", "nightly":
		return false
	}
	return true
}

// prereleasePart returns the prerelease part of a semantic version tag
// ("rc.1" of v1.2.0-rc.1+build), "" for none or for a tag that is not a
// version.
func prereleasePart(name string) string {
	if _, ok := upstream.CompareVersions(name, name); !ok {
		return ""
	}
	core, _, _ := strings.Cut(strings.TrimPrefix(name, "v"), "+")
	_, pre, _ := strings.Cut(core, "-")
	return pre
}

// globSuffix returns the literal suffix a releases glob ends with after its
// last '-' ("edge" of "2*-edge"), "" when that part has a wildcard or the
// glob has no '-'.
func globSuffix(glob string) string {
	i := strings.LastIndexByte(glob, '-')
	if i < 0 {
		return ""
	}
	s := glob[i+1:]
	if s == "" || strings.ContainsAny(s, "*?[]\\") {
		return ""
	}
	return s
}

// explicitRefs resolves --refs, fetching those the cache lacks (unless
// offline), in the order given, without repeats.
func explicitRefs(ctx context.Context, c *upstream.Cache, names []string, tagNames map[string]bool) ([]Ref, error) {
	var clean []string
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		clean = append(clean, n)
	}
	if err := c.Ensure(ctx, clean...); err != nil {
		return nil, err
	}
	var refs []Ref
	for _, n := range clean {
		id, err := c.Resolve(n)
		if err != nil {
			return nil, err
		}
		r := Ref{Name: n, Commit: id}
		tag := strings.TrimPrefix(n, "refs/tags/")
		switch {
		case tagNames[tag] && !strings.HasPrefix(n, "refs/heads/"):
			r.Kind = KindTag
			_, isSemver := upstream.CompareVersions(tag, tag)
			r.NonSemver = !isSemver
		case len(n) == 40 && strings.EqualFold(n, id):
			r.Kind = KindCommit
		default:
			r.Kind = KindBranch
		}
		refs = append(refs, r)
	}
	return refs, nil
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
