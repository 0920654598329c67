package verify_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/chart/charttest"
	"github.com/patchkit/patchkit/internal/cmd/root"
	"github.com/patchkit/patchkit/internal/cmdutil"
)

type aloneJSON struct {
	Image    string      `json:"image"`
	OK       bool        `json:"ok"`
	Checks   []checkJSON `json:"checks"`
	Error    string      `json:"error"`
	ExitCode int         `json:"exitCode"`
}

// TestEveryUnitFailsAlone: verify over every unit of a monorepo with image
// and chart units, where one chart's Helm repository is unreachable (a
// closed loopback port) and one image unit's upstream directory was
// removed: each of those is a result naming the unit and the reason, the
// others are verified (a chart of a Helm repository served on loopback, an
// image unit on a generated upstream), and the exit is the worst status
// (2), in text, JSON, markdown and github. Stderr has one line per unit as
// it finishes; stdout is the report only.
func TestEveryUnitFailsAlone(t *testing.T) {
	m := charttest.NewMixed(t)
	cache := t.TempDir()
	run := func(args ...string) (int, string, string) {
		t.Helper()
		return runPatchkit(t, append([]string{"--root", m.Root, "--cache-dir", cache}, args...)...)
	}
	code, out, errOut := run("-o", "json", "verify")
	var got []aloneJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("verify -o json: stdout is no JSON array: %v\n%s\n%s", err, out, errOut)
	}
	if code != 2 {
		t.Errorf("verify -o json: exit %d, want 2 (the worst status)\n%s", code, errOut)
	}
	byName := map[string]aloneJSON{}
	for _, r := range got {
		byName[r.Image] = r
	}
	if len(got) != 4 || len(byName) != 4 {
		t.Fatalf("verify -o json = %d results %v, want the 4 units\n%s", len(got), byName, out)
	}
	for _, c := range []struct {
		name, like, patch, check string
		ok                       bool
	}{
		{charttest.MixedGood, "", "images/good/patches/0001-hello.diff", "apply", true},
		{charttest.MixedUp, "", "packages/app/patchkit-charts.yaml", "vendored", true},
		{charttest.MixedGone, "removed", "images/gone/patchkit.yaml", "apply", false},
		{charttest.MixedDown, strings.TrimSuffix(strings.TrimPrefix(m.Down, "http://"), "/charts"), "packages/app/patchkit-charts.yaml", "vendored", false},
	} {
		r := byName[c.name]
		if r.OK != c.ok {
			t.Errorf("%s: ok = %v, want %v: %+v", c.name, r.OK, c.ok, r)
		}
		if c.ok {
			if r.Error != "" || r.ExitCode != 0 {
				t.Errorf("%s: error = %q (exit %d), want none", c.name, r.Error, r.ExitCode)
			}
		} else if r.ExitCode != 2 || !strings.Contains(r.Error, c.like) {
			t.Errorf("%s: error = %q (exit %d), want the reason, naming %s, exit 2", c.name, r.Error, r.ExitCode, c.like)
		}
		want := "pass"
		if !c.ok {
			want = "fail"
		}
		found := false
		for _, ch := range r.Checks {
			if ch.Patch == c.patch && ch.Check == c.check {
				found = true
				if ch.Status != want || (!c.ok && !strings.HasPrefix(ch.Message, "not verified: ")) {
					t.Errorf("%s: %s check = %s %q, want %s", c.name, c.check, ch.Status, ch.Message, want)
				}
			}
		}
		if !found {
			t.Errorf("%s: no %s check of %s in %+v", c.name, c.check, c.patch, r.Checks)
		}
	}
	// One line per unit on stderr as it finishes, naming it.
	for _, line := range []string{
		"patchkit: good: ok (",
		"patchkit: packages/app/charts/up: ok (1 pass)\n",
		"patchkit: gone: opening cache of " + m.Gone,
		"patchkit: packages/app/charts/down: fetching " + m.Down + "/index.yaml",
	} {
		if strings.Count(errOut, line) != 1 {
			t.Errorf("stderr has %q %d times, want once:\n%s", line, strings.Count(errOut, line), errOut)
		}
	}

	code, out, _ = run("verify")
	for _, want := range []string{"good: ok (", "packages/app/charts/up: ok (", "gone: FAILED (", "packages/app/charts/down: FAILED (1 fail)\n  packages/app/patchkit-charts.yaml\n    FAIL vendored         line 5: not verified: fetching " + m.Down} {
		if code != 2 || !strings.Contains(out, want) {
			t.Errorf("verify: exit %d, want 2 and %q in\n%s", code, want, out)
		}
	}
	code, out, _ = run("-o", "markdown", "verify")
	if code != 2 || !strings.Contains(out, "### ❌ patchkit verify `packages/app/charts/down`") || !strings.Contains(out, "### ✅ patchkit verify `packages/app/charts/up`") {
		t.Errorf("verify -o markdown: exit %d\n%s", code, out)
	}
	code, out, _ = run("-o", "github", "verify")
	if code != 2 || !strings.Contains(out, "::error file=packages/app/patchkit-charts.yaml,line=5,title=patchkit verify vendored::not verified: fetching ") {
		t.Errorf("verify -o github: exit %d\n%s", code, out)
	}
	// The one image unit of a run with a chart unit fails alone too.
	code, out, _ = run("-o", "json", "verify", charttest.MixedGone, charttest.MixedUp)
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 2 || len(got) != 2 || got[0].Error == "" || !got[1].OK {
		t.Errorf("verify %s %s: exit %d, %v\n%s", charttest.MixedGone, charttest.MixedUp, code, err, out)
	}
	// Named alone, the unreachable chart is the run's error, as an image is.
	if code, out, errOut := run("-o", "json", "verify", charttest.MixedDown); code != 2 || strings.Contains(out, `"image"`) || strings.Contains(errOut, "patchkit: packages/app/charts/down: ") {
		t.Errorf("verify %s: exit %d\n%s\n%s", charttest.MixedDown, code, out, errOut)
	}
}

