package chart

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"gopkg.in/yaml.v3"

	"github.com/patchkit/patchkit/internal/tree"
	"github.com/patchkit/patchkit/internal/untrusted"
	"github.com/patchkit/patchkit/internal/upstream"
)

// HelmChartMediaType is the media type of a Helm chart's content layer in an OCI registry.
const HelmChartMediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"

// ErrOffline: a chart upstream other than git needs the network.
var ErrOffline = upstream.ErrOffline

// Fetcher reads a unit's upstream at a version.
type Fetcher struct {
	root     string
	CacheDir string       // the git upstream cache
	Offline  bool         // no network
	Client   *http.Client // Helm repositories and release assets; nil: a client with a 2-minute timeout
	Remote   []remote.Option

	mu      sync.Mutex
	indexes map[string]*helmIndex // the Helm repositories' index.yaml this run read
	// indexErrs are the Helm repositories whose index.yaml this run could
	// not read, and why: each of their units fails alone with that error,
	// without waiting on the repository again.
	indexErrs map[string]error
}

// NewFetcher returns a Fetcher for the units of the repository at root.
func NewFetcher(root, cacheDir string, offline bool) *Fetcher {
	return &Fetcher{root: root, CacheDir: cacheDir, Offline: offline}
}

func (f *Fetcher) client() *http.Client {
	if f.Client != nil {
		return f.Client
	}
	return &http.Client{Timeout: 2 * time.Minute}
}

// Fetch returns the upstream's files at version, relative to the unit's
// directory, as the Makefile's fetch leaves them (before the series).
func (f *Fetcher) Fetch(ctx context.Context, u *Unit, version string) (Files, error) {
	var files Files
	var err error
	untrusted.AddURL(u.URL()) // its credentials never reach output, in any encoding
	switch u.Kind() {
	case KindHelm:
		files, err = f.helm(ctx, u, version)
	case KindOCI:
		files, err = f.oci(ctx, u, version)
	case KindGit:
		files, err = f.git(ctx, u, version)
	default:
		files, err = f.asset(ctx, u, version)
	}
	if err != nil {
		return nil, err
	}
	for _, r := range u.Remove {
		r = path.Clean(r)
		for p := range files {
			if p == r || strings.HasPrefix(p, r+"/") {
				delete(files, p)
			}
		}
	}
	return files, nil
}

func (f *Fetcher) get(ctx context.Context, rawURL string) ([]byte, error) {
	if f.Offline {
		return nil, fmt.Errorf("%w: fetching %s needs the network", ErrOffline, untrusted.Redact(rawURL))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := f.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", untrusted.Redact(rawURL), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching %s: %s", untrusted.Redact(rawURL), resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 1<<30))
}

// cached returns what source serves at version (a chart archive, an
// asset) from the chart cache, or, on a miss, from fetch, storing it. A
// damaged entry is fetched afresh; offline, it is a cache fault, and a
// miss needs the network.
func (f *Fetcher) cached(kind, source, version string, fetch func() ([]byte, error)) ([]byte, error) {
	c := f.chartCache()
	if c == nil {
		return fetch()
	}
	key := cacheKey(kind, source, version)
	data, ok, err := c.get(key, f.Offline)
	switch {
	case err != nil && f.Offline:
		return nil, err
	case err != nil:
		c.drop(key, err)
	case ok:
		return data, nil
	}
	if f.Offline {
		return nil, fmt.Errorf("%w: %s %s is not in the chart cache %s: run once without --offline to fetch it", ErrOffline, untrusted.Redact(source), version, c.dir)
	}
	data, err = fetch()
	if err != nil {
		return nil, err
	}
	if err := c.put(key, source, version, data); err != nil {
		return nil, fmt.Errorf("writing the chart cache %s: %w", c.dir, err)
	}
	return data, nil
}

// helmIndex is the part of a Helm repository's index.yaml patchkit reads.
type helmIndex struct {
	Entries map[string][]struct {
		Version string   `yaml:"version"`
		URLs    []string `yaml:"urls"`
		Digest  string   `yaml:"digest"`
	} `yaml:"entries"`
}

func (idx *helmIndex) has(chart, version string) bool {
	for _, e := range idx.Entries[chart] {
		if e.Version == version && len(e.URLs) > 0 {
			return true
		}
	}
	return false
}

