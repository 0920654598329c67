package initcmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/chart/charttest"
)

type chartInit struct {
	Kind     string `json:"kind"`
	Dir      string `json:"dir"`
	Spec     string `json:"spec"`
	Upstream struct {
		URL string `json:"url"`
		Ref string `json:"ref"`
	} `json:"upstream"`
	Status  string `json:"status"`
	Problem string `json:"problem"`
}

type verifyOut struct {
	Image  string `json:"image"`
	OK     bool   `json:"ok"`
	Checks []struct {
		Patch, Check, Status, Message, Cause string
		Files                                []string
	} `json:"checks"`
}

// chartMonorepo starts the chart monorepo (charttest.Start) and returns it
// with a fresh cache directory.
func chartMonorepo(t *testing.T) (*charttest.Monorepo, string) {
	t.Helper()
	return charttest.Start(t), filepath.Join(t.TempDir(), "cache")
}

// initRoot runs init on the monorepo and fails the test unless it exits 0.
func initRoot(t *testing.T, m *charttest.Monorepo) {
	t.Helper()
	if code, out, errOut := run(t, "init", "--root", m.Root); code != 0 {
		t.Fatalf("init: exit %d\n%s\n%s", code, out, errOut)
	}
}

// raiseChartVersion raises the reloader's CHART_VERSION by hand to the
// next release, without re-vendoring the chart.
func raiseChartVersion(t *testing.T, m *charttest.Monorepo) {
	t.Helper()
	p := m.Pkg("reloader", "Makefile")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), "CHART_VERSION="+charttest.ReloaderVersion, "CHART_VERSION="+charttest.ReloaderNext, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestInitChartsThenVerify: a monorepo with the four chart forms adopts
