package charttest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// Monorepo is a cozystack-shaped repository with four packages, one per
// form of vendoring, each with a patch its Makefile applies with GNU patch:
//
//	packages/system/reloader  Helm repository, through hack/package.mk's %-update rule
//	packages/system/robotlb   helm pull oci://
//	packages/system/kubeovn   curl .../archive/refs/tags/$TAG.tar.gz | tar -x --strip 1 kube-ovn-X/charts/kube-ovn
//	packages/system/multus    a release asset (wget -O)
type Monorepo struct {
	Root      string
	Helm      *HelmRepo
	Registry  string        // host:port of the OCI registry
	Git       string        // the git upstream's directory (its URL is https://github.com/kubeovn/kube-ovn, rewritten by GIT_CONFIG_GLOBAL)
	GitRepo   *gittest.Repo // the same, to add releases to
	GitConfig string        // a git config file with the insteadOf rule; set GIT_CONFIG_GLOBAL to it
	Assets    *HelmRepo
}

// Upstream versions the monorepo vendors, and the newer ones upstream has.
const (
	ReloaderVersion    = "2.0.0"
	ReloaderNext       = "2.1.0"
	RobotlbVersion     = "0.3.0"
	RobotlbNext        = "0.4.0"
	KubeovnVersion     = "1.15.10"
	KubeovnPrevious    = "1.15.9"
	MultusVersion      = "v4.2.2"
	kubeovnUpstreamURL = "https://github.com/kubeovn/kube-ovn"
)

