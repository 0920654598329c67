package image

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/patchkit/patchkit/internal/httpguard/guardtest"
)

// A registry that wants basic credentials and answers a manifest request
// with 302 to another origin (as registries send blobs to a CDN; on the
// same host name, on another port: go-containerregistry refuses redirects
// to another private host): the credentials reach the registry, and not
// the other origin. go-containerregistry's own auth transport adds them
// only for the registry's host and port; this holds it to that.
func TestRegistryCredentialsStayWithTheRegistry(t *testing.T) {
	other := guardtest.NewRecorderAt(t, "127.0.0.1:0")
	var sawAuth bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "pusher" || p != "s3cret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		sawAuth = true
		if r.URL.Path == "/v2/" {
			return
		}
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	r, err := NewRegistry(host+"/greeter", WithRetry(1, 0), WithAuth(&authn.Basic{Username: "pusher", Password: "s3cret"}))
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := name.NewTag(host + "/greeter:v1")
	digest := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("ab", 32)}
	r.readBack(context.Background(), ref, digest) // the other origin's "ok" is no manifest: any outcome
	if !sawAuth {
		t.Fatal("the registry never got the credentials")
	}
	got := other.Headers()
	if len(got) == 0 {
		t.Fatal("the other origin got no request (the redirect was not followed)")
	}
	for i, h := range got {
		if a := h.Get("Authorization"); a != "" {
			t.Errorf("request %d to the other origin had Authorization %q, want none", i, a)
		}
	}
}