// with init, passes verify, and a hand edit, a stale chart version and a
// patch GNU patch refuses each fail verify naming the cause.
func TestInitChartsThenVerify(t *testing.T) {
	m, cache := chartMonorepo(t)

	code, out, errOut := run(t, "init", "--root", m.Root, "-o", "json")
	if code != 0 {
		t.Fatalf("init: exit %d\n%s\n%s", code, out, errOut)
	}
	var units []chartInit
	if err := json.Unmarshal([]byte(out), &units); err != nil {
		t.Fatalf("init -o json: %v\n%s", err, out)
	}
	want := map[string]string{
		"packages/system/reloader/charts/reloader": charttest.ReloaderVersion,
		"packages/system/robotlb/charts/robotlb":   charttest.RobotlbVersion,
		"packages/system/kubeovn/charts/kube-ovn":  charttest.KubeovnVersion,
		"packages/system/multus/templates":         charttest.MultusVersion,
	}
	got := map[string]chartInit{}
	for _, u := range units {
		switch u.Kind {
		case "chart":
			got[u.Dir] = u
		case "image":
		default:
			t.Errorf("init -o json: %s has kind %q, want image or chart", u.Dir, u.Kind)
		}
	}
	for dir, ref := range want {
		u, ok := got[dir]
		if !ok || u.Upstream.Ref != ref || u.Upstream.URL == "" || u.Status != "written" {
			t.Errorf("init listed %s as %+v; want upstream.ref %s, written", dir, u, ref)
		}
	}

	verify := func() (int, []verifyOut, string) {
		code, out, errOut := run(t, "verify", "--root", m.Root, "--cache-dir", cache, "-o", "json")
		var res []verifyOut
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("verify -o json: %v\n%s\n%s", err, out, errOut)
		}
		return code, res, errOut
	}
	code, res, errOut := verify()
	if code != 0 || len(res) != 4 {
		t.Fatalf("verify after init: exit %d, %d results\n%+v\n%s", code, len(res), res, errOut)
	}

	// Warm: the chart cache holds every archive, so neither a second run
	// nor an --offline one asks the Helm repository or the asset server.
	served := m.Helm.Requests() + m.Assets.Requests()
	if code, res, errOut := verify(); code != 0 || len(res) != 4 {
		t.Fatalf("warm verify: exit %d, %d results\n%s", code, len(res), errOut)
	}
	code, out, errOut = run(t, "verify", "--root", m.Root, "--cache-dir", cache, "--offline")
	if code != 0 || strings.Count(out, ": ok (") != 4 {
		t.Fatalf("verify --offline, warm: exit %d\n%s\n%s", code, out, errOut)
	}
	if n := m.Helm.Requests() + m.Assets.Requests() - served; n != 0 {
		t.Errorf("warm verify runs made %d requests, want 0", n)
	}
	cold := []string{"verify", "--root", m.Root, "--cache-dir", filepath.Join(t.TempDir(), "cold"), "--offline", "packages/system/reloader/charts/reloader"}
	if code, out, errOut := run(t, cold...); code != 2 || !strings.Contains(errOut, "is not in the chart cache") {
		t.Errorf("verify --offline, cold: exit %d, want 2 naming the chart cache\n%s\n%s", code, out, errOut)
	}

	// obsolete-check on the chart units: the releases after each pin.
	code, out, errOut = run(t, "obsolete-check", "--root", m.Root, "--cache-dir", cache, "-o", "json")
	var obs []struct {
		Image   string   `json:"image"`
		Refs    []string `json:"refs"`
		Patches []struct {
			File    string `json:"file"`
			Results []struct{ Ref, Status string }
		} `json:"patches"`
	}
	if err := json.Unmarshal([]byte(out), &obs); err != nil || code != 0 {
		t.Fatalf("obsolete-check: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	seen := map[string]string{}
	for _, o := range obs {
		seen[o.Image] = strings.Join(o.Refs, ",")
		for _, p := range o.Patches {
			for _, r := range p.Results {
				if r.Status != "applies" {
					t.Errorf("%s %s at %s: %s, want applies", o.Image, p.File, r.Ref, r.Status)
				}
			}
		}
	}
	if seen["packages/system/reloader/charts/reloader"] != charttest.ReloaderNext || seen["packages/system/robotlb/charts/robotlb"] != charttest.RobotlbNext {
		t.Errorf("obsolete-check refs = %v, want the Helm and OCI releases after the pins", seen)
	}
	// --offline: the same report, from the listings and archives the chart cache kept.
	served = m.Helm.Requests()
	if code, off, errOut := run(t, "obsolete-check", "--root", m.Root, "--cache-dir", cache, "--offline", "-o", "json"); code != 0 || off != out || m.Helm.Requests() != served {
		t.Errorf("obsolete-check --offline: exit %d, %d requests, same report %v\n%s\n%s", code, m.Helm.Requests()-served, off == out, off, errOut)
	}

	for _, tc := range []struct {
		name, unit, cause, names string
		edit                     func(t *testing.T)
	}{
		{"hand edit", "packages/system/kubeovn/charts/kube-ovn", "edited by hand", "packages/system/kubeovn/charts/kube-ovn/templates/ovn-CR.yaml", func(t *testing.T) {
			p := m.Pkg("kubeovn", "charts/kube-ovn/templates/ovn-CR.yaml")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), "subnets", "subnets\", \"ips", 1)), 0o644)
		}},
		{"stale chart version", "packages/system/reloader/charts/reloader", "upstream version differs", "Chart.yaml is version " + charttest.ReloaderVersion, func(t *testing.T) {
			raiseChartVersion(t, m)
		}},
		{"patch GNU patch refuses", "packages/system/multus/templates", "series fails to apply", "which already exists", func(t *testing.T) {
			p := m.Pkg("multus", "patches/customize-deployment.patch")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), "--- a/", "index 0000000..e69de29 100644\n--- a/", 1)), 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := map[string][]byte{}
			filepath.Walk(m.Root, func(p string, info os.FileInfo, err error) error {
				if err == nil && !info.IsDir() {
					saved[p], _ = os.ReadFile(p)
				}
				return nil
			})
			defer func() {
				for p, b := range saved {
					os.WriteFile(p, b, 0o644)
				}
			}()
			tc.edit(t)
			code, res, errOut := verify()
			if code != 1 {
				t.Fatalf("verify: exit %d, want 1\n%+v\n%s", code, res, errOut)
			}
			for _, r := range res {
				failed := !r.OK
				if (r.Image == tc.unit) != failed {
					t.Errorf("%s: ok=%v (only %s should fail): %+v", r.Image, r.OK, tc.unit, r.Checks)
				}
				if r.Image != tc.unit {
					continue
				}
				c := r.Checks[0]
				if c.Check != "vendored" || c.Cause != tc.cause || !strings.Contains(c.Message, tc.names) {
					t.Errorf("check = %+v; want vendored, cause %q, naming %q", c, tc.cause, tc.names)
				}
			}
		})
	}
}

