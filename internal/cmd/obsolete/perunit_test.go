package obsolete_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneBadUnitFailsAlone: with no IMAGE, a unit whose upstream cannot be
// fetched is reported on its own (an error field in JSON, a "not checked"
// line in text) while the others are checked, and the run exits with the
// worst status (2 here, over the other unit's findings).
func TestOneBadUnitFailsAlone(t *testing.T) {
	f := newFixture(t)
	f.addImage(t, "gone", "v1.0.0", map[string]string{"0001-greet.diff": patchGreet})
	spec := filepath.Join(f.root, "images", "gone", "patchkit.yaml")
	data, err := os.ReadFile(spec)
	must(t, err)
	must(t, os.WriteFile(spec, []byte(strings.Replace(string(data), f.up.URL(), "file://"+filepath.Join(t.TempDir(), "no-such-upstream"), 1)), 0o644))

	code, out, errOut := f.run(t, "-o", "json", "obsolete-check")
	if code != 2 {
		t.Fatalf("exit = %d, want 2 (the worst status)\n%s%s", code, out, errOut)
	}
	var items []map[string]any
	if err := json.Unmarshal([]byte(out), &items); err != nil {
		t.Fatalf("stdout is no JSON array: %v\n%s", err, out)
	}
	if len(items) != 2 {
		t.Fatalf("got %d results, want 2: %s", len(items), out)
	}
	gone, img := items[0], items[1]
	if gone["image"] != "gone" || gone["ok"] != false || gone["exitCode"] != float64(2) || !strings.Contains(gone["error"].(string), "no-such-upstream") {
		t.Errorf("gone = %v, want an error naming its upstream, exitCode 2", gone)
	}
	if img["image"] != "img" || img["patches"] == nil || img["error"] != nil {
		t.Errorf("img = %v, want its verdicts", img)
	}
	if !strings.Contains(errOut, "patchkit: gone: ") {
		t.Errorf("stderr = %q, want the unit's error", errOut)
	}

	code, out, _ = f.run(t, "obsolete-check")
	if code != 2 || !strings.Contains(out, "gone: not checked: ") || !strings.Contains(out, "img: 2 patches against") {
		t.Errorf("text: exit %d\n%s", code, out)
	}
	// Named alone, the bad unit is the run's error, as before.
	if code, out, _ := f.run(t, "-o", "json", "obsolete-check", "gone"); code != 2 || strings.Contains(out, `"image"`) {
		t.Errorf("obsolete-check gone: exit %d\n%s", code, out)
	}
}
