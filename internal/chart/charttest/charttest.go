// Package charttest builds the real parts chart tests use: chart archives,
// a Helm repository served over HTTP on loopback, an OCI chart pushed into
// a registry, a tagged git upstream, and a cozystack-shaped monorepo with
// one package per form of vendoring, its charts vendored by the real GNU
// patch.
package charttest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/patchkit/patchkit/internal/gittest"
)

// Tgz is a chart archive as `helm package` writes it: every file under
// one top directory named after the chart.
func Tgz(tb testing.TB, chart string, files map[string]string) []byte {
	tb.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: chart + "/" + n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			tb.Fatal(err)
		}
		tw.Write([]byte(files[n]))
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	zw.Close()
	return b.Bytes()
}

// ChartFiles is a small chart of name at version with one deployment.
func ChartFiles(name, version, appVersion string) map[string]string {
	return map[string]string{
		"Chart.yaml":  fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\nappVersion: %q\n", name, version, appVersion),
		".helmignore": "*.orig\n.git/\n",
		"values.yaml": "replicas: 1\nimage:\n  repository: example/" + name + "\n  tag: " + appVersion + "\n",
		"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: {{ .Values.replicas }}
  template:
    spec:
      containers:
        - name: ` + name + `
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
          ports:
            - containerPort: 8080
          livenessProbe:
            httpGet:
              path: /healthz
              port: 8080
`,
	}
}

// HelmRepo is a Helm repository: a directory of chart archives and
// index.yaml, served by a real HTTP server on loopback.
type HelmRepo struct {
	URL      string
	Dir      string
	charts   map[string][]helmEntry
	srv      *httptest.Server
	requests atomic.Int64 // every request served
	archives atomic.Int64 // requests for a .tgz or an asset (anything but index.yaml)
}

// Requests is how many requests the server has answered.
func (r *HelmRepo) Requests() int { return int(r.requests.Load()) }

// Downloads is how many of them asked for an archive or an asset (not index.yaml).
func (r *HelmRepo) Downloads() int { return int(r.archives.Load()) }

type helmEntry struct{ version, file, digest string }

// NewHelmRepo starts an empty repository; it stops when the test ends.
func NewHelmRepo(tb testing.TB) *HelmRepo {
	tb.Helper()
	r := &HelmRepo{Dir: tb.TempDir(), charts: map[string][]helmEntry{}}
	files := http.FileServer(http.Dir(r.Dir))
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		if !strings.HasSuffix(req.URL.Path, "/index.yaml") {
			r.archives.Add(1)
		}
		files.ServeHTTP(w, req)
	}))
	tb.Cleanup(r.srv.Close)
	r.URL = r.srv.URL + "/charts"
	os.MkdirAll(filepath.Join(r.Dir, "charts"), 0o755)
	return r
}

// Add adds the chart archive tgz as name-version.tgz and rewrites index.yaml.
func (r *HelmRepo) Add(tb testing.TB, name, version string, tgz []byte) {
	tb.Helper()
	file := fmt.Sprintf("%s-%s.tgz", name, version)
	if err := os.WriteFile(filepath.Join(r.Dir, "charts", file), tgz, 0o644); err != nil {
		tb.Fatal(err)
	}
	sum := sha256.Sum256(tgz)
	r.charts[name] = append(r.charts[name], helmEntry{version, file, hex.EncodeToString(sum[:])})
	var b strings.Builder
	b.WriteString("apiVersion: v1\nentries:\n")
	var names []string
	for n := range r.charts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %s:\n", n)
		for _, e := range r.charts[n] {
			fmt.Fprintf(&b, "  - name: %s\n    version: %s\n    digest: %s\n    urls:\n    - %s\n", n, e.version, e.digest, e.file)
		}
	}
	if err := os.WriteFile(filepath.Join(r.Dir, "charts", "index.yaml"), []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// PushOCI pushes tgz as a Helm chart (config and content media types) to
// addr/repo:version with go-containerregistry.
func PushOCI(tb testing.TB, addr, repo, version string, tgz []byte) {
	tb.Helper()
	layer := static.NewLayer(tgz, types.MediaType("application/vnd.cncf.helm.chart.content.v1.tar+gzip"))
	img, err := mutate.Append(empty.Image, mutate.Addendum{Layer: layer, MediaType: types.MediaType("application/vnd.cncf.helm.chart.content.v1.tar+gzip")})
	if err != nil {
		tb.Fatal(err)
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.MediaType("application/vnd.cncf.helm.config.v1+json"))
	ref, err := name.ParseReference(fmt.Sprintf("%s/%s:%s", addr, repo, version))
	if err != nil {
		tb.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		tb.Fatalf("pushing %s: %v", ref, err)
	}
}

// WriteFiles writes files under dir.
func WriteFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// Diff is `diff -ruN` of two directories with the labels a/<prefix> and
// b/<prefix>, as a patch a user writes against a vendored chart.
func Diff(tb testing.TB, oldDir, newDir, prefix string) string {
	tb.Helper()
	var out strings.Builder
	var walk func(rel string)
	seen := map[string]bool{}
	var names []string
	for _, d := range []string{oldDir, newDir} {
		filepath.Walk(d, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				rel, _ := filepath.Rel(d, p)
				if !seen[rel] {
					seen[rel] = true
					names = append(names, rel)
				}
			}
			return nil
		})
	}
	sort.Strings(names)
	walk = func(rel string) {
		a, b := filepath.Join(oldDir, rel), filepath.Join(newDir, rel)
		la, lb := "a/"+prefix+"/"+filepath.ToSlash(rel), "b/"+prefix+"/"+filepath.ToSlash(rel)
		if _, err := os.Stat(a); err != nil {
			a, la = "/dev/null", "/dev/null"
		}
		if _, err := os.Stat(b); err != nil {
			b, lb = "/dev/null", "/dev/null"
		}
		cmd := exec.Command("diff", "-u", "--label", la, "--label", lb, a, b)
		o, _ := cmd.Output()
		if len(o) > 0 {
			fmt.Fprintf(&out, "diff --git %s %s\n", "a/"+prefix+"/"+filepath.ToSlash(rel), "b/"+prefix+"/"+filepath.ToSlash(rel))
			out.Write(o)
		}
	}
	for _, n := range names {
		walk(n)
	}
	return out.String()
}

// GNUPatch runs the real GNU patch in dir, as a Makefile line
// `patch ARGS < file` does, and fails the test when it fails.
func GNUPatch(tb testing.TB, dir, file string, args ...string) {
	tb.Helper()
	in, err := os.Open(filepath.Join(dir, file))
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	cmd := exec.Command("patch", args...)
	cmd.Dir, cmd.Stdin = dir, in
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("patch %v < %s in %s: %v\n%s", args, file, dir, err, out)
	}
}

// GitUpstream is a tagged git upstream holding a chart in a subdirectory.
func GitUpstream(tb testing.TB, sub string, versions map[string]map[string]string, order []string) *gittest.Repo {
	tb.Helper()
	r := gittest.New(tb)
	r.Write("README.md", "upstream\n")
	for _, tag := range order {
		for p, c := range versions[tag] {
			r.Write(sub+"/"+p, c)
		}
		r.Commit("release " + tag)
		r.Tag(tag)
	}
	return r
}
