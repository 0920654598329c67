package chart

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/patchkit/patchkit/internal/obsolete"
	"github.com/patchkit/patchkit/internal/untrusted"
	"github.com/patchkit/patchkit/internal/upstream"
)

// Releases lists the upstream's versions after pin, oldest first: the
// versions of a Helm repository's index.yaml, the tags of an OCI chart, or
// the tags of a git upstream that the unit's tag template names (its
// {version}). Versions that are not semantic versions are left out; so
// are prereleases unless the pin is one.
func (f *Fetcher) Releases(ctx context.Context, u *Unit, pin string) ([]string, error) {
	var all []string
	switch u.Kind() {
	case KindHelm, KindOCI:
		vs, err := f.listVersions(ctx, u)
		if err != nil {
			return nil, err
		}
		all = vs
	case KindGit:
		c, err := upstream.Open(ctx, f.CacheDir, u.Upstream.Git, upstream.WithOffline(f.Offline))
		if err != nil {
			return nil, err
		}
		defer c.Close()
		if !f.Offline {
			if err := c.Fetch(ctx); err != nil {
				return nil, err
			}
		}
		names, err := c.TagNames()
		if err != nil {
			return nil, err
		}
		pre, post, _ := strings.Cut(u.Tag("\x00"), "\x00")
		for _, n := range names {
			if strings.HasPrefix(n, pre) && strings.HasSuffix(n, post) && len(n) > len(pre)+len(post) {
				all = append(all, n[len(pre):len(n)-len(post)])
			}
		}
	default:
		return nil, fmt.Errorf("%s: a release asset URL lists no versions", u.Upstream.URL)
	}
	pinPre := strings.Contains(pin, "-")
	var out []string
	for _, v := range all {
		c, ok := compareVersions(v, pin)
		if !ok || c <= 0 || (!pinPre && strings.Contains(strings.TrimPrefix(v, "v"), "-")) {
			continue
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { c, _ := compareVersions(out[i], out[j]); return c < 0 })
	return out, nil
}

// listVersions lists the versions of a Helm or OCI chart: online from the
// repository's index.yaml or the registry's tags, kept in the chart cache;
// offline, what the cache kept when last online.
func (f *Fetcher) listVersions(ctx context.Context, u *Unit) ([]string, error) {
	source := u.URL()
	c := f.chartCache()
	key := cacheKey(u.Kind(), source, "")
	if f.Offline {
		if c != nil {
			vs, ok, err := c.getList(key)
			if err != nil || ok {
				return vs, err
			}
		}
		return nil, fmt.Errorf("%w: listing the versions of %s needs the network, and the chart cache has no list of them: run once without --offline", ErrOffline, untrusted.Redact(source))
	}
	var vs []string
	if u.Kind() == KindHelm {
		idx, err := f.helmIndex(ctx, u.Upstream.Helm)
		if err != nil {
			return nil, err
		}
		for _, e := range idx.Entries[u.Upstream.Chart] {
			vs = append(vs, e.Version)
		}
	} else {
		ref, err := ociRef(u, "latest")
		if err != nil {
			return nil, err
		}
		tags, err := f.listTags(ctx, ref.Context())
		if err != nil {
			if b := bounded(err); b != nil {
				return nil, b
			}
			return nil, fmt.Errorf("listing the tags of %s: %w", u.Upstream.OCI, err)
		}
		vs = tags
	}
	if c != nil {
		if err := c.putList(key, source, vs); err != nil {
			return nil, fmt.Errorf("writing the chart cache %s: %w", c.dir, err)
		}
	}
	return vs, nil
}

// listTags lists repo's tags page by page, at most MaxTagPages of them: a
// registry whose Link header always names a next page is refused
// (go-containerregistry's List follows it forever).
func (f *Fetcher) listTags(ctx context.Context, repo name.Repository) ([]string, error) {
	p, err := remote.NewPuller(f.remoteOpts(ctx)...)
	if err != nil {
		return nil, err
	}
	l, err := p.Lister(ctx, repo)
	if err != nil {
		return nil, err
	}
	var tags []string
	for pages := 0; l.HasNext(); pages++ {
		if pages == MaxTagPages {
			return nil, fmt.Errorf("the registry still names a next page after %d pages, the limit: refused", MaxTagPages)
		}
		page, err := l.Next(ctx)
		if err != nil {
			return nil, err
		}
		tags = append(tags, page.Tags...)
	}
	return tags, nil
}

func compareVersions(a, b string) (int, bool) {
	va, vb := a, b
	if !strings.HasPrefix(va, "v") {
		va = "v" + va
	}
	if !strings.HasPrefix(vb, "v") {
		vb = "v" + vb
	}
	return upstream.CompareVersions(va, vb)
}

// Scan is obsolete-check on a chart unit: for each release after the pin,
// each patch of the series in order, as the Makefile applies it: applies
// (kept applied for the next), present (it reverse-applies: the release
// carries the change), or conflict.
func (f *Fetcher) Scan(ctx context.Context, u *Unit) (*obsolete.Report, error) {
	pin, err := u.Pin(f.root)
	if err != nil {
		return nil, err
	}
	versions, err := f.Releases(ctx, u, pin)
	if err != nil {
		return nil, err
	}
	rep := &obsolete.Report{URL: u.URL(), Pin: pin, PinCommit: pin}
	for _, p := range u.Series.Patches {
		rep.Patches = append(rep.Patches, obsolete.PatchReport{File: p})
	}
	prefix, err := relUnder(u.Series.Workdir, u.Dir)
	if err != nil {
		return nil, u.errf("series.workdir", "%v", err)
	}
	for _, v := range versions {
		rep.Refs = append(rep.Refs, obsolete.Ref{Name: v, Kind: obsolete.KindTag, Commit: v})
		up, err := f.Fetch(ctx, u, v)
		if err != nil {
			return nil, err
		}
		ws := Files{}
		for p, b := range up {
			ws[filepath.ToSlash(filepath.Join(prefix, p))] = b
		}
		for i, p := range u.Series.Patches {
			data, err := os.ReadFile(filepath.Join(f.root, filepath.FromSlash(p)))
			if err != nil {
				return nil, err
			}
			opt, err := u.optionsOf(u.Series.ArgsOf(i))
			if err != nil {
				return nil, err
			}
			opt.File, opt.GitApply, opt.NoBackup = u.Series.Target, u.Series.Tool == ToolGitApply, true
			status := obsolete.StatusConflict
			try := cloneFiles(ws)
			if res, err := GNUPatch(try, p, data, opt); err != nil {
				return nil, err
			} else if res.OK() {
				status, ws = obsolete.StatusApplies, try
			} else {
				ro := opt
				ro.Reverse, ro.Force = true, true
				if res, err := GNUPatch(cloneFiles(ws), p, data, ro); err == nil && res.OK() {
					status = obsolete.StatusPresent
				}
			}
			pr := &rep.Patches[i]
			pr.Results = append(pr.Results, obsolete.Result{Ref: v, Status: status})
			if status == obsolete.StatusPresent && pr.ObsoletedBy == "" {
				pr.ObsoletedBy, pr.Commit = v, v
			}
		}
	}
	return rep, nil
}

func cloneFiles(f Files) Files {
	c := make(Files, len(f))
	for k, v := range f {
		c[k] = v
	}
	return c
}
