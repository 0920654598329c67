package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gate"
	"github.com/patchkit/patchkit/internal/stamp"
)

const buildDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func sampleBuild() Build {
	return Build{
		Image: "greeter", Digest: buildDigest, Reference: "127.0.0.1:5000/greeter:v1.0.0@" + buildDigest,
		Tests: TestCounts{Run: 4, Passed: 4}, OK: true, Builder: "native", Pushed: true,
		Gate:    &gate.Result{OK: true, Ran: 4, Passed: 4, Message: "TestGreeterPatches passed"},
		Stamped: []stamp.Change{{File: "images/greeter/values.yaml", Key: ".image.tag", Format: "tag@digest", Old: "v1.0.0", New: "v1.0.0@" + buildDigest}},
	}
}

// TestBuildJSONShape checks the shape DESIGN.md fixes: one object for one
// image, an array for several, and the tests counts.
func TestBuildJSONShape(t *testing.T) {
	var one bytes.Buffer
	if err := RenderBuild(&one, JSON, []Build{sampleBuild()}, true); err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(one.Bytes(), &obj); err != nil {
		t.Fatalf("one image: %v\n%s", err, one.String())
	}
	for _, k := range []string{"image", "digest", "reference", "tests"} {
		if _, ok := obj[k]; !ok {
			t.Errorf("build JSON lacks %q: %s", k, one.String())
		}
	}
	tests := obj["tests"].(map[string]any)
	if tests["run"] != 4.0 || tests["passed"] != 4.0 || tests["failed"] != 0.0 || len(tests) != 3 {
		t.Errorf("tests = %v, want run 4, passed 4, failed 0", tests)
	}
	var many bytes.Buffer
	RenderBuild(&many, JSON, []Build{sampleBuild(), sampleBuild()}, false)
	var arr []map[string]any
	if err := json.Unmarshal(many.Bytes(), &arr); err != nil || len(arr) != 2 {
		t.Errorf("several images: %v %s", err, many.String())
	}
}

func TestBuildText(t *testing.T) {
	tests := []struct {
		name string
		b    Build
		want []string
	}{
		{"built", sampleBuild(), []string{
			"greeter: gate passed: TestGreeterPatches passed (4 tests ran: 4 passed, 0 failed)",
			"greeter: built with native: " + buildDigest,
			"greeter: pushed 127.0.0.1:5000/greeter:v1.0.0@" + buildDigest,
			"greeter: stamped images/greeter/values.yaml .image.tag: v1.0.0 -> v1.0.0@" + buildDigest,
		}},
		{"gate failed", Build{Image: "greeter", Message: "gate failed: x", Gate: &gate.Result{Ran: 2, Failed: 2, Message: "TestG/a failed",
			Tests: []gate.TestResult{{Name: "TestG/a", Status: gate.StatusFail, Output: "=== RUN   TestG/a\n    x_test.go:9: got 1\n--- FAIL: TestG/a (0.00s)"}}}},
			[]string{"greeter: gate FAILED: TestG/a failed (2 tests ran: 0 passed, 2 failed)", "--- FAIL: TestG/a", "x_test.go:9: got 1"}},
		{"no gate, layout", Build{Image: "greeter", OK: true, Digest: buildDigest, Reference: "greeter:v1.0.0@" + buildDigest, Builder: "buildah", OCILayout: "/o"},
			[]string{"no test section: gate skipped", "reference greeter:v1.0.0@" + buildDigest + " (not pushed)", "wrote OCI layout /o"}},
		{"apply failed", Build{Image: "greeter", Message: "the series does not apply"}, []string{"greeter: the series does not apply"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			RenderBuild(&b, Text, []Build{tt.b}, true)
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("RenderBuild(text) =\n%s\nwant %q", b.String(), w)
				}
			}
		})
	}
}

