package matrix

import (
	"reflect"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// TestSelectChartUnits: a change to a chart unit's vendored directory,
// series, spec or pin selects the package line that builds it, named by
// the package's directory; a chart unit in a package nothing builds is
// reported unbuilt.
func TestSelectChartUnits(t *testing.T) {
	root := monorepo(t)
	chartSpec := "charts:\n  - dir: ./charts/kamaji\n    upstream: {git: https://github.com/clastix/kamaji, path: charts/kamaji}\n" +
		"    version: {makefile-var: KAMAJI_VERSION, makefile: ./Makefile}\n    series: {tool: patch, args: -p1, patches: [./patches/1.diff]}\n"
	gittest.WriteFiles(t, root, map[string]string{
		"packages/system/kamaji/patchkit-charts.yaml":        chartSpec,
		"packages/system/kamaji/Makefile":                    "KAMAJI_VERSION ?= 26.3.6-edge\ninclude ../../../build/chart.mk\nimage:\n\tdocker buildx build images/kamaji\n",
		"build/chart.mk":                                     "%-update:\n\thelm pull x\n",
		"packages/system/kamaji/patches/1.diff":              "",
		"packages/system/kamaji/charts/kamaji/values.yaml":   "a: 1\n",
		"packages/system/kubeovn/patchkit-charts.yaml":       "charts:\n  - dir: ./charts/kube-ovn\n    upstream: {helm: https://example.com/charts, chart: kube-ovn}\n    version: 1.15.10\n",
		"packages/system/kubeovn/charts/kube-ovn/Chart.yaml": "name: kube-ovn\n",
	})
	plan := loadPlan(t, root)
	const kamaji = "packages/system/kamaji/images/kamaji"
	for _, tc := range []struct {
		name    string
		changed []string
		want    []string
		unbuilt string
	}{
		{"a vendored file", []string{"packages/system/kamaji/charts/kamaji/values.yaml"}, []string{"packages/system/kamaji"}, ""},
		{"the chart's patch", []string{"packages/system/kamaji/patches/1.diff"}, []string{"packages/system/kamaji"}, ""},
		{"the chart spec", []string{"packages/system/kamaji/patchkit-charts.yaml"}, []string{"packages/system/kamaji"}, ""},
		{"the pin's Makefile selects the chart's package and the image", []string{"packages/system/kamaji/Makefile"}, []string{"packages/system/kamaji", kamaji}, ""},
		{"the shared makefile the package includes", []string{"build/chart.mk"}, []string{"packages/system/kamaji"}, ""},
		{"a chart template outside any chart unit", []string{"packages/system/kamaji/templates/deploy.yaml"}, []string{}, ""},
		{"a chart unit nothing builds", []string{"packages/system/kubeovn/charts/kube-ovn/Chart.yaml"}, []string{}, "packages/system/kubeovn/charts/kube-ovn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel := plan.Select(root, tc.changed, false, ByUnit)
			if !reflect.DeepEqual(sel.Paths, tc.want) {
				t.Errorf("Select(%q).Paths = %q, want %q", tc.changed, sel.Paths, tc.want)
			}
			var unbuilt string
			if len(sel.Unbuilt) > 0 {
				unbuilt = sel.Unbuilt[0].Unit.Dir
			}
			if unbuilt != tc.unbuilt {
				t.Errorf("Select(%q).Unbuilt = %+v, want %q", tc.changed, sel.Unbuilt, tc.unbuilt)
			}
		})
	}
}
