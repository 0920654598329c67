package upstream

import (
	"context"
	"os"
	"testing"
)

// TestComplete: Complete says, without opening the cache, what Open and
// Partial would: no cache, a partial one (and one with the marker an
// interrupted fetch leaves) are not complete; a cache deepened to the
// whole history is.
func TestComplete(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	url := f.repo.URL()
	if Complete(dir, url) {
		t.Fatal("Complete() = true with no cache")
	}
	s := open(t, dir, url, WithShallow(true))
	if !s.Partial() || Complete(dir, url) {
		t.Fatalf("a shallow cache: Partial() = %v, Complete() = %v; want true, false", s.Partial(), Complete(dir, url))
	}
	if err := s.Deepen(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.Partial() || !Complete(dir, url) {
		t.Fatalf("a deepened cache: Partial() = %v, Complete() = %v; want false, true", s.Partial(), Complete(dir, url))
	}
	if Complete(t.TempDir(), url) || Complete(dir, url+"-other") {
		t.Error("Complete() = true for another cache directory or URL")
	}
	if err := os.WriteFile(s.markerPath(), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if Complete(dir, url) {
		t.Error("Complete() = true with an interrupted fetch's marker")
	}
}