func sampleOwnership() *gate.Ownership {
	cols := []string{"TestG/plain", "TestG/empty"}
	return &gate.Ownership{
		Subtests: cols,
		Pin:      gate.Row{Status: gate.RowRan, Cells: []string{gate.Green, gate.Red}, Match: true, Message: "fails without the series"},
		Patches: []gate.Row{
			{Patch: "0001-a.diff", File: "patches/x/0001-a.diff", Status: gate.RowRan, Cells: []string{gate.Green, gate.Red}, Match: true, Message: "owns TestG/empty"},
			{Patch: "0002-b.diff", File: "patches/x/0002-b.diff", Status: gate.RowNoApply, Match: true, Message: "without it the rest does not apply"},
			{Patch: "0003-c.diff", File: "patches/x/0003-c.diff", Status: gate.RowRan, Cells: []string{gate.Green, gate.Green}, Message: "Test: names TestG/plain, but it stays green"},
		},
		Findings: []gate.Finding{{Patch: "0003-c.diff", File: "patches/x/0003-c.diff", Message: "Test: names TestG/plain, but it stays green"}},
	}
}

func sampleGate() Gate {
	g := Gate{Image: "x", Upstream: UpstreamRef{URL: "https://u:tok@example.com/x.git", Ref: "v1", Commit: strings.Repeat("a", 40)},
		Package: "./pkg", Run: "^TestG$", Result: &gate.Result{OK: true, Ran: 3, Passed: 3, Message: "TestG passed"}, Ownership: sampleOwnership()}
	g.Message = "TestG passed; 1 ownership findings"
	return g
}

func TestGateRender(t *testing.T) {
	var txt bytes.Buffer
	RenderGate(&txt, Text, []Gate{sampleGate()}, true)
	for _, w := range []string{
		"go test -run '^TestG$' ./pkg on v1 (aaaaaaaaaaaa): 3 tests ran: 3 passed, 0 failed",
		"plain  empty  verdict",
		"without 0001-a.diff  green  red    ok: owns TestG/empty",
		"without 0002-b.diff  -      -      ok: without it the rest does not apply",
		"without 0003-c.diff  green  green  MISMATCH",
		"FINDING 0003-c.diff: Test: names TestG/plain",
	} {
		if !strings.Contains(txt.String(), w) {
			t.Errorf("RenderGate(text) =\n%s\nwant %q", txt.String(), w)
		}
	}
	var js bytes.Buffer
	RenderGate(&js, JSON, []Gate{sampleGate()}, true)
	if strings.Contains(js.String(), "tok@") {
		t.Errorf("gate JSON leaks the URL's token: %s", js.String())
	}
	var gh bytes.Buffer
	RenderGate(&gh, GitHub, []Gate{sampleGate()}, true)
	if !strings.Contains(gh.String(), "::error file=patches/x/0003-c.diff,line=1,title=patchkit gate ownership::Test: names TestG/plain") {
		t.Errorf("RenderGate(github) =\n%s", gh.String())
	}
}

func TestMatrixColumns(t *testing.T) {
	tests := []struct {
		in, want []string
	}{
		{[]string{"TestG/a", "TestG/b"}, []string{"a", "b"}},
		{[]string{"TestG/a", "TestH/b"}, []string{"TestG/a", "TestH/b"}},
		{[]string{"TestG"}, []string{"TestG"}},
	}
	for _, tt := range tests {
		if got := matrixColumns(tt.in); strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("matrixColumns(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestRenderStamp(t *testing.T) {
	s := Stamp{Image: "greeter", Digest: buildDigest, Reference: "greeter:v1@" + buildDigest, Stamped: sampleBuild().Stamped}
	var js bytes.Buffer
	RenderStamp(&js, JSON, []Stamp{s}, true)
	var obj struct {
		Image   string
		Stamped []struct{ File, Key, New string }
	}
	if err := json.Unmarshal(js.Bytes(), &obj); err != nil || obj.Stamped[0].Key != ".image.tag" {
		t.Errorf("RenderStamp(json) = %s, %v", js.String(), err)
	}
}
