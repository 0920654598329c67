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
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/chart/charttest"
	"github.com/patchkit/patchkit/internal/httpguard"
	"github.com/patchkit/patchkit/internal/httpguard/guardtest"
)

// A Helm repository or a release asset whose URL carries user:password
// and whose server answers 302 to another host: the credentials must not
// arrive there.
func TestChartCredentialsStayWithTheirHost(t *testing.T) {
	other := guardtest.NewRecorder(t)
	first := httptest.NewServer(guardtest.RedirectTo(other.URL))
	defer first.Close()
	withUser := strings.Replace(first.URL, "http://", "http://chartuser:s3cret@", 1)
	tests := []struct {
		name string
		call func(*Fetcher) error
	}{
		{"helm index", func(f *Fetcher) error {
			_, err := f.Releases(context.Background(), &Unit{Upstream: Upstream{Helm: withUser + "/charts", Chart: "pg"}}, "0.1.0")
			return err
		}},
		{"release asset", func(f *Fetcher) error {
			_, err := f.Fetch(context.Background(), &Unit{Upstream: Upstream{URL: withUser + "/releases/v{version}/ds.yaml"}}, "1.0.0")
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.call(&Fetcher{}) // the other host's "ok" is no index: any outcome
		})
	}
	got := other.Headers()
	if len(got) != len(tests) {
		t.Fatalf("the other host got %d requests, want %d (the redirects were not followed)", len(got), len(tests))
	}
	for i, h := range got {
		if a := h.Get("Authorization"); a != "" {
			t.Errorf("request %d to the other host had Authorization %q, want none", i, a)
		}
	}
}

// An index.yaml that never ends is refused at MaxIndex, under a memory
// limit that reading it whole exceeds.
func TestEndlessHelmIndexIsRefused(t *testing.T) {
	if guardtest.RunLimited(t, guardtest.Headroom) {
		return
	}
	srv := httptest.NewServer(guardtest.Endless("application/yaml", "apiVersion: v1\nentries:\n  pg:\n  - version: 1.0.0\n    description: \"", "x"))
	defer srv.Close()
	_, err := (&Fetcher{}).Releases(context.Background(), &Unit{Upstream: Upstream{Helm: srv.URL + "/charts", Chart: "pg"}}, "0.1.0")
	var tl *httpguard.TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("Releases() on an endless index = %v, want a TooLargeError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, srv.URL+"/charts/index.yaml") || !strings.Contains(msg, "64 MiB") {
		t.Errorf("Releases() error = %q, want the URL and the limit", msg)
	}
}

// An index that trickles a byte at a time is given up at Fetcher.Timeout
// (--fetch-timeout), not the 2-minute default.
func TestTricklingHelmIndexIsGivenUp(t *testing.T) {
	srv := httptest.NewServer(guardtest.Trickle("application/yaml", "apiVersion: v1\nentries:\n", ' ', 20*time.Millisecond))
	defer srv.Close()
	f := &Fetcher{Timeout: 300 * time.Millisecond}
	_, err := f.Releases(context.Background(), &Unit{Upstream: Upstream{Helm: srv.URL + "/charts", Chart: "pg"}}, "0.1.0")
	var te *httpguard.TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("Releases() on a trickle = %v, want a TimeoutError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, srv.URL+"/charts/index.yaml") || !strings.Contains(msg, "300ms") {
		t.Errorf("Releases() error = %q, want the URL and the timeout", msg)
	}
}

// entry is one entry of a test archive; r, when set, is a file's content
// (size bytes of it).
type entry struct {
	hdr  tar.Header
	fill byte
}

func file(name string, size int64) entry {
	return entry{hdr: tar.Header{Name: name, Size: size, Mode: 0o644, Typeflag: tar.TypeReg}}
}

// archive writes entries as a .tgz, file contents streamed: a bomb of
// hundreds of MiB is a few hundred KiB.
func archive(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := e.hdr
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := io.CopyN(tw, repeat(e.fill), h.Size); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return b.Bytes()
}

type repeat byte

