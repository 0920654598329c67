package chart

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/chart/charttest"
)

func TestAdoptFourForms(t *testing.T) {
	m := newMonorepo(t)
	// A patches/ directory nothing applies, and a line init cannot read.
	charttest.WriteFiles(t, m.Root, map[string]string{
		"packages/system/orphan/Makefile":          "update:\n\techo nothing\n",
		"packages/system/orphan/patches/lost.diff": "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
		// a patch nothing applies, of a file that exists: not stale
		"packages/system/orphan/patches/kept.diff": "--- a/Makefile\n+++ b/Makefile\n@@ -1 +1 @@\n-update:\n+update: x\n",
		"packages/system/dyn/Makefile": "update:\n\t$(eval RELEASE := $(shell curl -s https://api.github.com/repos/o/r/releases/latest | jq -r .name))\n" +
			"\twget -q https://example.com/o/r/refs/tags/$(RELEASE)/x.yml -O templates/x.yml\n",
		// the image unit built from the chart's upstream
		"packages/system/kubeovn/images/kubeovn/patchkit.yaml":    "upstream:\n  url: https://github.com/kubeovn/kube-ovn.git\n  ref:\n    dockerfile-arg: TAG\npatches: ./patches\n",
		"packages/system/kubeovn/images/kubeovn/patches/.gitkeep": "",
	})
	// A second patch applied with other options (ingress-nginx: -p 3, then -p4).
	dir := m.Pkg("reloader", "charts/reloader")
	before, after := t.TempDir(), t.TempDir()
	b, _ := os.ReadFile(filepath.Join(dir, "values.yaml"))
	os.WriteFile(filepath.Join(before, "values.yaml"), b, 0o644)
	os.WriteFile(filepath.Join(after, "values.yaml"), append(b, "startup: true\n"...), 0o644)
	charttest.WriteFiles(t, m.Pkg("reloader", ""), map[string]string{"patches/values.patch": charttest.Diff(t, before, after, "packages/system/reloader/charts/reloader")})
	charttest.GNUPatch(t, m.Pkg("reloader", ""), "patches/values.patch", "--no-backup-if-mismatch", "-p", "4")
	mk, _ := os.ReadFile(m.Pkg("reloader", "Makefile"))
	os.WriteFile(m.Pkg("reloader", "Makefile"), append(mk, "\tpatch --no-backup-if-mismatch -p 4 < patches/values.patch\n"...), 0o644)

	// capi-providers-bootstrap's shape: an asset fetched into a scratch
	// directory, patched there by a loop, then moved into files/.
	asset := "kind: ServiceAccount\nmetadata:\n  name: default\n  namespace: cabpt-system\n"
	charttest.WriteFiles(t, m.Assets.Dir, map[string]string{"releases/download/v0.6.12/bootstrap-components.yaml": asset})
	base := m.Assets.URL[:strings.LastIndex(m.Assets.URL, "/")]
	charttest.WriteFiles(t, m.Root, map[string]string{
		"packages/system/capi/Makefile": "CABPT_UPSTREAM_VERSION = v0.6.12\n\nupdate:\n\trm -rf .update-tmp\n\tmkdir .update-tmp\n" +
			"\tcurl -sSL \"" + base + "/releases/download/$(CABPT_UPSTREAM_VERSION)/bootstrap-components.yaml\" \\\n\t\t-o .update-tmp/bootstrap-components.yaml\n" +
			"\tfor p in patches/*.diff; do \\\n\t\t[ -e \"$$p\" ] || continue; \\\n\t\t(cd .update-tmp && patch bootstrap-components.yaml < ../$$p) || exit 1; \\\n\tdone\n" +
			"\tmv .update-tmp/bootstrap-components.yaml files/bootstrap-components-talos.yaml\n\trm -rf .update-tmp\n",
		"packages/system/capi/patches/0001-rename.diff":              "--- a/bootstrap-components.yaml\n+++ b/bootstrap-components.yaml\n@@ -1,4 +1,4 @@\n kind: ServiceAccount\n metadata:\n-  name: default\n+  name: cabpt-manager\n   namespace: cabpt-system\n",
		"packages/system/capi/files/bootstrap-components-talos.yaml": strings.Replace(asset, "name: default", "name: cabpt-manager", 1),
		"packages/system/capi/files/metadata-talos.yaml":             "kept as is\n",
	})

	// postgres-operator's shape: a subdirectory removed after the pull.
	rmk, _ := os.ReadFile(m.Pkg("robotlb", "Makefile"))
	os.WriteFile(m.Pkg("robotlb", "Makefile"), []byte(strings.Replace(string(rmk), "\tpatch ", "\trm -rf charts/robotlb/charts\n\tpatch ", 1)), 0o644)

	found, err := Adopt(m.Root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	units := map[string]Found{}
	var problems []string
	for _, f := range found {
		if f.Problem != "" {
			problems = append(problems, f.Problem)
			continue
		}
		units[f.Dir] = f
	}
	want := map[string]string{
		"packages/system/reloader/charts/reloader": KindHelm,
		"packages/system/robotlb/charts/robotlb":   KindOCI,
		"packages/system/kubeovn/charts/kube-ovn":  KindGit,
		"packages/system/multus/templates":         KindURL,
		"packages/system/capi/files":               KindURL,
	}
	for dir, kind := range want {
		f, ok := units[dir]
		if !ok {
			t.Errorf("unit %s not found; found %v, problems %q", dir, keys(units), problems)
			continue
		}
		if f.Unit.Kind() != kind || len(f.Unit.Series.Patches) != 1+boolInt(kind == KindHelm) {
			t.Errorf("%s: kind %s, series %v; want %s and one patch", dir, f.Unit.Kind(), f.Unit.Series.Patches, kind)
		}
	}
	if len(units) != len(want) {
		t.Errorf("units = %v, want %d", keys(units), len(want))
	}
	if r := units["packages/system/reloader/charts/reloader"]; r.Unit != nil {
		if r.Unit.Version.MakefileVar != "CHART_VERSION" {
			t.Errorf("reloader's pin = %+v, want makefile-var CHART_VERSION (the shared rule's variable)", r.Unit.Version)
		}
		if s := r.Unit.Series; len(s.Patches) != 2 || s.ArgsOf(0) != "--forward --no-backup-if-mismatch -p1" || s.ArgsOf(1) != "--no-backup-if-mismatch -p 4" {
			t.Errorf("reloader's series = %+v, want two patches, each with its options", s)
		}
	}
	if k := units["packages/system/kubeovn/charts/kube-ovn"]; k.Unit != nil && (k.Unit.Version.ChartYAML != "appVersion" || k.Unit.Upstream.Tag != "v{version}" || k.Unit.Upstream.Path != "charts/kube-ovn") {
		t.Errorf("kube-ovn: %+v %+v", k.Unit.Version, k.Unit.Upstream)
	}
	if r := units["packages/system/robotlb/charts/robotlb"]; r.Unit != nil && (len(r.Unit.Remove) != 1 || r.Unit.Remove[0] != "charts") {
		t.Errorf("robotlb's remove = %q, want [charts]", r.Unit.Remove)
	}
	if k := units["packages/system/kubeovn/charts/kube-ovn"]; k.Unit != nil && k.Unit.Image != "packages/system/kubeovn/images/kubeovn" {
		t.Errorf("kube-ovn's image = %q, want the image unit built from the same upstream", k.Unit.Image)
	}
	joined := strings.Join(problems, "\n")
	for _, w := range []string{"packages/system/orphan/patches/lost.diff: no line of packages/system/orphan/Makefile's update target applies it (and the files it patches exist nowhere in the repository, a/x among them: a stale patch?",
		"packages/system/orphan/patches/kept.diff: no line of packages/system/orphan/Makefile's update target applies it\n",
		"packages/system/dyn/Makefile:3: the version $(RELEASE)"} {
		if !strings.Contains(joined, w) {
			t.Errorf("problems %q lack %q", joined, w)
		}
	}
	if err := WriteSpecs(m.Root, found, false, false); err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		if f.Problem == "" && f.Status != "written" {
			t.Errorf("%s: status %s, want written", f.Dir, f.Status)
		}
	}
	if b, err := os.ReadFile(m.Pkg("reloader", FileName)); err == nil {
		t.Logf("reloader spec:\n%s", b)
	}
	for dir, r := range verifyAll(t, m) {
		if dir == "packages/system/kubeovn/charts/kube-ovn" && (len(r.Checks) != 2 || r.Checks[1].Status != StatusPass) {
			t.Errorf("kube-ovn's chart-pin check: %+v", r.Checks)
		}
		if !r.OK {
			t.Errorf("%s after init: %+v", dir, r.Checks)
		}
	}
	// A second init keeps what exists.
	found2, _ := Adopt(m.Root, nil, nil)
	if err := WriteSpecs(m.Root, found2, false, false); err != nil {
		t.Fatal(err)
	}
	for _, f := range found2 {
		if f.Problem == "" && f.Status != "exists" {
			t.Errorf("second init: %s status %s, want exists", f.Dir, f.Status)
		}
	}
}

func keys(m map[string]Found) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
