package chart

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/chart/charttest"
)

// specs are the chart specs of charttest.Monorepo, written by hand.
func specs(m *charttest.Monorepo) map[string]string {
	return map[string]string{
		"packages/system/reloader/" + FileName: fmt.Sprintf(`charts:
  - dir: ./charts/reloader
    upstream:
      helm: %s
      chart: reloader
    version:
      makefile-var: CHART_VERSION
      makefile: ./Makefile
    series:
      tool: patch
      args: --forward --no-backup-if-mismatch -p1
      patches: [./patches/deployment-startup-probe.diff]
`, m.Helm.URL),
		"packages/system/robotlb/" + FileName: fmt.Sprintf(`charts:
  - dir: ./charts/robotlb
    upstream:
      oci: oci://%s/charts/robotlb
    version: %s
    series:
      tool: patch
      args: --no-backup-if-mismatch -p4
      patches: [./patches/values.diff]
`, m.Registry, charttest.RobotlbVersion),
		"packages/system/kubeovn/" + FileName: `charts:
  - dir: ./charts/kube-ovn
    upstream:
      git: https://github.com/kubeovn/kube-ovn
      path: charts/kube-ovn
      tag: v{version}
    version:
      chart-yaml: appVersion
    series:
      tool: patch
      args: --no-backup-if-mismatch -p4
      patches: [./patches/mtu.diff]
`,
		"packages/system/multus/" + FileName: fmt.Sprintf(`charts:
  - dir: ./templates
    upstream:
      url: %s/releases/download/{version}/multus-daemonset-thick.yml
    version:
      makefile-var: MULTUS_VERSION
      makefile: ./Makefile
    series:
      tool: patch
      args: --no-backup-if-mismatch -p4
      patches: [./patches/customize-deployment.patch]
`, m.Assets.URL[:strings.LastIndex(m.Assets.URL, "/")]),
	}
}

func newMonorepo(t *testing.T) *charttest.Monorepo {
	t.Helper()
	return charttest.Start(t)
}

// adoptedMonorepo is newMonorepo with every chart unit's spec written.
func adoptedMonorepo(t *testing.T) *charttest.Monorepo {
	t.Helper()
	m := newMonorepo(t)
	charttest.WriteFiles(t, m.Root, specs(m))
	return m
}

// newFetcher is an online Fetcher on m with a fresh chart cache.
func newFetcher(t *testing.T, m *charttest.Monorepo) *Fetcher {
	t.Helper()
	return NewFetcher(m.Root, filepath.Join(t.TempDir(), "cache"), false)
}

func verifyAll(t *testing.T, m *charttest.Monorepo) map[string]*Result {
	t.Helper()
	units, err := LoadAll(m.Root)
	if err != nil {
		t.Fatal(err)
	}
	f := newFetcher(t, m)
	out := map[string]*Result{}
	for _, u := range units {
		res, err := f.Verify(context.Background(), u)
		if err != nil {
			t.Fatalf("Verify(%s): %v", u.Dir, err)
		}
		out[u.Dir] = res
	}
	return out
}

func TestVerifyVendored(t *testing.T) {
	m := adoptedMonorepo(t)
	res := verifyAll(t, m)
	if len(res) != 4 {
		t.Fatalf("units = %d, want 4", len(res))
	}
	for dir, r := range res {
		t.Logf("%s: %+v", dir, r.Checks)
		if !r.OK {
			t.Errorf("%s: not OK: %+v", dir, r.Checks)
		}
	}

	for _, tc := range []struct {
		name   string
		unit   string
		break_ func(t *testing.T)
		cause  string
		file   string
	}{
		{"hand edit", "packages/system/reloader/charts/reloader", func(t *testing.T) {
			p := m.Pkg("reloader", "charts/reloader/values.yaml")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append(b, "extra: true\n"...), 0o644)
		}, CauseHand, "packages/system/reloader/charts/reloader/values.yaml"},
		{"helmignored file", "packages/system/robotlb/charts/robotlb", func(t *testing.T) {
			os.WriteFile(m.Pkg("robotlb", "charts/robotlb/values.yaml.orig"), []byte("x\n"), 0o644)
		}, CauseHand, "packages/system/robotlb/charts/robotlb/values.yaml.orig"},
		{"stale chart version", "packages/system/reloader/charts/reloader", func(t *testing.T) {
			p := m.Pkg("reloader", "Makefile")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), "CHART_VERSION="+charttest.ReloaderVersion, "CHART_VERSION="+charttest.ReloaderNext, 1)), 0o644)
		}, CauseUpstream, "packages/system/reloader/charts/reloader/Chart.yaml"},
		{"zero index line", "packages/system/robotlb/charts/robotlb", func(t *testing.T) {
			p := m.Pkg("robotlb", "patches/values.diff")
			b, _ := os.ReadFile(p)
			s := strings.Replace(string(b), "--- a/", "index 0000000..1234567 100644\n--- a/", 1)
			os.WriteFile(p, []byte(s), 0o644)
		}, CauseSeries, ""},
		{"pin missing upstream", "packages/system/multus/templates", func(t *testing.T) {
			p := m.Pkg("multus", "Makefile")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), charttest.MultusVersion, "v9.9.9", 1)), 0o644)
		}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := snapshot(t, m.Root)
			defer restore(t, m.Root, snap)
			tc.break_(t)
			units, err := LoadAll(m.Root)
			if err != nil {
				t.Fatal(err)
			}
			var u *Unit
			for _, x := range units {
				if x.Dir == tc.unit {
					u = x
				}
			}
			f := newFetcher(t, m)
			r, err := f.Verify(context.Background(), u)
			if tc.cause == "" {
				if err == nil && r.OK {
					t.Fatalf("a pin upstream lacks passed: %+v", r.Checks)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := r.Checks[0]
			t.Logf("%s: %s %v", c.Cause, c.Message, c.Files)
			if r.OK || c.Status != StatusFail || c.Cause != tc.cause {
				t.Fatalf("check = %+v, want a failure with cause %q", c, tc.cause)
			}
			if tc.file != "" && !strings.Contains(c.Message, tc.file) {
				t.Fatalf("message %q does not name %s", c.Message, tc.file)
			}
			if tc.cause == CauseSeries && !strings.Contains(c.Message, "which already exists") {
				t.Fatalf("message %q does not say GNU patch reads the zero index as a creation", c.Message)
			}
		})
	}
}

