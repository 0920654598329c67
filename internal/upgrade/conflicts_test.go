package upgrade

import (
	"encoding/json"
	"testing"

	"github.com/patchkit/patchkit/internal/apply"
)

// TestConflictsJSON: a failed hunk is apply's record; upgrade's JSON keeps
// its documented spelling: "found" for apply's "actual", and none of apply's
// kind, file and nearLine. A merge region has "expected" and "found" even
// when they are empty (null), as before the one model.
func TestConflictsJSON(t *testing.T) {
	p := apply.Problem{Kind: apply.KindConflict, File: "patches/a/0001.diff", Line: 7, Path: "f.go",
		Message: "hunk #1 does not apply", Hunk: "@@ -1,3 +1,3 @@", Expected: []string{"a"}, Actual: []string{"b"}, NearLine: 4}
	fate := PatchFate{File: "patches/a/0001.diff", Fate: FateConflict, Conflicts: Conflicts{p, {Kind: KindMerge, Path: "g.go", Message: "m"}}}
	got, err := json.Marshal(fate)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"file":"patches/a/0001.diff","fate":"conflict","status":"","evidence":"",` +
		`"conflicts":[{"path":"f.go","hunk":"@@ -1,3 +1,3 @@","line":7,"expected":["a"],"found":["b"],"message":"hunk #1 does not apply"},` +
		`{"path":"g.go","expected":null,"found":null,"message":"m"}]}`
	if string(got) != want {
		t.Errorf("JSON:\n%s\nwant\n%s", got, want)
	}
	none, _ := json.Marshal(PatchFate{File: "x", Fate: FateKept})
	if string(none) != `{"file":"x","fate":"kept","status":"","evidence":""}` {
		t.Errorf("a fate without conflicts: %s", none)
	}
}
