package obsolete

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/upstream"
)

// selectRefs returns the refs to scan, in order, and the history of the range
// between the pin and them:
//
//  1. the tags matching upstream.releases (path.Match) that are newer than
//     the pin: semantic versions (with or without a leading v, as
//     upstream.CompareVersions reads them) greater than the pin's when the pin
//     is one; otherwise, and for tags that are not semantic versions, tags
//     whose commit the pin does not reach. Semantic versions come first, in
//     version order; the others follow by commit date, flagged NonSemver;
//  2. then upstream.branches, in the spec's order.
//
// Input.Refs replaces both, scanned in the order given.
func selectRefs(ctx context.Context, g gitRunner, in Input) ([]Ref, *history, error) {
	c := in.Cache
	tags, err := c.Tags()
	if err != nil {
		return nil, nil, err
	}
	tagNames := map[string]bool{}
	for _, t := range tags {
		tagNames[t.Name] = true
	}
	var refs []Ref
	var tips []string
	if len(in.Refs) > 0 {
		refs, err = explicitRefs(ctx, c, in.Refs, tagNames)
		if err != nil {
			return nil, nil, err
		}
		for _, r := range refs {
			tips = append(tips, r.Commit)
		}
		h, err := loadRange(ctx, g, in.PinCommit, tips)
		if err != nil {
			return nil, nil, err
		}
		return refs, h, nil
	}

	up := in.Spec.Upstream
	var matching []upstream.Tag
	if up.Releases != "" {
		for _, t := range tags {
			if ok, err := path.Match(up.Releases, t.Name); err != nil {
				return nil, nil, &diag.InputError{File: in.Spec.File, Line: in.Spec.Line("upstream.releases"), Key: "upstream.releases", Msg: fmt.Sprintf("bad glob %q", up.Releases), Err: err}
			} else if ok {
				matching = append(matching, t)
			}
		}
	}
	var branches []Ref
	for i, b := range up.Branches {
		id, err := c.Resolve(b)
		if err != nil {
			key := fmt.Sprintf("upstream.branches[%d]", i)
			return nil, nil, &diag.InputError{File: in.Spec.File, Line: in.Spec.Line(key), Key: key,
				Msg: fmt.Sprintf("branch %q is not in the upstream cache", b), Err: err}
		}
		branches = append(branches, Ref{Name: b, Kind: KindBranch, Commit: id})
	}
	for _, t := range matching {
		tips = append(tips, t.Commit)
	}
	for _, b := range branches {
		tips = append(tips, b.Commit)
	}
	h, err := loadRange(ctx, g, in.PinCommit, dedupe(tips))
	if err != nil {
		return nil, nil, err
	}

	pin := in.Spec.Upstream.Ref
	_, pinSemver := upstream.CompareVersions(pin, pin)
	pinSemver = pinSemver && tagNames[pin]
	var semver, other []upstream.Tag
	for _, t := range matching {
		if t.Name == pin {
			continue
		}
		_, isSemver := upstream.CompareVersions(t.Name, t.Name)
		switch {
		case isSemver && pinSemver:
			if cmp, _ := upstream.CompareVersions(t.Name, pin); cmp > 0 {
				semver = append(semver, t)
			}
		case h.inRange(t.Commit):
			if isSemver {
				semver = append(semver, t)
			} else {
				other = append(other, t)
			}
		}
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
	for _, t := range semver {
		refs = append(refs, Ref{Name: t.Name, Kind: KindTag, Commit: t.Commit})
	}
	for _, t := range other {
		refs = append(refs, Ref{Name: t.Name, Kind: KindTag, Commit: t.Commit, NonSemver: true})
	}
	refs = append(refs, branches...)
	return refs, h, nil
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
