package upstream

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/protocol/packp"

	"github.com/patchkit/patchkit/internal/gittest"
)

// TestHTTPSListingTrustsWhatGitTrusts: an https upstream whose certificate
// no system authority signed (a company's mirror) is listed when git's
// fetch would reach it, and refused when it would not: for each of git's
// TLS variables, patchkit's listing and `git ls-remote` in the same
// environment succeed or fail together, and list the same refs. The
// listing used to refuse every such upstream, whatever git was told.
func TestHTTPSListingTrustsWhatGitTrusts(t *testing.T) {
	r := manyRefs(t, 20)
	srv := httptest.NewTLSServer(gittest.HTTPBackend(t, filepath.Dir(r.Dir), ""))
	t.Cleanup(srv.Close)
	url := srv.URL + "/" + filepath.Base(r.Dir)
	dir := t.TempDir()
	writePEM := func(name string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	caFile := writePEM("ca.pem", srv.Certificate().Raw)
	caDir := filepath.Join(dir, "certs")
	os.Mkdir(caDir, 0o755)
	os.WriteFile(filepath.Join(caDir, "mirror.pem"), []byte(mustRead(t, caFile)), 0o644)
	wrong := writePEM("other.pem", selfSigned(t))
	for _, tc := range []struct {
		name string
		env  map[string]string
		ok   bool
	}{
		{"nothing set", nil, false},
		{"GIT_SSL_CAINFO", map[string]string{"GIT_SSL_CAINFO": caFile}, true},
		{"GIT_SSL_CAPATH", map[string]string{"GIT_SSL_CAPATH": caDir}, true},
		{"GIT_SSL_NO_VERIFY", map[string]string{"GIT_SSL_NO_VERIFY": "1"}, true},
		{"another authority", map[string]string{"GIT_SSL_CAINFO": wrong}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var extra []string
			for _, k := range []string{"GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "GIT_SSL_NO_VERIFY"} {
				if v, ok := tc.env[k]; ok {
					t.Setenv(k, v)
					extra = append(extra, k+"="+v)
				} else {
					t.Setenv(k, "")
					os.Unsetenv(k)
				}
			}
			want, _, gitErr := gitLsRemote(url, extra...)
			if gitOK := gitErr == nil; gitOK != tc.ok {
				t.Fatalf("git ls-remote: %v; the test expects it to succeed: %v", gitErr, tc.ok)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			ar, err := (&Cache{}).listRefs(ctx, url, 5*time.Second)
			if (err == nil) != tc.ok {
				t.Fatalf("listRefs = %v; git ls-remote succeeded: %v", err, tc.ok)
			}
			if tc.ok {
				sameListing(t, url, ar, want)
			}
		})
	}
	t.Run("fetch", func(t *testing.T) {
		t.Setenv("GIT_SSL_CAINFO", caFile)
		c := open(t, t.TempDir(), url)
		if err := c.Fetch(context.Background()); err != nil {
			t.Fatalf("Fetch over https with GIT_SSL_CAINFO: %v", err)
		}
		if got, want := resolveOK(t, c, "v1.0.0"), strings.TrimSpace(r.Git("rev-parse", "v1.0.0^{commit}")); got != want {
			t.Errorf("v1.0.0 resolved to %s, want %s", got, want)
		}
	})
}

// selfSigned is a new certificate authority's certificate, DER-encoded: one
// that signed nothing the test server shows.
func selfSigned(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "another authority"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHTTPSListingsShareAConnection: the listings of several caches on one
// https host (a monorepo's units on github.com) reuse one connection, where
// each paid a TCP and a TLS handshake of its own: five listings, one after
// the other, open one connection (HTTP/2, as GitHub serves it), and list
// what git ls-remote lists.
func TestHTTPSListingsShareAConnection(t *testing.T) {
	base := t.TempDir()
	var urls []string
	srv := httptest.NewUnstartedServer(gittest.HTTPBackend(t, base, ""))
	var mu sync.Mutex
	opened := 0
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			opened++
			mu.Unlock()
		}
	}
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	for i := range 5 {
		r := manyRefs(t, 10+i)
		dir := filepath.Join(base, fmt.Sprintf("unit-%d", i))
		if _, e, err := gittest.Run(base, nil, "clone", "-q", "--bare", r.Dir, dir); err != nil {
			t.Fatalf("git clone: %v: %s", err, e)
		}
		urls = append(urls, srv.URL+"/"+filepath.Base(dir))
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_SSL_CAINFO", ca)
	var listed []*packp.AdvRefs
	for _, url := range urls {
		ar, err := listing(t, url, 20*time.Second)
		if err != nil {
			t.Fatalf("listRefs(%s) = %v", url, err)
		}
		listed = append(listed, ar)
	}
	mu.Lock()
	if opened != 1 {
		t.Errorf("%d listings on one host opened %d connections; want them to share one", len(urls), opened)
	}
	mu.Unlock()
	for i, url := range urls {
		want, e, err := gitLsRemote(url, "GIT_SSL_CAINFO="+ca)
		if err != nil {
			t.Fatalf("git ls-remote %s: %v: %s", url, err, e)
		}
		sameListing(t, url, listed[i], want)
	}
}
