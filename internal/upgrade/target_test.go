package upgrade

import (
	"context"
	"errors"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/upstream"
)

// TestTargetReleaseSuffix: a project that only publishes X.Y.Z-edge tags.
// The suffix the releases glob names, or the pin carries, is the release
// line: the newest such tag is the target, and its prereleases are not.
func TestTargetReleaseSuffix(t *testing.T) {
	r := gittest.New(t)
	r.Write("a.txt", "a\n")
	r.Release("initial", "26.3.6-edge")
	for _, tag := range []string{"26.3.7-edge", "26.3.8-edge", "26.3.9-rc.1-edge", "27.0.0-rc.1"} {
		r.Write("a.txt", tag+"\n")
		r.Release(tag, tag)
	}
	c, err := upstream.Open(context.Background(), t.TempDir(), r.URL())
	if err != nil {
		t.Fatalf("upstream.Open() = %v", err)
	}
	defer c.Close()
	for _, tt := range []struct {
		releases, pin, want string
	}{
		{"*-edge", "26.3.6-edge", "26.3.8-edge"},
		{"2*", "26.3.6-edge", "26.3.8-edge"},
		{"2*-edge", "26.3.6-edge", "26.3.8-edge"},
	} {
		s := &spec.Spec{File: "images/x/patchkit.yaml", Upstream: spec.Upstream{Ref: tt.pin, Releases: tt.releases}}
		got, err := Target(c, s, "")
		if err != nil || got != tt.want {
			t.Errorf("Target(releases %q, pin %q) = %q, %v; want %q", tt.releases, tt.pin, got, err, tt.want)
		}
	}
	s := &spec.Spec{File: "images/x/patchkit.yaml", Upstream: spec.Upstream{Ref: "26.3.8-edge", Releases: "*-edge"}}
	if got, err := Target(c, s, ""); !errors.Is(err, ErrUpToDate) {
		t.Errorf("Target(pin 26.3.8-edge) = %q, %v; want ErrUpToDate", got, err)
	}
}
