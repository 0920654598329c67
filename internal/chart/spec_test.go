package chart

import (
	"errors"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/spec"
)

// TestParseBadInputs: a chart spec is decoded strictly; each mistake is
// bad input naming the file, the line and the key.
func TestParseBadInputs(t *testing.T) {
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{
		"pkg/Makefile":            "CHART_VERSION = 1.2.3\n",
		"pkg/patches/a.diff":      "",
		"pkg/charts/x/Chart.yaml": "name: x\nversion: 1.0.0\n",
	})
	const good = "charts:\n  - dir: ./charts/x\n    upstream: {helm: https://example.com/charts, chart: x}\n    version: {makefile-var: CHART_VERSION, makefile: ./Makefile}\n    series: {tool: patch, args: -p1, patches: [./patches/a.diff]}\n"
	if f, err := Parse(root, "pkg/"+FileName, []byte(good)); err != nil {
		t.Fatalf("the good spec: %v", err)
	} else if pin, _ := f.Charts[0].Pin(root); pin != "1.2.3" || f.Charts[0].Dir != "pkg/charts/x" {
		t.Fatalf("pin %q dir %q", pin, f.Charts[0].Dir)
	}
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"unknown key", "    series:", "    colour: red\n    series:", "colour"},
		{"two upstreams", "chart: x}", "chart: x, git: https://example.com/x}", "upstream: name exactly one of helm, oci, git, url"},
		{"helm without chart", ", chart: x}", "}", "upstream.chart"},
		{"missing variable", "CHART_VERSION, makefile", "NOPE, makefile", "version.makefile-var"},
		{"missing patch", "./patches/a.diff", "./patches/b.diff", "series.patches[0]: ./patches/b.diff does not exist"},
		{"dir leaves the repository", "./charts/x", "../../../x", "dir: ../../../x leaves the repository"},
		{"unknown tool", "tool: patch", "tool: quilt", "series.tool"},
		{"unmodelled option", "args: -p1", "args: -p1 --merge", `option "--merge" is not modelled`},
		{"image that is no unit", "    series:", "    image: ./images/x\n    series:", "image: pkg/images/x is no image unit"},
		{"git remote helper", "{helm: https://example.com/charts, chart: x}", `{git: "ext::sh -c touch% /tmp/x"}`, "upstream.git: upstream ext::sh -c touch% /tmp/x: ext:: is git's remote helper syntax"},
		{"git ssh option", "{helm: https://example.com/charts, chart: x}", "{git: ssh://-oProxyCommand=true/x}", "upstream.git: upstream ssh://-oProxyCommand=true/x: strange hostname"},
		{"chart-yaml key", "version: {makefile-var: CHART_VERSION, makefile: ./Makefile}", "version: {chart-yaml: name}", "version.chart-yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := strings.Replace(good, tc.from, tc.to, 1)
			if bad == good {
				t.Fatalf("case does not change the spec")
			}
			_, err := Parse(root, "pkg/"+FileName, []byte(bad))
			var ie *diag.InputError
			if err == nil || !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "pkg/"+FileName+":") {
				t.Fatalf("Parse = %v, want bad input naming the file, line and %q", err, tc.want)
			}
		})
	}
}

// TestSplitArgsSharesTheWalk: SplitArgs takes the chart units from the
// Discovery's walk, which also finds the image units: a unit added to the
// tree after SplitArgs is not among the Discovery's units (no second walk),
// and each chart argument is matched without walking again.
func TestSplitArgsSharesTheWalk(t *testing.T) {
	root := t.TempDir()
	const chartSpec = "charts:\n  - dir: ./charts/x\n    upstream: {helm: https://example.com/charts, chart: x}\n    version: {makefile-var: CHART_VERSION, makefile: ./Makefile}\n    series: {tool: patch, args: -p1, patches: [./patches/a.diff]}\n"
	const unitSpec = "upstream:\n  url: https://example.com/up.git\n  ref: v1.0.0\npatches: ./patches\n"
	gittest.WriteFiles(t, root, map[string]string{
		"pkg/Makefile":               "CHART_VERSION = 1.2.3\n",
		"pkg/patches/a.diff":         "",
		"pkg/charts/x/Chart.yaml":    "name: x\nversion: 1.0.0\n",
		"pkg/" + FileName:            chartSpec,
		"pkg/images/a/patchkit.yaml": unitSpec,
	})
	d := spec.NewDiscovery(root)
	charts, rest, err := SplitArgs(d, []string{"pkg/charts/x", "a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != 1 || charts[0].Dir != "pkg/charts/x" || len(rest) != 1 || rest[0] != "a" {
		t.Fatalf("SplitArgs = %v, %v, want the chart pkg/charts/x and the rest [a]", charts, rest)
	}
	gittest.WriteFiles(t, root, map[string]string{"pkg/images/b/patchkit.yaml": unitSpec})
	units, err := d.Units()
	if err != nil {
		t.Fatal(err)
	}
	if len(units) != 1 || units[0].Dir != "pkg/images/a" {
		t.Errorf("Discovery.Units() = %v, want only pkg/images/a (the walk SplitArgs made)", units)
	}
	if all, err := spec.Discover(root); err != nil || len(all) != 2 {
		t.Errorf("Discover() = %v, %v: the unit added is missing, so the check above proves nothing", all, err)
	}
}
