package chart

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/chart/charttest"
	"github.com/patchkit/patchkit/internal/obsolete"
)

// TestScanReleases: obsolete-check on chart units reads the releases from
// a Helm repository's index.yaml and an OCI registry's tags, and judges
// each patch at each: applies, present (the release carries it), conflict.
func TestScanReleases(t *testing.T) {
	m := adoptedMonorepo(t)
	// 2.2.0 carries the startupProbe; 2.3.0 rewrote the probes.
	carried := charttest.ChartFiles("reloader", "2.2.0", "v1.3.2")
	carried["templates/deployment.yaml"] = strings.Replace(carried["templates/deployment.yaml"], "          livenessProbe:", "          startupProbe:\n            httpGet:\n              path: /healthz\n              port: 8080\n          livenessProbe:", 1)
	m.Helm.Add(t, "reloader", "2.2.0", charttest.Tgz(t, "reloader", carried))
	rewritten := charttest.ChartFiles("reloader", "2.3.0", "v1.3.3")
	rewritten["templates/deployment.yaml"] = strings.Replace(rewritten["templates/deployment.yaml"], "          livenessProbe:\n            httpGet:\n              path: /healthz", "          probes:\n            path: /live", 1)
	m.Helm.Add(t, "reloader", "2.3.0", charttest.Tgz(t, "reloader", rewritten))
	m.Helm.Add(t, "reloader", "2.4.0-rc.1", charttest.Tgz(t, "reloader", charttest.ChartFiles("reloader", "2.4.0-rc.1", "v1.4.0")))

	units, err := LoadAll(m.Root)
	if err != nil {
		t.Fatal(err)
	}
	f := newFetcher(t, m)
	got := map[string]*obsolete.Report{}
	for _, u := range units {
		r, err := f.Scan(context.Background(), u)
		if err != nil && u.Kind() != KindURL {
			t.Fatalf("Scan(%s): %v", u.Dir, err)
		}
		got[u.Dir] = r
	}
	r := got["packages/system/reloader/charts/reloader"]
	var refs, statuses []string
	for _, ref := range r.Refs {
		refs = append(refs, ref.Name)
	}
	for _, res := range r.Patches[0].Results {
		statuses = append(statuses, res.Status)
	}
	if want := []string{"2.1.0", "2.2.0", "2.3.0"}; !reflect.DeepEqual(refs, want) {
		t.Errorf("reloader releases = %q, want %q (after the pin, no prerelease)", refs, want)
	}
	if want := []string{"applies", "present", "conflict"}; !reflect.DeepEqual(statuses, want) {
		t.Errorf("reloader patch statuses = %q, want %q", statuses, want)
	}
	if r.Patches[0].ObsoletedBy != "2.2.0" || !r.Findings() {
		t.Errorf("obsoletedBy = %q, findings %v; want 2.2.0, true", r.Patches[0].ObsoletedBy, r.Findings())
	}
	o := got["packages/system/robotlb/charts/robotlb"]
	if len(o.Refs) != 1 || o.Refs[0].Name != charttest.RobotlbNext || o.Patches[0].Results[0].Status != "applies" {
		t.Errorf("robotlb (OCI tags): %+v %+v", o.Refs, o.Patches)
	}
	if k := got["packages/system/kubeovn/charts/kube-ovn"]; len(k.Refs) != 0 {
		t.Errorf("kube-ovn (git tags v{version}) after the newest: %+v", k.Refs)
	}
}