// helmIndex reads the repository's index.yaml, once a run: a repository
// that could not be reached is not asked again (its error is given again).
func (f *Fetcher) helmIndex(ctx context.Context, repo string) (*helmIndex, error) {
	f.mu.Lock()
	known, ok := f.indexes[repo]
	failed := f.indexErrs[repo]
	f.mu.Unlock()
	if ok {
		return known, nil
	}
	if failed != nil {
		return nil, failed
	}
	data, err := f.get(ctx, strings.TrimSuffix(repo, "/")+"/index.yaml")
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, ErrOffline) {
			f.mu.Lock()
			if f.indexErrs == nil {
				f.indexErrs = map[string]error{}
			}
			f.indexErrs[repo] = err
			f.mu.Unlock()
		}
		return nil, err
	}
	var idx helmIndex
	if err := yaml.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("reading the index of %s: %w", untrusted.Redact(repo), err)
	}
	f.mu.Lock()
	if f.indexes == nil {
		f.indexes = map[string]*helmIndex{}
	}
	f.indexes[repo] = &idx
	f.mu.Unlock()
	return &idx, nil
}

func (f *Fetcher) helm(ctx context.Context, u *Unit, version string) (Files, error) {
	repo := u.Upstream.Helm
	tgz, err := f.cached(KindHelm, strings.TrimSuffix(repo, "/")+"/"+u.Upstream.Chart, version, func() ([]byte, error) {
		return f.helmArchive(ctx, u, version)
	})
	if err != nil {
		return nil, err
	}
	return untarChart(tgz)
}

// helmArchive downloads the chart archive the repository's index.yaml
// names for version, and checks it against the index's digest.
func (f *Fetcher) helmArchive(ctx context.Context, u *Unit, version string) ([]byte, error) {
	repo := u.Upstream.Helm
	idx, err := f.helmIndex(ctx, repo)
	if err != nil {
		return nil, err
	}
	if !idx.has(u.Upstream.Chart, version) {
		// The index this run read first may predate the version: read it again.
		f.mu.Lock()
		delete(f.indexes, repo)
		f.mu.Unlock()
		if idx, err = f.helmIndex(ctx, repo); err != nil {
			return nil, err
		}
	}
	for _, e := range idx.Entries[u.Upstream.Chart] {
		if e.Version != version || len(e.URLs) == 0 {
			continue
		}
		base, err := url.Parse(strings.TrimSuffix(repo, "/") + "/")
		if err != nil {
			return nil, err
		}
		ref, err := url.Parse(e.URLs[0])
		if err != nil {
			return nil, fmt.Errorf("%s: chart %s %s: bad URL: %w", untrusted.Redact(repo), u.Upstream.Chart, version, err)
		}
		tgz, err := f.get(ctx, base.ResolveReference(ref).String())
		if err != nil {
			return nil, err
		}
		if d := strings.TrimPrefix(e.Digest, "sha256:"); d != "" && "sha256:"+d != digestOf(tgz) {
			return nil, fmt.Errorf("%s: chart %s %s: the archive served is %s, not the index's digest sha256:%s: refused", untrusted.Redact(repo), u.Upstream.Chart, version, digestOf(tgz), untrusted.Redact(d))
		}
		return tgz, nil
	}
	return nil, &NotFoundError{What: fmt.Sprintf("chart %s version %s in %s", u.Upstream.Chart, version, untrusted.Redact(repo))}
}

// NotFoundError: the upstream has no such version.
type NotFoundError struct{ What string }

func (e *NotFoundError) Error() string { return e.What + ": not found upstream" }

func ociRef(u *Unit, version string) (name.Reference, error) {
	return name.ParseReference(strings.TrimPrefix(u.Upstream.OCI, "oci://") + ":" + version)
}

func (f *Fetcher) oci(ctx context.Context, u *Unit, version string) (Files, error) {
	tgz, err := f.cached(KindOCI, u.Upstream.OCI, version, func() ([]byte, error) {
		return f.ociArchive(ctx, u, version)
	})
	if err != nil {
		return nil, err
	}
	return untarChart(tgz)
}

