package chart

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/chart/charttest"
	"github.com/patchkit/patchkit/internal/upstream"
)

// cacheFixture serves one chart per non-git form, each counting its
// requests: a Helm repository (index.yaml and a .tgz), an in-process OCI
// registry, and a release asset.
type cacheFixture struct {
	helm   *charttest.HelmRepo
	oci    *charttest.OCIRegistry
	assets *charttest.HelmRepo
	units  map[string]*Unit // by kind
	files  map[string]Files // what each serves at version "1.0.0"
}

func newCacheFixture(t *testing.T) *cacheFixture {
	t.Helper()
	fx := &cacheFixture{helm: charttest.NewHelmRepo(t), oci: charttest.NewOCIRegistry(t), assets: charttest.NewHelmRepo(t), units: map[string]*Unit{}, files: map[string]Files{}}
	for _, v := range []string{"1.0.0", "1.1.0"} {
		fx.helm.Add(t, "pg", v, charttest.Tgz(t, "pg", charttest.ChartFiles("pg", v, "v"+v)))
		charttest.PushOCI(t, fx.oci.Addr, "charts/lb", v, charttest.Tgz(t, "lb", charttest.ChartFiles("lb", v, v)))
		charttest.WriteFiles(t, fx.assets.Dir, map[string]string{"releases/download/v" + v + "/ds.yml": "kind: DaemonSet # " + v + "\n"})
	}
	fx.units[KindHelm] = &Unit{Dir: "charts/pg", Upstream: Upstream{Helm: fx.helm.URL, Chart: "pg"}}
	fx.units[KindOCI] = &Unit{Dir: "charts/lb", Upstream: Upstream{OCI: "oci://" + fx.oci.Addr + "/charts/lb"}}
	fx.units[KindURL] = &Unit{Dir: "templates", Upstream: Upstream{URL: strings.TrimSuffix(fx.assets.URL, "/charts") + "/releases/download/v{version}/ds.yml"}}
	for k, cf := range map[string]map[string]string{
		KindHelm: charttest.ChartFiles("pg", "1.0.0", "v1.0.0"),
		KindOCI:  charttest.ChartFiles("lb", "1.0.0", "1.0.0"),
		KindURL:  {"ds.yml": "kind: DaemonSet # 1.0.0\n"},
	} {
		fx.files[k] = Files{}
		for p, c := range cf {
			fx.files[k][p] = []byte(c)
		}
	}
	return fx
}

// requests is how many requests the server of kind answered.
func (fx *cacheFixture) requests(kind string) int {
	switch kind {
	case KindHelm:
		return fx.helm.Requests()
	case KindOCI:
		return fx.oci.Requests()
	}
	return fx.assets.Requests()
}

var kinds = []string{KindHelm, KindOCI, KindURL}

// TestChartCacheWarm: the first run downloads each chart once and keeps it;
// a second run, online or --offline, asks no server and reads the same
// files; --offline with an empty cache refuses, naming the cache.
func TestChartCacheWarm(t *testing.T) {
	fx := newCacheFixture(t)
	cache := filepath.Join(t.TempDir(), "cache")
	ctx := context.Background()
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			u := fx.units[kind]
			before := fx.requests(kind)
			got, err := NewFetcher(t.TempDir(), cache, false).Fetch(ctx, u, "1.0.0")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, fx.files[kind]) {
				t.Fatalf("cold Fetch = %v, want %v", fileNames(got), fileNames(fx.files[kind]))
			}
			if fx.requests(kind) == before {
				t.Fatal("the cold run asked no server")
			}
			for _, offline := range []bool{false, true} {
				before := fx.requests(kind)
				got, err := NewFetcher(t.TempDir(), cache, offline).Fetch(ctx, u, "1.0.0")
				if err != nil {
					t.Fatalf("warm Fetch (offline %v): %v", offline, err)
				}
				if !reflect.DeepEqual(got, fx.files[kind]) {
					t.Errorf("warm Fetch (offline %v) = %v, want %v", offline, fileNames(got), fileNames(fx.files[kind]))
				}
				if n := fx.requests(kind) - before; n != 0 {
					t.Errorf("warm Fetch (offline %v) made %d requests, want 0", offline, n)
				}
			}
			// A version the cache lacks, offline: refused, nothing asked.
			before = fx.requests(kind)
			_, err = NewFetcher(t.TempDir(), cache, true).Fetch(ctx, u, "1.1.0")
			if !errors.Is(err, ErrOffline) || errors.Is(err, upstream.ErrCacheDamaged) || !strings.Contains(err.Error(), filepath.Join(cache, "charts")) {
				t.Errorf("offline Fetch of an uncached version: %v; want offline, naming the chart cache", err)
			}
			if fx.requests(kind) != before {
				t.Error("--offline asked a server")
			}
		})
	}
}

// TestChartCacheReleasesOffline: the versions listed online (index.yaml,
// OCI tags) are kept; --offline lists them from the cache, and refuses
// before any listing was kept.
func TestChartCacheReleasesOffline(t *testing.T) {
	fx := newCacheFixture(t)
	cache := filepath.Join(t.TempDir(), "cache")
	ctx := context.Background()
	for _, kind := range []string{KindHelm, KindOCI} {
		u := fx.units[kind]
		if _, err := NewFetcher(t.TempDir(), cache, true).Releases(ctx, u, "1.0.0"); !errors.Is(err, ErrOffline) {
			t.Errorf("%s: offline Releases with no list kept: %v, want offline", kind, err)
		}
		online, err := NewFetcher(t.TempDir(), cache, false).Releases(ctx, u, "1.0.0")
		if err != nil || !reflect.DeepEqual(online, []string{"1.1.0"}) {
			t.Fatalf("%s: Releases = %v, %v; want [1.1.0]", kind, online, err)
		}
		before := fx.requests(kind)
		offline, err := NewFetcher(t.TempDir(), cache, true).Releases(ctx, u, "1.0.0")
		if err != nil || !reflect.DeepEqual(offline, online) || fx.requests(kind) != before {
			t.Errorf("%s: offline Releases = %v, %v (%d requests); want %v from the cache", kind, offline, err, fx.requests(kind)-before, online)
		}
	}
}

