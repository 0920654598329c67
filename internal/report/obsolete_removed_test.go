package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/obsolete"
	"github.com/patchkit/patchkit/internal/status"
)

// removedReport is a patch whose target upstream removed at v1.1.0 (a
// conflict whose Removed says so) after it applied at v1.0.1.
func removedReport() []Obsolete {
	rm := &obsolete.Removed{Paths: []string{"pkg/foo/bar.go"}, Commit: commitA, Subject: "drop foo", All: true}
	removed := obsolete.Result{Ref: "v1.1.0", Status: obsolete.StatusConflict, Via: obsolete.ViaRemoved, Removed: rm,
		Hunks:    []obsolete.Hunk{{Path: "pkg/foo/bar.go", Hunk: "@@ -7,7 +7,7 @@", Line: 9, Status: obsolete.StatusConflict, Via: obsolete.ViaRemoved}},
		Evidence: `target removed: pkg/foo/bar.go deleted by upstream commit aaaaaaaaaaaa ("drop foo"): drop the patch or rewrite it for what replaced it`}
	rep := &obsolete.Report{URL: "https://example.com/up.git", Pin: "v1.0.0", PinCommit: commitB,
		Refs: []obsolete.Ref{{Name: "v1.0.1", Kind: obsolete.KindTag, Commit: commitB}, {Name: "v1.1.0", Kind: obsolete.KindTag, Commit: commitA}},
		Patches: []obsolete.PatchReport{{File: "patches/x/0001.diff", Results: []obsolete.Result{
			{Ref: "v1.0.1", Status: obsolete.StatusApplies, Via: obsolete.ViaApply, Evidence: "applies cleanly"}, removed}}}}
	return []Obsolete{{Image: "x", Report: rep}}
}

// TestRenderObsoleteTargetRemoved: a removed target reads removed in the
// tables, conflict with a removed field in JSON (its statuses are fixed),
// and is an error annotation that says so.
func TestRenderObsoleteTargetRemoved(t *testing.T) {
	o := removedReport()
	text := render(t, Text, o, true)
	if !strings.Contains(text, "applies   removed") && !strings.Contains(text, "applies  removed") {
		t.Errorf("text =\n%s\nwant the v1.1.0 cell to read removed", text)
	}
	if !strings.Contains(text, `v1.1.0: conflict: target removed: pkg/foo/bar.go deleted by upstream commit aaaaaaaaaaaa ("drop foo")`) {
		t.Errorf("text =\n%s\nwant the removal's evidence", text)
	}
	if md := render(t, Markdown, o, true); !strings.Contains(md, "| applies | ⚪ **removed** |") {
		t.Errorf("markdown =\n%s\nwant the v1.1.0 cell to read removed", md)
	}
	gh := render(t, GitHub, o, true)
	if !strings.Contains(gh, "::error file=patches/x/0001.diff,line=1,title=patchkit obsolete-check%3A removed::") ||
		!strings.Contains(gh, ", 1 with their target removed") || strings.Contains(gh, "title=patchkit obsolete-check%3A conflict") {
		t.Errorf("github =\n%s\nwant one removed error annotation, counted", gh)
	}
	var out struct {
		Patches []struct {
			Results []struct {
				Status  string
				Removed *struct {
					Paths   []string
					Commit  string
					Subject string
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(render(t, JSON, o, true)), &out); err != nil {
		t.Fatal(err)
	}
	rs := out.Patches[0].Results
	if rs[0].Removed != nil || rs[1].Status != obsolete.StatusConflict || rs[1].Removed == nil ||
		rs[1].Removed.Commit != commitA || rs[1].Removed.Subject != "drop foo" || strings.Join(rs[1].Removed.Paths, " ") != "pkg/foo/bar.go" {
		t.Errorf("json results = %+v, want v1.1.0 conflict with removed {pkg/foo/bar.go %s drop foo}", rs, commitA)
	}
}

// TestStatusTargetRemoved: the status page's verdict cell reads removed, and
// the finding asks to drop or rewrite the patch, not to refresh it.
func TestStatusTargetRemoved(t *testing.T) {
	p := status.Patch{File: "patches/x/0001.diff", Verdict: obsolete.StatusConflict, Findings: []string{status.FindingRemoved},
		Removed: &obsolete.Removed{Paths: []string{"pkg/foo/bar.go"}, Commit: commitA}}
	r := &status.Report{Units: []status.Unit{{Name: "x", Dir: "images/x", Pin: "v1.0.0", Newest: "v1.1.0", Patches: []status.Patch{p}}}}
	if got := statusText(r); !strings.Contains(got, "  removed  ") || !strings.Contains(got, "drop it or rewrite it") {
		t.Errorf("statusText() =\n%s\nwant a removed verdict and its finding", got)
	}
	if got := StatusMarkdown(r); !strings.Contains(got, "⚪ **removed**") {
		t.Errorf("StatusMarkdown() =\n%s\nwant a removed verdict", got)
	}
	var b strings.Builder
	if err := statusHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); !strings.Contains(got, "<td>removed</td>") || !strings.Contains(got, ">target removed</div>") {
		t.Errorf("statusHTML() =\n%s\nwant a removed verdict and finding", got)
	}
}
