package report

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/adopt"
	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/forward"
	"github.com/patchkit/patchkit/internal/gate"
	"github.com/patchkit/patchkit/internal/matrix"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/stamp"
	"github.com/patchkit/patchkit/internal/status"
	"github.com/patchkit/patchkit/internal/txn"
	"github.com/patchkit/patchkit/internal/untrusted"
	"github.com/patchkit/patchkit/internal/upgrade"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/export")

// hostile is server text that tries every trick an output filter must
// defeat: a workflow command at a line start and after a break, a mention,
// a link, a table pipe, HTML, a code fence, a terminal escape and a token.
const hostile = "::set-output name=x::y @octocat [click](https://evil.example/x) | <b>bold</b> ``` \x1b[31m " + secret + "\n::warning::owned"

// goldenCases are one result of every renderer, each with server text in
// every field that can carry some.
func goldenCases() []struct {
	name   string
	render func(w *bytes.Buffer, f Format) error
} {
	commit := strings.Repeat("c", 40)
	conflict := apply.Problem{Kind: apply.KindConflict, File: "patches/x/0002-b.diff", Line: 9, Path: "b.txt",
		Message: "hunk #1 does not apply: " + hostile, Hunk: "@@ -4,3 +4,3 @@",
		Expected: []string{"a\tb\n", "c\r\n"}, Actual: []string{"a b\n", "c\n"}, NearLine: 5}
	applyRes := []Apply{
		{Image: "x", Unit: "images/x", Upstream: UpstreamRef{URL: "https://u:pw@example.com/x.git", Ref: "v1.0.0", Commit: commit}, OK: false,
			Patches: []apply.PatchResult{
				{Name: "0001-a.diff", Status: apply.StatusApplied, Hunks: []apply.HunkResult{{Path: "a.txt", Hunk: "@@ -1,3 +1,3 @@ func", Offset: 2}}},
				{Name: "0002-b.diff", Status: apply.StatusFailed, Errors: []apply.Problem{conflict,
					{Kind: apply.KindWhitespace, File: "patches/x/0002-b.diff", Line: 14, Message: "trailing whitespace."}}},
			}},
		{Image: "y", Error: "fetching: " + hostile, ExitCode: 2},
		{Image: "z", Upstream: UpstreamRef{URL: "https://example.com/z.git", Ref: "v2", Commit: commit}, OK: true,
			Patches: []apply.PatchResult{{Name: "0001-z.diff", Status: apply.StatusApplied}}, Out: "_output/z"},
	}
	failedBuild := Build{Image: "y", OK: false, Message: "gate: " + hostile,
		Gate: &gate.Result{OK: false, Ran: 2, Passed: 1, Failed: 1, Message: "TestY failed",
			Tests: []gate.TestResult{{Name: "TestY/a", Status: gate.StatusFail, Output: "=== RUN TestY/a\n    y_test.go:9: " + hostile + "\n--- FAIL: TestY/a"}}}}
	gateFail := sampleGate()
	gateFail.Image, gateFail.OK = "g2", false
	gateFail.Result = &gate.Result{OK: false, Ran: 1, Failed: 1, Message: "TestG failed", Output: "go: " + hostile}
	gateFail.Ownership = nil
	up := Upgrade{Image: "x", OK: false, KeepConflicts: true,
		Result: &upgrade.Result{
			Pin: upgrade.PinMove{File: "images/x/patchkit.yaml", From: "v1.0.0", FromCommit: commit, To: "v1.1.0", ToCommit: strings.Repeat("d", 40)},
			Patches: []upgrade.PatchFate{
				{File: "patches/x/0001-a.diff", Fate: upgrade.FateDropped, Status: "present", Commit: commit, Subject: "fix", Evidence: "upstream " + hostile, Tests: []string{"TestA"}},
				{File: "patches/x/0002-b.diff", Fate: upgrade.FateKept, Status: "applies", Evidence: "applies"},
				{File: "patches/x/0003-c.diff", Fate: upgrade.FateConflict, Status: "conflict", Evidence: "the merge conflicts",
					Conflicts: []upgrade.Conflict{{Path: "c.txt", Hunk: "@@ -1 +1 @@", Line: 3, Expected: []string{"old " + hostile}, Found: []string{"new"}, Message: "context differs"}}},
			},
		},
		Gate:         &gate.Result{OK: false, Ran: 2, Passed: 1, Failed: 1, Message: "TestA failed: " + hostile},
		DroppedTests: []TestStatus{{Name: "TestA", Patch: "patches/x/0001-a.diff", Status: "fail"}, {Name: "TestB", Patch: "patches/x/0001-a.diff"}},
		Written:      []txn.Done{{Path: "images/x/patchkit.yaml", Action: txn.ActionWrite}, {Path: "patches/x/0001-a.diff", Action: txn.ActionDelete, Target: "shared/0001-a.diff"}},
	}
	upOK := Upgrade{Image: "w", OK: true, DryRun: true,
		Result: &upgrade.Result{Pin: upgrade.PinMove{File: "images/w/patchkit.yaml", From: "v1", FromCommit: commit, To: "v2", ToCommit: commit},
			Patches: []upgrade.PatchFate{{File: "patches/w/0001.diff", Fate: upgrade.FateRefreshed, Status: "applies", Evidence: "rewritten at the new line numbers"}}}}
	added := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	st := &status.Report{
		Units: []status.Unit{
			{Name: "x", Dir: "images/x", URL: "https://u:pw@example.com/x.git", Pin: "v1.0.0", Newest: "v1.2.0", Behind: 2,
				Patches: []status.Patch{
					{File: "patches/x/0001-a.diff", Added: &added, Pins: 3, Verdict: "present", Evidence: hostile, ObsoletedBy: "v1.1.0", Commit: commit,
						Upstream: status.Upstream{Kind: "pr", URL: "https://github.com/o/r/pull/7", State: "merged", Release: "v1.1.0", Title: hostile, User: "@octocat", Note: hostile},
						Findings: []string{status.FindingDroppable}},
					{File: "patches/x/0002-b.diff", Verdict: "applies", Original: true, Upstream: status.Upstream{Kind: "none", State: "unknown"},
						Findings: []string{status.FindingNoUpstream}},
				}},
			{Name: "y", Dir: "images/y", Error: "fetching: " + hostile},
		},
		History: []status.Point{{Time: added, Commit: commit, Count: 1}, {Time: added.Add(48 * time.Hour), Commit: commit, Count: 2}},
	}
	fw := forward.Result{Patch: "patches/x/0003-c.diff", To: "main", ToCommit: commit, Fate: upgrade.FateConflict, Evidence: "the merge conflicts: " + hostile,
		Conflicts: []upgrade.Conflict{{Path: "c.txt", Hunk: "@@ -1 +1 @@", Message: hostile}, {Path: "d.txt", Message: "region"}}}
	fwOK := forward.Result{Patch: "patches/x/0001-a.diff", To: "main", ToCommit: commit, Fate: upgrade.FateKept, Evidence: "applies", Name: "0001-a.patch"}
	unit := spec.Unit{Dir: "images/u"}
	return []struct {
		name   string
		render func(w *bytes.Buffer, f Format) error
	}{
		{"apply", func(w *bytes.Buffer, f Format) error { return RenderApply(w, f, applyRes, false) }},
		{"apply-single", func(w *bytes.Buffer, f Format) error { return RenderApply(w, f, applyRes[2:], true) }},
		{"obsolete", func(w *bytes.Buffer, f Format) error {
			return RenderObsolete(w, f, []Obsolete{{Image: "x", Unit: "images/x", Report: sampleReport(3), Write: true,
				Written: nil}, {Image: "y", Error: hostile, ExitCode: 2}}, false)
		}},
		{"build", func(w *bytes.Buffer, f Format) error {
			return RenderBuild(w, f, []Build{sampleBuild(), failedBuild}, false)
		}},
		{"gate", func(w *bytes.Buffer, f Format) error { return RenderGate(w, f, []Gate{sampleGate(), gateFail}, false) }},
		{"stamp", func(w *bytes.Buffer, f Format) error {
			return RenderStamp(w, f, []Stamp{{Image: "x", Digest: buildDigest, Reference: "r@" + buildDigest,
				Stamped: []stamp.Change{{File: "v.yaml", Key: ".a|b", Old: "", New: "1"}}}}, true)
		}},
		{"verify", func(w *bytes.Buffer, f Format) error { return RenderVerify(w, f, verifyResults(), true) }},
		{"backport", func(w *bytes.Buffer, f Format) error {
			return RenderBackport(w, f, Backport{Image: "x", Commit: commit, Subject: hostile, File: "patches/x/0004.diff", PatchID: "p1",
				Ref: "v1", Applies: false, Errors: []apply.Problem{conflict}, SeriesFails: true, Raised: "golang.org/x/net v0.1.0"})
		}},
		{"upgrade", func(w *bytes.Buffer, f Format) error { return RenderUpgrade(w, f, up) }},
		{"upgrade-ok", func(w *bytes.Buffer, f Format) error { return RenderUpgrade(w, f, upOK) }},
		{"uptodate", func(w *bytes.Buffer, f Format) error {
			return Export(w, f, UpToDate{Image: "x", Message: `no newer upstream release than v1.1.0 matching "v*"`})
		}},
		{"refresh", func(w *bytes.Buffer, f Format) error {
			return RenderRefresh(w, f, Refresh{Image: "x", Ref: "v1.0.0", Patches: []RefreshedFile{{File: "patches/x/0001-a.diff", Changed: true}, {File: "patches/x/0002-b.diff"}}})
		}},
		{"forward", func(w *bytes.Buffer, f Format) error {
			return RenderForward(w, f, Forward{Result: &fw})
		}},
		{"forward-files", func(w *bytes.Buffer, f Format) error {
			return RenderForward(w, f, Forward{Result: &fwOK, Files: []string{"_output/forward/0001-a.patch", "_output/forward/0001-a.md"}})
		}},
		{"forward-pr", func(w *bytes.Buffer, f Format) error {
			return RenderForward(w, f, Forward{Result: &forward.Result{Patch: "patches/x/0001-a.diff"}, Forwarded: "https://github.com/o/r/pull/9", Changed: true})
		}},
		{"init", func(w *bytes.Buffer, f Format) error {
			return RenderInit(w, f, []adopt.Unit{
				{Dir: "images/x", Spec: "images/x/patchkit.yaml", Dockerfile: "images/x/Dockerfile", Upstream: adopt.Upstream{URL: "https://u:pw@example.com/x.git", Ref: "v1", From: "ARG VERSION"},
					Patches: "images/x/patches", Status: adopt.StatusWritten, Notes: []string{hostile}},
				{Dir: "images/y", Dockerfile: "images/y/Dockerfile", Status: adopt.StatusUnreadable, Problem: "images/y/Dockerfile:3: " + hostile},
			})
		}},
		{"status", func(w *bytes.Buffer, f Format) error { return RenderStatus(w, f, st) }},
		{"error", func(w *bytes.Buffer, f Format) error {
			return RenderError(w, f, Error{Message: hostile, ExitCode: 2, Kind: KindInput, File: "images/x/patchkit.yaml", Line: 4})
		}},
		{"unbuilt", func(w *bytes.Buffer, f Format) error {
			return RenderUnbuilt(w, w, f, "Makefile", []matrix.Unbuilt{{Unit: unit, Want: "make image IMAGE=u"}},
				[]matrix.Unbuilt{{Unit: spec.Unit{Dir: "images/v"}, Reason: hostile, Where: ".patchkit.yaml:3"}}, errors.New("images/u: nothing builds it\n"+hostile))
		}},
	}
}

