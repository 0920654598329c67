package apply_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestApplyEveryUnit: apply with no IMAGE runs every unit, and a unit whose
// upstream cannot be fetched is reported on its own (an error field) while
// the others are applied; the run exits with the worst status.
func TestApplyEveryUnit(t *testing.T) {
	f := newFixture(t)
	code, out, errOut := f.run(t, "apply", "--check")
	if code != 0 || !strings.Contains(out, "img: ") || !strings.Contains(out, ": ok") {
		t.Fatalf("apply --check (every unit): exit %d\n%s%s", code, out, errOut)
	}
	writeSpec(t, f.root, "gone", "file://"+filepath.Join(t.TempDir(), "no-such-upstream"))
	os.MkdirAll(filepath.Join(f.root, "patches", "gone"), 0o755)
	os.WriteFile(filepath.Join(f.root, "patches", "gone", "0001-greet.diff"), []byte(fixPatch1), 0o644)
	code, out, errOut = f.run(t, "-o", "json", "apply", "--check")
	if code != 2 {
		t.Fatalf("exit = %d, want 2\n%s%s", code, out, errOut)
	}
	var got []struct {
		Image    string `json:"image"`
		OK       bool   `json:"ok"`
		Error    string `json:"error"`
		ExitCode int    `json:"exitCode"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got) != 2 || got[0].Image != "gone" || got[0].ExitCode != 2 || !strings.Contains(got[0].Error, "no-such-upstream") ||
		got[1].Image != "img" || !got[1].OK || got[1].Error != "" {
		t.Errorf("apply (every unit) = %+v", got)
	}
	// Without --check each tree goes to its default directory.
	os.RemoveAll(filepath.Join(f.root, "images", "gone"))
	if code, out, errOut := f.run(t, "apply"); code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(f.root, "_output", "img", "src", "tool.sh")); err != nil {
		t.Errorf("apply (every unit) wrote no tree: %v", err)
	}
}
