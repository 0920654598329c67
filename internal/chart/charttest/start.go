package charttest

import (
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/image/imagetest"
)

// Start starts a registry, builds the monorepo on it, and points git at the
// monorepo's configuration for the rest of the test.
func Start(t *testing.T) *Monorepo {
	t.Helper()
	reg := imagetest.StartRegistry(t)
	m := NewMonorepo(t, reg.Addr)
	t.Setenv("GIT_CONFIG_GLOBAL", m.GitConfig)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	return m
}

// ReloaderCarrying is the reloader release that carries the monorepo's
// startupProbe patch (2.2.0, appVersion v1.3.2).
const ReloaderCarrying = "2.2.0"

// AddReloaderCarrying adds the image unit built from the reloader chart's
// appVersion (v1.3.0) to the monorepo, and to its Helm repository the
// release ReloaderCarrying, whose deployment already has the startupProbe
// the reloader's patch adds. It returns that release's files.
func AddReloaderCarrying(t *testing.T, m *Monorepo) map[string]string {
	t.Helper()
	WriteFiles(t, m.Root, map[string]string{
		"packages/system/reloader/images/reloader/patchkit.yaml": "upstream: {url: https://github.com/stakater/Reloader, ref: v1.3.0}\npatches: patches\nimage: {repository: reloader, tag: v1.3.0}\n",
		"packages/system/reloader/images/reloader/patches/.keep": "",
	})
	carried := ChartFiles("reloader", ReloaderCarrying, "v1.3.2")
	carried["templates/deployment.yaml"] = strings.Replace(carried["templates/deployment.yaml"], "          livenessProbe:", "          startupProbe:\n            httpGet:\n              path: /healthz\n              port: 8080\n          livenessProbe:", 1)
	m.Helm.Add(t, "reloader", ReloaderCarrying, Tgz(t, "reloader", carried))
	return carried
}