// TestExportGolden pins the bytes every renderer writes in every format
// (before the output stream's own filter), server text included: a change of shape in the renderers must not change
// what a user or a script reads. -update rewrites testdata/export.
func TestExportGolden(t *testing.T) {
	for _, c := range goldenCases() {
		for _, f := range []Format{Text, JSON, Markdown, GitHub} {
			t.Run(c.name+"/"+string(f), func(t *testing.T) {
				var b bytes.Buffer
				if err := c.render(&b, f); err != nil {
					b.WriteString("error: " + err.Error() + "\n")
				}
				// What reaches the user passes through the stream's
				// filter too, as cmdutil's IOStreams set it up.
				var out bytes.Buffer
				uw := untrusted.NewWriter(&out)
				uw.AllowCommands(f == GitHub)
				if _, err := uw.Write(b.Bytes()); err != nil {
					t.Fatal(err)
				}
				if strings.Contains(out.String(), secret) {
					t.Errorf("the output shows the token:\n%s", out.String())
				}
				file := filepath.Join("testdata", "export", c.name+"."+string(f))
				if *update {
					if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(file)
				if err != nil {
					t.Fatalf("%v (run go test -update to write it)", err)
				}
				if got := b.String(); got != string(want) {
					t.Errorf("%s = \n%s\nwant\n%s", file, got, want)
				}
			})
		}
	}
}
