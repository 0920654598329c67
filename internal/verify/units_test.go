package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUnits(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"built", "orphan"} {
		os.MkdirAll(filepath.Join(root, "images", name), 0o755)
		os.WriteFile(filepath.Join(root, "images", name, "patchkit.yaml"), []byte("upstream: {url: x, ref: v1}\npatches: p\n"), 0o644)
	}
	os.WriteFile(filepath.Join(root, "Makefile"), []byte("build:\n\t$(MAKE) image IMAGE=built\n\t$(MAKE) image IMAGE=ghost\n"), 0o644)

	checks, orphans, err := Units(root, []string{"built", "orphan"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if c := checks["built"]; c.Status != StatusPass || !strings.Contains(c.Message, "Makefile:2") {
		t.Errorf("built: %+v, want pass naming Makefile:2", c)
	}
	if c := checks["orphan"]; c.Status != StatusFail || !strings.Contains(c.Message, "IMAGE=orphan") || c.Patch != "images/orphan/patchkit.yaml" {
		t.Errorf("orphan: %+v, want a fail telling how to add it", c)
	}
	if len(orphans) != 1 || orphans[0].Image != "ghost" || orphans[0].OK || orphans[0].Checks[0].Line != 3 {
		t.Errorf("units without a spec = %+v, want ghost at Makefile:3", orphans)
	}
	// Named images only: a unit without a spec is not reported.
	if _, orphans, _ := Units(root, []string{"built"}, false); len(orphans) != 0 {
		t.Errorf("Units(named) reported %+v", orphans)
	}
	// No Makefile: a warning, not a failure.
	os.Remove(filepath.Join(root, "Makefile"))
	checks, _, err = Units(root, []string{"built"}, true)
	if err != nil || checks["built"].Status != StatusWarn {
		t.Errorf("no Makefile: %+v, %v; want a warning", checks["built"], err)
	}
}
