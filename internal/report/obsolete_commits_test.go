package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/obsolete"
)

// TestRenderObsoletePartialCommits: a partly-upstream patch names the
// commit that carries its upstream hunks, in JSON (per hunk, and grouped by
// commit) and in text, where that comes before the hunk that needs a
// refresh.
func TestRenderObsoletePartialCommits(t *testing.T) {
	conflict := &apply.Problem{Kind: apply.KindConflict, File: "patches/x/0001.diff", Line: 31, Path: "pod.go",
		Message: "hunk #3 does not apply: its context and removed lines are not in pod.go; best match at line 1130 (3 of 12 lines equal)",
		Hunk:    "@@ -1106,12 +1119,18 @@"}
	res := obsolete.Result{Ref: "v1.0.1", Status: obsolete.StatusPartial, Via: obsolete.ViaHunks, Commit: commitA, Subject: "keep memberships",
		Hunks: []obsolete.Hunk{
			{Path: "pod.go", Hunk: "@@ -1061,6 +1061,7 @@", Line: 4, Status: obsolete.StatusPresent, Via: obsolete.ViaReverseApply, Commit: commitA},
			{Path: "pod.go", Hunk: "@@ -1106,12 +1119,18 @@", Line: 31, Status: obsolete.StatusConflict},
		},
		Commits:  []obsolete.Carrier{{Commit: commitA, Subject: "keep memberships", Hunks: []int{4}}},
		Conflict: conflict,
		Evidence: `hunks already upstream: pod.go @@ -1061,6 +1061,7 @@ (line 4) (upstream commit aaaaaaaaaaaa ("keep memberships") carries the hunk at line 4); hunks that need a refresh: pod.go @@ -1106,12 +1119,18 @@ (line 31)`,
	}
	rep := &obsolete.Report{URL: "https://example.com/up.git", Pin: "v1.0.0", PinCommit: commitB,
		Refs:    []obsolete.Ref{{Name: "v1.0.1", Kind: obsolete.KindTag, Commit: commitB}},
		Patches: []obsolete.PatchReport{{File: "patches/x/0001.diff", Results: []obsolete.Result{res}}}}
	o := []Obsolete{{Image: "x", Report: rep}}

	text := render(t, Text, o, true)
	ev := strings.Index(text, "v1.0.1: partial: hunks already upstream")
	prob := strings.Index(text, "patches/x/0001.diff:31: hunk #3 does not apply")
	if ev < 0 || prob < 0 || ev > prob {
		t.Errorf("text =\n%s\nwant the partial evidence, naming the commit, before the problem of hunk #3", text)
	}
	if !strings.Contains(text, "aaaaaaaaaaaa") {
		t.Errorf("text =\n%s\nwant the commit named", text)
	}

	var out struct {
		Patches []struct {
			Results []struct {
				Commit *string `json:"commit"`
				Hunks  []struct {
					Line   int
					Commit string
				}
				Commits []struct {
					Commit string
					Hunks  []int
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(render(t, JSON, o, true)), &out); err != nil {
		t.Fatal(err)
	}
	r := out.Patches[0].Results[0]
	if r.Commit == nil || *r.Commit != commitA || r.Hunks[0].Commit != commitA || r.Hunks[1].Commit != "" ||
		len(r.Commits) != 1 || r.Commits[0].Commit != commitA || len(r.Commits[0].Hunks) != 1 || r.Commits[0].Hunks[0] != 4 {
		t.Errorf("json result = %+v, want the commit, per hunk and grouped", r)
	}
}