// ociArchive downloads the chart layer of the OCI chart at version and
// checks it against the manifest's digest.
func (f *Fetcher) ociArchive(ctx context.Context, u *Unit, version string) ([]byte, error) {
	if f.Offline {
		return nil, fmt.Errorf("%w: fetching %s needs the network", ErrOffline, u.Upstream.OCI)
	}
	ref, err := ociRef(u, version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u.Upstream.OCI, err)
	}
	img, err := remote.Image(ref, append([]remote.Option{remote.WithContext(ctx)}, f.Remote...)...)
	if err != nil {
		var te *transport.Error
		if errors.As(err, &te) && te.StatusCode == http.StatusNotFound {
			return nil, &NotFoundError{What: fmt.Sprintf("tag %s of %s", version, u.Upstream.OCI)}
		}
		return nil, fmt.Errorf("fetching %s: %w", ref, err)
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", ref, err)
	}
	for _, l := range layers {
		mt, err := l.MediaType()
		if err != nil || string(mt) != HelmChartMediaType {
			continue
		}
		want, err := l.Digest()
		if err != nil {
			return nil, fmt.Errorf("fetching %s: %w", ref, err)
		}
		rc, err := l.Compressed()
		if err != nil {
			return nil, fmt.Errorf("fetching %s: %w", ref, err)
		}
		tgz, err := io.ReadAll(io.LimitReader(rc, 1<<30))
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("fetching %s: %w", ref, err)
		}
		if got := digestOf(tgz); got != want.String() {
			return nil, fmt.Errorf("fetching %s: the chart layer served is %s, not the manifest's %s: refused", ref, got, want)
		}
		return tgz, nil
	}
	return nil, fmt.Errorf("%s: no layer of media type %s", ref, HelmChartMediaType)
}

// untarChart unpacks a chart archive as `helm pull --untar` does: its one
// top directory (the chart's name) becomes the unit's directory.
func untarChart(tgz []byte) (Files, error) {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return nil, fmt.Errorf("reading the chart archive: %w", err)
	}
	tr := tar.NewReader(zr)
	files := Files{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the chart archive: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		p := path.Clean(strings.TrimPrefix(h.Name, "./"))
		_, rest, ok := strings.Cut(p, "/")
		if !ok || tree.Clean(rest) != nil {
			return nil, fmt.Errorf("reading the chart archive: unsafe path %q", h.Name)
		}
		data, err := io.ReadAll(io.LimitReader(tr, 1<<30))
		if err != nil {
			return nil, fmt.Errorf("reading the chart archive: %w", err)
		}
		files[rest] = data
	}
	return files, nil
}

// Tag is the git tag of version.
func (u *Unit) Tag(version string) string {
	t := u.Upstream.Tag
	if t == "" {
		t = "{version}"
	}
	return strings.ReplaceAll(t, "{version}", version)
}

func (f *Fetcher) git(ctx context.Context, u *Unit, version string) (Files, error) {
	untrusted.AddURL(u.Upstream.Git)
	c, err := upstream.Open(ctx, f.CacheDir, u.Upstream.Git, upstream.WithOffline(f.Offline), upstream.WithShallow(true))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	tag := u.Tag(version)
	if err := c.Ensure(ctx, tag); err != nil {
		if errors.Is(err, upstream.ErrRefNotFound) {
			return nil, &NotFoundError{What: fmt.Sprintf("tag %s of %s", tag, c.URL())}
		}
		return nil, err
	}
	snap, err := c.Source(tag)
	if err != nil {
		return nil, err
	}
	prefix := strings.Trim(u.Upstream.Path, "/")
	files := Files{}
	err = snap.Walk(func(p string, fl *tree.File) error {
		if prefix != "" {
			if !strings.HasPrefix(p, prefix+"/") {
				return nil
			}
			p = strings.TrimPrefix(p, prefix+"/")
		}
		if fl.Mode == tree.Gitlink || fl.Mode == tree.Symlink {
			return nil
		}
		files[p] = fl.Data
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, &NotFoundError{What: fmt.Sprintf("%s at tag %s of %s", prefix, tag, c.URL())}
	}
	return files, nil
}

// AssetURL is the release asset's URL at version.
func (u *Unit) AssetURL(version string) string {
	return strings.ReplaceAll(u.Upstream.URL, "{version}", version)
}

func (f *Fetcher) asset(ctx context.Context, u *Unit, version string) (Files, error) {
	data, err := f.cached(KindURL, u.AssetURL(version), version, func() ([]byte, error) {
		return f.get(ctx, u.AssetURL(version))
	})
	if err != nil {
		return nil, err
	}
	n := u.Upstream.Name
	if n == "" {
		n = path.Base(u.AssetURL(version))
	}
	return Files{n: data}, nil
}
