package image_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/patchkit/patchkit/internal/image"
	"github.com/patchkit/patchkit/internal/image/imagetest"
)

// TestRegistryFaults pushes through a loopback proxy in front of the real
// docker-registry that injects one fault each, and checks the outcome in
// the registry itself: what survives is stored and tagged, what cannot
// fails the push, and a lie is caught by the readback.
func TestRegistryFaults(t *testing.T) {
	tests := []struct {
		name   string
		fault  imagetest.Fault
		stored bool
		errHas string
		errIs  error
	}{
		{"relay", imagetest.Relay, true, "", nil},
		{"503 twice to every request", imagetest.Unavailable, true, "", nil},
		{"reset connections", imagetest.Reset, true, "", nil},
		{"never answers", imagetest.Hang, false, "within the push timeout (5s)", nil},
		{"201 to a manifest it drops", imagetest.LieManifest, false, "MANIFEST_UNKNOWN", image.ErrReadBack},
	}
	reg := imagetest.StartRegistry(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proxy := imagetest.StartProxy(t, reg.Addr, tt.fault)
			img, err := random.Image(4096, 3)
			if err != nil {
				t.Fatal(err)
			}
			d, _ := img.Digest()
			repo := "fault/" + strings.ReplaceAll(tt.name, " ", "-")
			// The push timeout is a hang guard where the push should
			// succeed, and what ends the push where it cannot.
			push := time.Minute
			if tt.fault == imagetest.Hang {
				push = 5 * time.Second
			}
			r, err := image.NewRegistry(proxy.Addr+"/"+repo, image.WithAuth(authn.Anonymous),
				image.WithRetry(4, 10*time.Millisecond), image.WithTimeouts(2*time.Second, push))
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Publish(context.Background(), &image.Result{Image: img, Digest: d, Builder: "native"}, "v1")
			requests, injected := proxy.Counts()
			t.Logf("%s: %d requests, %d faults injected, error %v", tt.name, requests, injected, err)
			if tt.fault != imagetest.Relay && injected == 0 {
				t.Errorf("the proxy injected no fault")
			}
			if tt.stored != (err == nil) {
				t.Fatalf("Publish() error = %v, want success %v", err, tt.stored)
			}
			if err != nil && (!strings.Contains(err.Error(), tt.errHas) || tt.errIs != nil && !errors.Is(err, tt.errIs)) {
				t.Errorf("Publish() error = %v, want it to say %q (is %v)", err, tt.errHas, tt.errIs)
			}
			got, ferr := image.Fetch(context.Background(), reg.Addr+"/"+repo+":v1")
			if tt.stored && (ferr != nil || got != d) {
				t.Errorf("the registry holds %s:v1 = %s, %v; want %s", repo, got, ferr, d)
			}
			if !tt.stored && ferr == nil {
				t.Errorf("the registry holds %s:v1 = %s after a failed push", repo, got)
			}
		})
	}
}
