package upgrade

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/patchkit/patchkit/internal/apply"
)

// conflictBefore is upgrade's conflict as it was before apply.Problem became
// the one model: the JSON Conflicts must keep writing.
type conflictBefore struct {
	Path     string   `json:"path"`
	Hunk     string   `json:"hunk,omitempty"`
	Line     int      `json:"line,omitempty"`
	Expected []string `json:"expected"`
	Found    []string `json:"found"`
	Message  string   `json:"message,omitempty"`
}

type fateBefore struct {
	File      string           `json:"file"`
	Conflicts []conflictBefore `json:"conflicts,omitempty"`
}

type fateNow struct {
	File      string    `json:"file"`
	Conflicts Conflicts `json:"conflicts,omitempty"`
}

// TestConflictsJSON: a failed hunk is apply's record; upgrade's JSON keeps
// its documented spelling byte for byte ("found" for apply's "actual", none
// of apply's kind, file and nearLine, "expected" and "found" null when
// empty), whether the encoder escapes HTML or not.
func TestConflictsJSON(t *testing.T) {
	hunk := apply.Problem{Kind: apply.KindConflict, File: "patches/a/0001.diff", Line: 7, Path: "f.go",
		Message: "hunk #1 does not apply: <b> & co", Hunk: "@@ -1,3 +1,3 @@", Expected: []string{"a <x>"}, Actual: []string{"b && c"}, NearLine: 4}
	region := apply.Problem{Kind: KindMerge, File: "patches/a/0001.diff", Path: "g.go", Message: "m"}
	before := []fateBefore{
		{File: "a", Conflicts: []conflictBefore{
			{Path: "f.go", Hunk: "@@ -1,3 +1,3 @@", Line: 7, Expected: []string{"a <x>"}, Found: []string{"b && c"}, Message: "hunk #1 does not apply: <b> & co"},
			{Path: "g.go", Message: "m"},
		}},
		{File: "b"},
	}
	now := []fateNow{{File: "a", Conflicts: Conflicts{hunk, region}}, {File: "b"}}
	encode := func(v any, escape bool) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(escape)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, escape := range []bool{true, false} {
		if got, want := encode(now, escape), encode(before, escape); got != want {
			t.Errorf("escape HTML %v:\n%s\nwant\n%s", escape, got, want)
		}
	}
	if got, _ := json.Marshal(PatchFate{File: "x", Fate: FateKept}); string(got) != `{"file":"x","fate":"kept","status":"","evidence":""}` {
		t.Errorf("a fate without conflicts: %s", got)
	}
}