// NewMonorepo builds the repository and its upstreams. registry is the
// host:port of a running registry (imagetest.StartRegistry).
func NewMonorepo(tb testing.TB, registry string) *Monorepo {
	tb.Helper()
	m := &Monorepo{Root: tb.TempDir(), Registry: registry}
	m.Helm = NewHelmRepo(tb)
	for _, v := range []string{ReloaderVersion, ReloaderNext} {
		m.Helm.Add(tb, "reloader", v, Tgz(tb, "reloader", ChartFiles("reloader", v, "v1.3."+strings.Split(v, ".")[1])))
	}
	for _, v := range []string{RobotlbVersion, RobotlbNext} {
		PushOCI(tb, registry, "charts/robotlb", v, Tgz(tb, "robotlb", ChartFiles("robotlb", v, v)))
	}
	kv := map[string]map[string]string{}
	for _, v := range []string{KubeovnPrevious, KubeovnVersion} {
		f := ChartFiles("kube-ovn", "v"+v, v)
		f["templates/ovn-CR.yaml"] = "kind: ClusterRole\nrules:\n  - apiGroups: [\"kubeovn.io\"]\n    resources: [\"vpcs\", \"subnets\"] # " + v + "\n"
		kv["v"+v] = f
	}
	git := GitUpstream(tb, "charts/kube-ovn", kv, []string{"v" + KubeovnPrevious, "v" + KubeovnVersion})
	m.Git, m.GitRepo = git.Dir, git
	m.GitConfig = filepath.Join(tb.TempDir(), "gitconfig")
	os.WriteFile(m.GitConfig, []byte(fmt.Sprintf("[url %q]\n\tinsteadOf = %s\n", git.URL(), kubeovnUpstreamURL)), 0o644)
	m.Assets = NewHelmRepo(tb)
	asset := "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: kube-multus-ds\nspec:\n  template:\n    spec:\n      containers:\n        - name: kube-multus\n          image: ghcr.io/k8snetworkplumbingwg/multus-cni:snapshot-thick\n          resources:\n            requests:\n              cpu: 100m\n"
	WriteFiles(tb, m.Assets.Dir, map[string]string{"releases/download/" + MultusVersion + "/multus-daemonset-thick.yml": asset})

	WriteFiles(tb, m.Root, map[string]string{
		"hack/package.mk": "%-update:\n\thelm repo add $(REPO_NAME) $(REPO_URL)\n\thelm repo update $(REPO_NAME)\n\thelm pull $(REPO_NAME)/$(CHART_NAME) --untar --untardir charts --version \"$(CHART_VERSION)\"\n\nclean:\n\trm -rf charts/\n",
		"packages/system/reloader/Makefile": fmt.Sprintf(`export NAME=reloader
export REPO_NAME=stakater
export REPO_URL=%s
export CHART_NAME=reloader
export CHART_VERSION=%s

include ../../../hack/package.mk

update: clean reloader-update
	patch --forward --no-backup-if-mismatch -p1 < patches/deployment-startup-probe.diff
`, m.Helm.URL, ReloaderVersion),
		"packages/system/robotlb/Makefile": fmt.Sprintf(`export NAME=robotlb

update:
	rm -rf charts
	helm pull oci://%s/charts/robotlb --untar --untardir charts --version %s
	patch --no-backup-if-mismatch -p4 < patches/values.diff
`, registry, RobotlbVersion),
		"packages/system/kubeovn/Makefile": `KUBEOVN_TAG=$(shell awk '$$1 == "appVersion:" {print $$2}' charts/kube-ovn/Chart.yaml)

update:
	rm -rf charts
	tag=$$(git ls-remote --tags --sort="v:refname" ` + kubeovnUpstreamURL + ` | awk -F'[/^]' '{print $$3}' | grep '^v1\.15\.' | tail -n1) && \
	curl -sSL ` + kubeovnUpstreamURL + `/archive/refs/tags/$${tag}.tar.gz | \
	tar -xzf - --strip 1 kube-ovn-$${tag#*v}/charts/kube-ovn
	patch --no-backup-if-mismatch -p4 < patches/mtu.diff
`,
		"packages/system/kubeovn/images/kubeovn/Dockerfile": "ARG TAG=v" + KubeovnVersion + "\nFROM scratch\n",
		"packages/system/multus/Makefile": fmt.Sprintf(`export NAME=multus
MULTUS_VERSION = %s

update:
	rm -rf templates
	mkdir templates
	wget -q %s/releases/download/$(MULTUS_VERSION)/multus-daemonset-thick.yml -O templates/multus-daemonset-thick.yml
	patch --no-backup-if-mismatch -p4 < patches/customize-deployment.patch
`, MultusVersion, m.Assets.URL[:strings.LastIndex(m.Assets.URL, "/")]),
	})
	// Vendor each: the upstream's files, then the patch applied by the real GNU patch.
	m.vendor(tb, "reloader", "charts/reloader", ChartFiles("reloader", ReloaderVersion, "v1.3.0"), "patches/deployment-startup-probe.diff", 1,
		func(f map[string]string) {
			f["templates/deployment.yaml"] = strings.Replace(f["templates/deployment.yaml"], "          livenessProbe:", "          startupProbe:\n            httpGet:\n              path: /healthz\n              port: 8080\n          livenessProbe:", 1)
		}, "--forward", "--no-backup-if-mismatch", "-p1")
	m.vendor(tb, "robotlb", "charts/robotlb", ChartFiles("robotlb", RobotlbVersion, RobotlbVersion), "patches/values.diff", 4,
		func(f map[string]string) {
			f["values.yaml"] = strings.Replace(f["values.yaml"], "replicas: 1", "replicas: 2", 1)
		},
		"--no-backup-if-mismatch", "-p4")
	m.vendor(tb, "kubeovn", "charts/kube-ovn", kv["v"+KubeovnVersion], "patches/mtu.diff", 4,
		func(f map[string]string) {
			f["values.yaml"] += "mtu: 0\n"
		}, "--no-backup-if-mismatch", "-p4")
	m.vendor(tb, "multus", "templates", map[string]string{"multus-daemonset-thick.yml": asset}, "patches/customize-deployment.patch", 4,
		func(f map[string]string) {
			f["multus-daemonset-thick.yml"] = strings.Replace(f["multus-daemonset-thick.yml"], "cpu: 100m", "cpu: 100m\n              memory: 50Mi", 1)
		}, "--no-backup-if-mismatch", "-p4")
	return m
}

// vendor writes upstream into pkg's dir, makes the patch edit writes as a
// diff -u labelled for strip, and applies it with the real GNU patch.
func (m *Monorepo) vendor(tb testing.TB, pkg, dir string, upstream map[string]string, patch string, strip int, edit func(map[string]string), args ...string) {
	tb.Helper()
	pkgDir := filepath.Join(m.Root, "packages", "system", pkg)
	orig, changed := tb.TempDir(), tb.TempDir()
	edited := map[string]string{}
	for k, v := range upstream {
		edited[k] = v
	}
	edit(edited)
	WriteFiles(tb, orig, upstream)
	WriteFiles(tb, changed, edited)
	prefix := dir
	if strip == 4 {
		prefix = "packages/system/" + pkg + "/" + dir
	}
	WriteFiles(tb, pkgDir, map[string]string{patch: Diff(tb, orig, changed, prefix)})
	vend := map[string]string{}
	for k, v := range upstream {
		vend[dir+"/"+k] = v
	}
	WriteFiles(tb, pkgDir, vend)
	GNUPatch(tb, pkgDir, patch, args...)
}

// Pkg is the path of a package's file.
func (m *Monorepo) Pkg(pkg, rel string) string {
	return filepath.Join(m.Root, "packages", "system", pkg, filepath.FromSlash(rel))
}
