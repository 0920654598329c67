package forward

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/gittest"
)

func TestFindPatch(t *testing.T) {
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{
		"images/img/patchkit.yaml":   "upstream:\n  url: https://example.invalid/up.git\n  ref: v1\npatches: patches/img\n",
		"patches/img/0001-fix.patch": "Subject: fix\n",
	})
	for _, arg := range []string{"patches/img/0001-fix.patch", "./patches/img//0001-fix.patch", filepath.Join(root, "patches/img/0001-fix.patch")} {
		s, rel, err := FindPatch(root, arg)
		if err != nil || s.Dir != "images/img" || rel != "patches/img/0001-fix.patch" {
			t.Errorf("FindPatch(%q) = %v, %q, %v; want images/img's patches/img/0001-fix.patch", arg, s, rel, err)
		}
	}
	var ue *diag.UsageError
	if _, _, err := FindPatch(root, filepath.Join(filepath.Dir(root), "elsewhere.patch")); !errors.As(err, &ue) {
		t.Errorf("a patch outside the repository: %v, want a usage error", err)
	}
	for _, arg := range []string{"patches/img/0002-missing.patch", "patches/other/0001-fix.patch"} {
		if _, _, err := FindPatch(root, arg); !diag.IsInput(err) {
			t.Errorf("FindPatch(%q) = %v, want bad input", arg, err)
		}
	}
}
