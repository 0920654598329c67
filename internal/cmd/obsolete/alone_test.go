package obsolete_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/chart/charttest"
)

// TestEveryUnitFailsAloneCharts: obsolete-check over every unit of a
// monorepo with image and chart units, where one chart's Helm repository
// is unreachable (a closed loopback port) and one image unit's upstream
// directory was removed: each of those is a result naming the unit and the
// reason, the others are checked (a chart of a Helm repository served on
// loopback, an image unit on a generated upstream), and the exit is the
// worst status (2), in text and JSON. Stderr has one line per unit as it
// finishes; stdout is the report only.
func TestEveryUnitFailsAloneCharts(t *testing.T) {
	m := charttest.NewMixed(t)
	cache := t.TempDir()
	run := func(args ...string) (int, string, string) {
		t.Helper()
		return runPatchkit(t, append([]string{"--root", m.Root, "--cache-dir", cache}, args...)...)
	}
	code, out, errOut := run("-o", "json", "obsolete-check")
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("obsolete-check -o json: stdout is no JSON array: %v\n%s\n%s", err, out, errOut)
	}
	if code != 2 {
		t.Errorf("obsolete-check -o json: exit %d, want 2 (the worst status)\n%s", code, errOut)
	}
	byName := map[string]map[string]any{}
	for _, r := range got {
		byName[r["image"].(string)] = r
	}
	if len(got) != 4 || len(byName) != 4 {
		t.Fatalf("obsolete-check -o json = %d results, want the 4 units\n%s", len(got), out)
	}
	for _, c := range []struct{ name, like, refs string }{
		{charttest.MixedGood, "", "v1.1.0"},
		{charttest.MixedUp, "", "1.1.0"},
		{charttest.MixedGone, "removed", ""},
		{charttest.MixedDown, strings.TrimPrefix(m.Down, "http://"), ""},
	} {
		r := byName[c.name]
		if c.like == "" {
			refs, _ := r["refs"].([]any)
			if r["error"] != nil || len(refs) != 1 || refs[0] != c.refs {
				t.Errorf("%s = %v, want its verdicts at %s", c.name, r, c.refs)
			}
			continue
		}
		if e, _ := r["error"].(string); r["ok"] != false || r["exitCode"] != float64(2) || !strings.Contains(e, c.like) || r["patches"] != nil {
			t.Errorf("%s = %v, want an error naming %s, exitCode 2", c.name, r, c.like)
		}
	}
	for _, line := range []string{
		"patchkit: good: 1 patch(es) at 1 ref(s): ",
		"patchkit: packages/app/charts/up: 0 patch(es) at 1 ref(s): every patch applies\n",
		"patchkit: gone: opening cache of " + m.Gone,
		"patchkit: packages/app/charts/down: fetching " + m.Down + "/index.yaml",
	} {
		if strings.Count(errOut, line) != 1 {
			t.Errorf("stderr has %q %d times, want once:\n%s", line, strings.Count(errOut, line), errOut)
		}
	}

	code, out, _ = run("obsolete-check")
	for _, want := range []string{"good: 1 patch against", "gone: not checked: opening cache of " + m.Gone, "packages/app/charts/down: not checked: fetching " + m.Down} {
		if code != 2 || !strings.Contains(out, want) {
			t.Errorf("obsolete-check: exit %d, want 2 and %q in\n%s", code, want, out)
		}
	}
	code, out, _ = run("-o", "markdown", "obsolete-check")
	if code != 2 || !strings.Contains(out, "### obsolete-check: `packages/app/charts/down` not checked") {
		t.Errorf("obsolete-check -o markdown: exit %d\n%s", code, out)
	}
	code, out, _ = run("-o", "github", "obsolete-check")
	if code != 2 || !strings.Contains(out, "::error title=patchkit obsolete-check::packages/app/charts/down: not checked: fetching ") {
		t.Errorf("obsolete-check -o github: exit %d\n%s", code, out)
	}
	// The one image unit of a run with a chart unit fails alone too.
	code, out, _ = run("-o", "json", "obsolete-check", charttest.MixedGone, charttest.MixedUp)
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 2 || len(got) != 2 || got[0]["error"] == nil || got[1]["error"] != nil {
		t.Errorf("obsolete-check %s %s: exit %d, %v\n%s", charttest.MixedGone, charttest.MixedUp, code, err, out)
	}
	// Named alone, the unreachable chart is the run's error, as an image is.
	if code, out, _ := run("-o", "json", "obsolete-check", charttest.MixedDown); code != 2 || strings.Contains(out, `"image"`) {
		t.Errorf("obsolete-check %s: exit %d\n%s", charttest.MixedDown, code, out)
	}
}