// TestChartCacheDamaged: an entry whose blob lost a byte, has one
// flipped, is gone, or whose entry file is garbage is a cache fault
// offline (never a verdict, never the damaged bytes), and online is
// fetched afresh (one download), after which --offline works again.
func TestChartCacheDamaged(t *testing.T) {
	fx := newCacheFixture(t)
	ctx := context.Background()
	damages := map[string]func(t *testing.T, entry, blob string){
		"byte flipped": func(t *testing.T, _, blob string) {
			b, _ := os.ReadFile(blob)
			b[len(b)/2] ^= 0x01
			os.WriteFile(blob, b, 0o644)
		},
		"truncated": func(t *testing.T, _, blob string) {
			b, _ := os.ReadFile(blob)
			os.WriteFile(blob, b[:len(b)/2], 0o644)
		},
		"blob deleted": func(t *testing.T, _, blob string) { os.Remove(blob) },
		"entry garbage": func(t *testing.T, entry, _ string) {
			os.WriteFile(entry, []byte("{\"digest\": \"sha256:"), 0o644)
		},
	}
	for _, kind := range kinds {
		for name, damage := range damages {
			t.Run(kind+"/"+name, func(t *testing.T) {
				u := fx.units[kind]
				cache := filepath.Join(t.TempDir(), "cache")
				if _, err := NewFetcher(t.TempDir(), cache, false).Fetch(ctx, u, "1.0.0"); err != nil {
					t.Fatal(err)
				}
				entry, blob := cachedFiles(t, cache)
				damage(t, entry, blob)

				_, err := NewFetcher(t.TempDir(), cache, true).Fetch(ctx, u, "1.0.0")
				var cf *upstream.CacheFaultError
				if !errors.As(err, &cf) || !cf.Offline || !strings.Contains(err.Error(), "cache damaged: "+filepath.Join(cache, "charts")) {
					t.Fatalf("offline Fetch of a damaged entry: %v; want a cache fault naming the chart cache", err)
				}

				before := fx.requests(kind)
				got, err := NewFetcher(t.TempDir(), cache, false).Fetch(ctx, u, "1.0.0")
				if err != nil || !reflect.DeepEqual(got, fx.files[kind]) {
					t.Fatalf("online Fetch of a damaged entry: %v, %v; want it fetched afresh", err, fileNames(got))
				}
				if fx.requests(kind) == before {
					t.Error("the damaged entry was not fetched again")
				}
				if _, err := NewFetcher(t.TempDir(), cache, true).Fetch(ctx, u, "1.0.0"); err != nil {
					t.Errorf("offline Fetch after the repair: %v", err)
				}
			})
		}
	}
}

// cachedFiles returns the one entry and the one blob of a chart cache.
func cachedFiles(t *testing.T, cache string) (string, string) {
	t.Helper()
	entries, _ := filepath.Glob(filepath.Join(cache, "charts", "entries", "*.json"))
	blobs, _ := filepath.Glob(filepath.Join(cache, "charts", "blobs", "sha256-*"))
	if len(entries) != 1 || len(blobs) != 1 {
		t.Fatalf("chart cache holds entries %v and blobs %v, want one of each", entries, blobs)
	}
	return entries[0], blobs[0]
}

// TestChartCacheLyingServer: an archive whose sha256 is not the one the
// index (Helm) or the manifest (OCI) names is refused, and nothing is
// kept: --offline still finds no entry.
func TestChartCacheLyingServer(t *testing.T) {
	fx := newCacheFixture(t)
	ctx := context.Background()
	cache := filepath.Join(t.TempDir(), "cache")
	// The Helm repository serves other bytes than the index's digest.
	other := charttest.Tgz(t, "pg", charttest.ChartFiles("pg", "1.0.0", "evil"))
	if err := os.WriteFile(filepath.Join(fx.helm.Dir, "charts", "pg-1.0.0.tgz"), other, 0o644); err != nil {
		t.Fatal(err)
	}
	fx.oci.Lie(true)
	for _, kind := range []string{KindHelm, KindOCI} {
		u := fx.units[kind]
		_, err := NewFetcher(t.TempDir(), cache, false).Fetch(ctx, u, "1.0.0")
		if err == nil || !strings.Contains(err.Error(), "sha256") {
			t.Errorf("%s: Fetch from a lying server: %v; want it refused on the digest", kind, err)
		}
		if _, err := NewFetcher(t.TempDir(), cache, true).Fetch(ctx, u, "1.0.0"); !errors.Is(err, ErrOffline) || errors.Is(err, upstream.ErrCacheDamaged) {
			t.Errorf("%s: offline Fetch after the refusal: %v; want no entry kept", kind, err)
		}
	}
	if entries, _ := filepath.Glob(filepath.Join(cache, "charts", "entries", "*")); len(entries) != 0 {
		t.Errorf("refused archives left entries %v", entries)
	}
}

func fileNames(f Files) []string {
	var out []string
	for k := range f {
		out = append(out, k)
	}
	return out
}