// snapshot and restore keep the repository's files around a subtest that breaks one.
func snapshot(t *testing.T, root string) map[string][]byte {
	s := map[string][]byte{}
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(p)
			s[p] = b
		}
		return nil
	})
	return s
}

func restore(t *testing.T, root string, s map[string][]byte) {
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if _, ok := s[p]; !ok {
				os.Remove(p)
			}
		}
		return nil
	})
	for p, b := range s {
		os.WriteFile(p, b, 0o644)
	}
}

// withImageUnit is the monorepo with the charts' specs, the kube-ovn chart
// naming the image unit images/kubeovn, whose pin is the Dockerfile's TAG.
func withImageUnit(t *testing.T) *charttest.Monorepo {
	t.Helper()
	m := adoptedMonorepo(t)
	spec := m.Pkg("kubeovn", FileName)
	b, _ := os.ReadFile(spec)
	os.WriteFile(spec, append(b, "    image: ./images/kubeovn\n"...), 0o644)
	charttest.WriteFiles(t, m.Root, map[string]string{
		"packages/system/kubeovn/images/kubeovn/patchkit.yaml":    "upstream:\n  url: https://github.com/kubeovn/kube-ovn\n  ref:\n    dockerfile-arg: TAG\npatches: ./patches\n",
		"packages/system/kubeovn/images/kubeovn/patches/.gitkeep": "",
	})
	return m
}

// TestChartPinCheck warns when the image unit that the chart deploys is
// built from another upstream version than the chart's appVersion.
func TestChartPinCheck(t *testing.T) {
	m := withImageUnit(t)
	check := func() Check {
		t.Helper()
		r := verifyAll(t, m)["packages/system/kubeovn/charts/kube-ovn"]
		if r == nil || len(r.Checks) != 2 {
			t.Fatalf("checks = %+v, want vendored and chart-pin", r)
		}
		return r.Checks[1]
	}
	if c := check(); c.Check != CheckPins || c.Status != StatusPass {
		t.Fatalf("same versions: %+v", c)
	}
	df := m.Pkg("kubeovn", "images/kubeovn/Dockerfile")
	os.WriteFile(df, []byte("ARG TAG=v"+charttest.KubeovnPrevious+"\nFROM scratch\n"), 0o644)
	c := check()
	if c.Status != StatusWarn || !strings.Contains(c.Message, "v"+charttest.KubeovnPrevious) || !strings.Contains(c.Message, charttest.KubeovnVersion) {
		t.Fatalf("different versions: %+v, want a warning naming both", c)
	}
}

// TestVendoredFromTheImageVersion: a chart whose Chart.yaml names one
// release while its files come from the release its image is built from
// fails as "upstream version differs", naming both versions.
func TestVendoredFromTheImageVersion(t *testing.T) {
	m := withImageUnit(t)
	cy := m.Pkg("kubeovn", "charts/kube-ovn/Chart.yaml")
	b, _ := os.ReadFile(cy)
	os.WriteFile(cy, []byte(strings.ReplaceAll(string(b), charttest.KubeovnVersion, charttest.KubeovnPrevious)), 0o644)
	r := verifyAll(t, m)["packages/system/kubeovn/charts/kube-ovn"]
	c := r.Checks[0]
	if c.Cause != CauseUpstream || !strings.Contains(c.Message, "upstream "+charttest.KubeovnVersion) || !strings.Contains(c.Message, "pin "+charttest.KubeovnPrevious) {
		t.Fatalf("check = %+v, want upstream version differs naming %s and %s", c, charttest.KubeovnVersion, charttest.KubeovnPrevious)
	}
	if r.Checks[1].Status != StatusWarn {
		t.Fatalf("chart-pin = %+v, want a warning", r.Checks[1])
	}
}
