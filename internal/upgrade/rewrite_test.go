package upgrade

import (
	"errors"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
)

func TestRefreshSelected(t *testing.T) {
	s := &spec.Spec{Name: "img"}
	patches := []*series.Patch{
		{Name: "0001-a.patch", Path: "patches/img/0001-a.patch"},
		{Name: "0002-b.patch", Path: "patches/img/0002-b.patch"},
	}
	all, err := selected(s, patches, nil)
	if err != nil || len(all) != 2 {
		t.Errorf("selected(none) = %v, %v; want every patch", all, err)
	}
	some, err := selected(s, patches, []string{"0002-b.patch", "./patches/img/0002-b.patch"})
	if err != nil || len(some) != 1 || !some["patches/img/0002-b.patch"] {
		t.Errorf("selected(0002 by name and path) = %v, %v; want 0002 alone", some, err)
	}
	var ue *diag.UsageError
	if _, err := selected(s, patches, []string{"0003-c.patch"}); !errors.As(err, &ue) {
		t.Errorf("selected(a name not in the series) = %v, want a usage error", err)
	}
}
