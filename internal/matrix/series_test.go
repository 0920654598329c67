package matrix

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/spec"
)

// TestInputsSeriesFile: a quilt series file outside the patch directory
// and the unit (apply.order: series) is an input of the unit.
func TestInputsSeriesFile(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "images/x/patches"), 0o755)
	os.MkdirAll(filepath.Join(root, "meta"), 0o755)
	os.WriteFile(filepath.Join(root, "meta/order"), []byte("a.patch\n"), 0o644)
	u := spec.Unit{Name: "x", Dir: "images/x"}
	doc := "upstream: {url: file:///x, ref: v1}\npatches: ./patches\napply:\n  order: series\n  series: meta/order\n"
	s, err := spec.LoadUnitReader(strings.NewReader(doc), root, u)
	if err != nil {
		t.Fatal(err)
	}
	if in := inputsOf(root, s, Unit{Unit: u}); !slices.Contains(in, "meta/order") {
		t.Errorf("inputsOf() = %q, want the series file meta/order", in)
	}
}