// TestUpgradeChartUnit: upgrade on a chart unit re-vendors it at the newest
// release with its series, moves CHART_VERSION, and verify passes after.
func TestUpgradeChartUnit(t *testing.T) {
	m, cache := chartMonorepo(t)
	initRoot(t, m)
	code, out, errOut := run(t, "upgrade", "--root", m.Root, "--cache-dir", cache, "packages/system/reloader/charts/reloader")
	if code != 0 || !strings.Contains(out, "moved "+charttest.ReloaderVersion+" -> "+charttest.ReloaderNext) {
		t.Fatalf("upgrade: exit %d\n%s\n%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(m.Pkg("reloader", "Makefile")); !strings.Contains(string(b), "CHART_VERSION="+charttest.ReloaderNext+"\n") {
		t.Fatalf("Makefile after upgrade:\n%s", b)
	}
	if code, out, errOut := run(t, "verify", "--root", m.Root, "--cache-dir", cache, "packages/system/reloader/charts/reloader"); code != 0 {
		t.Fatalf("verify after upgrade: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestUpgradeChartDropsLanded: through the CLI, a chart release that
// carries the reloader's patch drops it (the file, the spec entry, the
// Makefile line), names the image unit built from the chart's old
// appVersion, and verify passes after; a second upgrade says up to date.
func TestUpgradeChartDropsLanded(t *testing.T) {
	m, cache := chartMonorepo(t)
	initRoot(t, m)
	charttest.AddReloaderCarrying(t, m)
	unit := "packages/system/reloader/charts/reloader"
	code, out, errOut := run(t, "upgrade", "--root", m.Root, "--cache-dir", cache, unit)
	for _, want := range []string{
		"moved " + charttest.ReloaderVersion + " -> 2.2.0",
		"  dropped: packages/system/reloader/patches/deployment-startup-probe.diff (2.2.0 carries it: it reverse-applies there)\n",
		"  also: image unit packages/system/reloader/images/reloader is built from v1.3.0, the chart's appVersion v1.3.0: move it and carry its series with `patchkit upgrade packages/system/reloader/images/reloader --to v1.3.2`\n",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("upgrade: exit %d, want %q in\n%s\n%s", code, want, out, errOut)
		}
	}
	if _, err := os.Stat(m.Pkg("reloader", "patches/deployment-startup-probe.diff")); !os.IsNotExist(err) {
		t.Errorf("the dropped patch is still there (%v)", err)
	}
	if code, out, errOut := run(t, "verify", "--root", m.Root, "--cache-dir", cache, unit); code != 0 {
		t.Fatalf("verify after upgrade: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, _ := run(t, "upgrade", "--root", m.Root, "--cache-dir", cache, unit); code != 0 || !strings.Contains(out, "no newer upstream release") {
		t.Errorf("second upgrade: exit %d\n%s", code, out)
	}
}

// TestUpgradeChartThenImage: the kube-ovn chart unit is linked to the
// image unit built from the same upstream. Upgrading the chart to 1.15.11
// names the image unit with the command that moves its pin; that command
// moves the Dockerfile's TAG (and the chart's appVersion, already there),
// after which both units verify at 1.15.11.
func TestUpgradeChartThenImage(t *testing.T) {
	m, cache := chartMonorepo(t)
	charttest.WriteFiles(t, m.Root, map[string]string{
		"packages/system/kubeovn/images/kubeovn/patchkit.yaml": "upstream:\n  url: https://github.com/kubeovn/kube-ovn\n  ref:\n    dockerfile-arg: TAG\n" +
			"  versions:\n    - file: ../../charts/kube-ovn/Chart.yaml\n      key: .appVersion\n      spelling: bare\npatches: ./patches\n",
		"packages/system/kubeovn/images/kubeovn/patches/.keep": "",
	})
	initRoot(t, m)
	next := charttest.ChartFiles("kube-ovn", "v1.15.11", "1.15.11")
	next["templates/ovn-CR.yaml"] = "kind: ClusterRole\nrules:\n  - apiGroups: [\"kubeovn.io\"]\n    resources: [\"vpcs\", \"subnets\"] # 1.15.11\n"
	next["values.yaml"] = charttest.ChartFiles("kube-ovn", "v"+charttest.KubeovnVersion, charttest.KubeovnVersion)["values.yaml"] // the mtu patch's context
	for p, c := range next {
		m.GitRepo.Write("charts/kube-ovn/"+p, c)
	}
	m.GitRepo.Commit("release v1.15.11")
	m.GitRepo.Tag("v1.15.11")

	chartDir, imageDir := "packages/system/kubeovn/charts/kube-ovn", "packages/system/kubeovn/images/kubeovn"
	code, out, errOut := run(t, "upgrade", "--root", m.Root, "--cache-dir", cache, chartDir)
	also := "  also: image unit " + imageDir + " is built from v1.15.10, the chart's version 1.15.10: move it and carry its series with `patchkit upgrade " + imageDir + " --to v1.15.11`\n"
	if code != 0 || !strings.Contains(out, "moved 1.15.10 -> 1.15.11") || !strings.Contains(out, also) {
		t.Fatalf("chart upgrade: exit %d, want %q in\n%s\n%s", code, also, out, errOut)
	}
	if code, out, errOut := run(t, "upgrade", "--root", m.Root, "--cache-dir", cache, imageDir, "--to", "v1.15.11"); code != 0 {
		t.Fatalf("image upgrade: exit %d\n%s\n%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(m.Pkg("kubeovn", "images/kubeovn/Dockerfile")); !strings.Contains(string(b), "ARG TAG=v1.15.11\n") {
		t.Errorf("Dockerfile after the image upgrade:\n%s", b)
	}
	code, out, errOut = run(t, "verify", "--root", m.Root, "--cache-dir", cache, chartDir, "-o", "json")
	if code != 0 || !strings.Contains(out, `"check": "chart-pin"`) || strings.Contains(out, `"status": "warn"`) {
		t.Errorf("verify of the chart after both upgrades: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = run(t, "verify", "--root", m.Root, "--cache-dir", cache, imageDir)
	if code != 0 || !strings.Contains(out, "pass versions         packages/system/kubeovn/charts/kube-ovn/Chart.yaml:4 holds 1.15.11 (.appVersion)") {
		t.Errorf("verify of the image after both upgrades: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestRevendorWithUpgrade: CHART_VERSION raised by hand without
// re-vendoring fails verify, which names the upgrade that re-vendors it;
// running it makes verify pass.
func TestRevendorWithUpgrade(t *testing.T) {
	m, cache := chartMonorepo(t)
	initRoot(t, m)
	raiseChartVersion(t, m)
	unit := "packages/system/reloader/charts/reloader"
	hint := "patchkit upgrade " + unit + " --to " + charttest.ReloaderNext
	if code, out, _ := run(t, "verify", "--root", m.Root, "--cache-dir", cache, unit); code != 1 || !strings.Contains(out, hint) {
		t.Fatalf("verify: exit %d, want 1 naming %q\n%s", code, hint, out)
	}
	args := append(strings.Fields(hint)[1:], "--root", m.Root, "--cache-dir", cache)
	if code, out, errOut := run(t, args...); code != 0 || !strings.Contains(out, unit+": re-vendored at "+charttest.ReloaderNext+"\n") {
		t.Fatalf("%s: exit %d\n%s\n%s", hint, code, out, errOut)
	}
	if code, out, errOut := run(t, "verify", "--root", m.Root, "--cache-dir", cache, unit); code != 0 {
		t.Fatalf("verify after the upgrade: exit %d\n%s\n%s", code, out, errOut)
	}
}
