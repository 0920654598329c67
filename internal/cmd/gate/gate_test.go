package gate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/cmd/cmdtest"
	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/gate/gatetest"
	"github.com/spf13/cobra"
)

func runGate(t *testing.T, root, url, output string, args ...string) (int, string, error) {
	t.Helper()
	f := &cmdutil.Factory{Root: root, CacheDir: filepath.Join(root, ".cache"), UpstreamURL: url, Output: output}
	code, out, _, err := cmdtest.Exec(context.Background(), f, func(f *cmdutil.Factory) *cobra.Command { return NewCmdGate(f, nil) }, args...)
	return code, out, err
}

func TestGateGreeter(t *testing.T) {
	root, url := gatetest.Greeter(t)
	code, out, err := runGate(t, root, url, "text", "greeter")
	if code != 0 {
		t.Fatalf("gate = exit %d, %v\n%s", code, err, out)
	}
	for _, want := range []string{
		"greeter: gate passed: TestGreeterPatches passed",
		"4 tests ran: 4 passed, 0 failed",
		"plain_name  empty_name  shout_trims",
		"pin (no patches)",
		"without 0001-greet-world.diff  green       red         green",
		"without 0002-shout-trims.diff  green       green       red",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("gate output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "FINDING") {
		t.Errorf("gate output has findings:\n%s", out)
	}
}

func TestGateJSONAndFinding(t *testing.T) {
	root, url := gatetest.Greeter(t)
	p := filepath.Join(root, "patches", "greeter", "0001-greet-world.diff")
	b, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(b), "Test: TestGreeterPatches/empty_name\n", "", 1)), 0o644)
	code, out, err := runGate(t, root, url, "json", "greeter")
	if code != 1 {
		t.Fatalf("gate = exit %d, %v; want 1 for the finding\n%s", code, err, out)
	}
	var g struct {
		Image string `json:"image"`
		OK    bool   `json:"ok"`
		Tests struct {
			Run, Passed, Failed, Skipped int
		} `json:"tests"`
		Ownership struct {
			Subtests []string `json:"subtests"`
			Patches  []struct {
				Patch string   `json:"patch"`
				File  string   `json:"file"`
				Cells []string `json:"cells"`
				Match bool     `json:"match"`
			} `json:"patches"`
			Findings []struct {
				Patch, File, Message string
			} `json:"findings"`
		} `json:"ownership"`
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatalf("gate -o json = %q: %v", out, err)
	}
	if g.Image != "greeter" || g.OK || g.Tests.Run != 4 || len(g.Ownership.Subtests) != 3 || len(g.Ownership.Patches) != 2 {
		t.Errorf("gate JSON = %+v", g)
	}
	f := g.Ownership.Findings
	if len(f) != 1 || f[0].File != "patches/greeter/0001-greet-world.diff" || !strings.Contains(f[0].Message, "has no Test: header, but without it TestGreeterPatches/empty_name go red") {
		t.Errorf("findings = %+v", f)
	}

	code, out, _ = runGate(t, root, url, "github", "greeter")
	if code != 1 || !strings.Contains(out, "::error file=patches/greeter/0001-greet-world.diff,line=1,title=patchkit gate ownership::") {
		t.Errorf("gate -o github = %d\n%s", code, out)
	}
	_, out, _ = runGate(t, root, url, "markdown", "greeter")
	if !strings.Contains(out, "| without `0001-greet-world.diff` | 🟢 | 🔴 | 🟢 |") {
		t.Errorf("gate -o markdown =\n%s", out)
	}
}

func TestGateFailsOnTheSeries(t *testing.T) {
	root, url := gatetest.Greeter(t)
	gatetest.EditSpec(t, root, "run: '^TestGreeterPatches$'", "run: '^TestMissing$'")
	code, out, err := runGate(t, root, url, "text", "greeter")
	if code != 1 || !strings.Contains(out, `the -run pattern "^TestMissing$" matched nothing`) || strings.Contains(out, "ownership") {
		t.Errorf("gate = exit %d, %v\n%s", code, err, out)
	}
}

func TestGateSeriesDoesNotApply(t *testing.T) {
	root, url := gatetest.Greeter(t)
	gatetest.WriteFile(t, root, "patches/greeter/0003-broken.diff", "Subject: x\n\ndiff --git a/greet/greet.go b/greet/greet.go\n--- a/greet/greet.go\n+++ b/greet/greet.go\n@@ -1,1 +1,1 @@\n-package nope\n+package greet2\n")
	code, out, _ := runGate(t, root, url, "text", "greeter")
	if code != 1 || !strings.Contains(out, "FAILED") || !strings.Contains(out, "0003-broken.diff") {
		t.Errorf("gate = exit %d\n%s", code, out)
	}
}

func TestGateNoTest(t *testing.T) {
	root, url := gatetest.Greeter(t)
	gatetest.WriteFile(t, root, "images/greeter/patchkit.yaml", "upstream: {url: https://example.com/greeter.git, ref: v1.0.0}\npatches: patches/greeter\n")
	code, _, err := runGate(t, root, url, "text", "greeter")
	if code != 2 || err == nil || !strings.Contains(err.Error(), "no regression test") {
		t.Errorf("gate without test = exit %d, %v", code, err)
	}
}