func (r repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

func TestUntarChartBounds(t *testing.T) {
	many := []entry{file("pg/Chart.yaml", 10)}
	for i := 0; i < MaxEntries; i++ {
		many = append(many, file(fmt.Sprintf("pg/templates/f%d.yaml", i), 0))
	}
	var spread []entry
	for i := 0; i < 5; i++ { // 5 × 60 MiB: each file under MaxFile, the total over MaxUnpacked
		spread = append(spread, file(fmt.Sprintf("pg/crds/c%d.yaml", i), 60*httpguard.MiB))
	}
	tests := []struct {
		name    string
		entries []entry
		want    string // in the error; "" for none
	}{
		{"a chart", []entry{{hdr: tar.Header{Name: "pg/", Typeflag: tar.TypeDir, Mode: 0o755}}, file("pg/Chart.yaml", 10), file("pg/templates/a.yaml", 100)}, ""},
		{"a file over MaxFile", []entry{file("pg/Chart.yaml", 10), file("pg/big.yaml", MaxFile+1)}, "more than 64 MiB, the limit for a file"},
		{"files over MaxUnpacked together", spread, "unpacks to more than 256 MiB"},
		{"more than MaxEntries entries", many, "more than 20000 entries"},
		{"a symbolic link", []entry{file("pg/Chart.yaml", 10), {hdr: tar.Header{Name: "pg/values.yaml", Typeflag: tar.TypeSymlink, Linkname: "../../etc/passwd"}}}, "is a symbolic link"},
		{"a hard link", []entry{file("pg/Chart.yaml", 10), {hdr: tar.Header{Name: "pg/values.yaml", Typeflag: tar.TypeLink, Linkname: "pg/Chart.yaml"}}}, "is a hard link"},
		{"a CR in a name", []entry{file("pg/Chart.yaml", 10), file("pg/templates/a.yaml\rpg/templates/b.yaml", 10)}, `"pg/templates/a.yaml\rpg/templates/b.yaml": a control character`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := untarChart(archive(t, tt.entries...), "chart pg 1.0.0 of https://charts.example")
			if tt.want == "" {
				if err != nil || len(files) != 2 {
					t.Fatalf("untarChart() = %d files, %v; want 2 files", len(files), err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "chart pg 1.0.0 of https://charts.example") {
				t.Fatalf("untarChart() = %d files, %v; want an error naming the archive and %q", len(files), err, tt.want)
			}
			if strings.ContainsRune(err.Error(), '\r') {
				t.Errorf("untarChart() error %q carries a raw CR", err)
			}
		})
	}
}

// A chart archive of a few hundred KiB that inflates past MaxUnpacked,
// served by a Helm repository, is refused with exit 2's error before it is
// held in memory.
func TestHelmChartBombIsRefused(t *testing.T) {
	if guardtest.RunLimited(t, guardtest.Headroom) {
		return
	}
	repo := charttest.NewHelmRepo(t)
	var bomb []entry
	bomb = append(bomb, file("pg/Chart.yaml", 10))
	for i := 0; i < 9; i++ {
		bomb = append(bomb, file(fmt.Sprintf("pg/crds/c%d.yaml", i), 60*httpguard.MiB))
	}
	tgz := archive(t, bomb...)
	repo.Add(t, "pg", "1.0.0", tgz)
	_, err := (&Fetcher{}).Fetch(context.Background(), &Unit{Upstream: Upstream{Helm: repo.URL, Chart: "pg"}}, "1.0.0")
	if err == nil || !strings.Contains(err.Error(), "unpacks to more than 256 MiB") || !strings.Contains(err.Error(), repo.URL) {
		t.Fatalf("Fetch() of a %d KiB archive of 540 MiB = %v, want refused, naming the repository and the limit", len(tgz)>>10, err)
	}
}

// An OCI registry whose tag list always names a next page is refused after
// MaxTagPages (the server fails the requests past 1100, so that an endless
// listing ends too).
func TestEndlessTagPagingIsBounded(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/" {
			return
		}
		k := n.Add(1)
		if k > 1100 {
			http.Error(w, "too many requests for this test", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Link", fmt.Sprintf(`</v2/charts/lb/tags/list?n=1&last=t%d>; rel="next"`, k))
		fmt.Fprintf(w, `{"name":"charts/lb","tags":["1.0.%d"]}`, k)
	}))
	defer srv.Close()
	u := &Unit{Upstream: Upstream{OCI: "oci://" + strings.TrimPrefix(srv.URL, "http://") + "/charts/lb"}}
	_, err := (&Fetcher{}).Releases(context.Background(), u, "0.1.0")
	if err == nil || !strings.Contains(err.Error(), "after 1000 pages") || !strings.Contains(err.Error(), "charts/lb") {
		t.Fatalf("Releases() on endless tag paging = %v, want the page limit and the repository", err)
	}
	if got := n.Load(); got != MaxTagPages {
		t.Errorf("Releases() made %d tag requests, want %d", got, MaxTagPages)
	}
}