// TestUnitProgressTerminal: with stderr a terminal, a run over several
// units also says each unit's steps as it starts them, numbered; stdout is
// the report only.
func TestUnitProgressTerminal(t *testing.T) {
	m := charttest.NewMixed(t)
	var out, errOut bytes.Buffer
	f := &cmdutil.Factory{IO: cmdutil.Test(&out, &errOut)}
	f.IO.SetTTY(false, true)
	cmd := root.NewCmdRoot(f)
	cmd.SetArgs([]string{"--root", m.Root, "--cache-dir", t.TempDir(), "-o", "json", "verify", "good", charttest.MixedUp})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("verify: %v\n%s", err, errOut.String())
	}
	var got []aloneJSON
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got) != 2 {
		t.Fatalf("verify -o json: %v, %d results\n%s", err, len(got), out.String())
	}
	for _, want := range []string{
		"patchkit: [1/2] good: upstream file://",
		"patchkit: [1/2] good: checking 1 patch(es)\n",
		"patchkit: good: ok (",
		"patchkit: [2/2] packages/app/charts/up: verifying " + m.Helm.URL + "/up\n",
		"patchkit: packages/app/charts/up: ok (1 pass)\n",
	} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
		}
	}
}

// TestBadChartEntryFailsAlone: a chart unit whose entry does not load (its
// pin's Makefile is missing) and a chart spec file that does not parse are
// each a result of their own beside the other units, named by the unit's
// directory and by the file, exit 2; named alone, the entry's error is the
// run's.
func TestBadChartEntryFailsAlone(t *testing.T) {
	m := charttest.NewMixed(t)
	charttest.WriteFiles(t, m.Root, map[string]string{
		"packages/lib/patchkit-charts.yaml":  "charts:\n  - dir: ./charts/lib\n    upstream: {helm: " + m.Helm.URL + ", chart: up}\n    version: {makefile-var: LIB_VERSION, makefile: ./Makefile}\n",
		"packages/lib/charts/lib/Chart.yaml": "name: lib\n",
		"packages/junk/patchkit-charts.yaml": "charts:\n  - dir: ./x\n    color: blue\n",
	})
	cache := t.TempDir()
	code, out, errOut := runPatchkit(t, "--root", m.Root, "--cache-dir", cache, "-o", "json", "verify", "good", charttest.MixedUp)
	if code != 0 {
		t.Fatalf("verify of the good units: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runPatchkit(t, "--root", m.Root, "--cache-dir", cache, "-o", "json", "verify")
	var got []aloneJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("verify -o json: %v\n%s\n%s", err, out, errOut)
	}
	byName := map[string]aloneJSON{}
	for _, r := range got {
		byName[r.Image] = r
	}
	if code != 2 || len(got) != 6 {
		t.Fatalf("verify -o json: exit %d, %d results, want 2 and 6\n%s", code, len(got), out)
	}
	for name, like := range map[string]string{
		"packages/lib/charts/lib":            "Makefile",
		"packages/junk/patchkit-charts.yaml": "color",
	} {
		r := byName[name]
		if r.OK || r.ExitCode != 2 || !strings.Contains(r.Error, like) || len(r.Checks) != 1 || !strings.HasPrefix(r.Checks[0].Message, "not verified: ") {
			t.Errorf("%s = %+v, want a failed unit naming %q, exit 2", name, r, like)
		}
	}
	if !byName["good"].OK || !byName[charttest.MixedUp].OK {
		t.Errorf("the good units were not verified: %s", out)
	}
	if code, out, errOut := runPatchkit(t, "--root", m.Root, "--cache-dir", cache, "verify", "packages/lib/charts/lib"); code != 2 || out != "" || !strings.Contains(errOut, "packages/lib/patchkit-charts.yaml:2") {
		t.Errorf("verify packages/lib/charts/lib: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runPatchkit(t, "--root", m.Root, "--cache-dir", cache, "-o", "json", "obsolete-check")
	if code != 2 || !strings.Contains(out, `"image": "packages/lib/charts/lib"`) || !strings.Contains(out, `"image": "packages/junk/patchkit-charts.yaml"`) || !strings.Contains(out, `"image": "good"`) {
		t.Errorf("obsolete-check -o json: exit %d\n%s", code, out)
	}
}
