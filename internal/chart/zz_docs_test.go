package chart

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/chart/charttest"
)

func TestZZDocs(t *testing.T) {
	if os.Getenv("PK_DOCS") == "" {
		return
	}
	m := newMonorepo(t)
	bin, _ := filepath.Abs("../../bin/patchkit")
	cache := filepath.Join(t.TempDir(), "cache")
	run := func(args ...string) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = m.Root
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		t.Logf("$ patchkit %s\n%s(exit %d)\n", strings.Join(args, " "), out, code)
	}
	charttest.WriteFiles(t, m.Root, map[string]string{
		"packages/system/orphan/Makefile":          "update:\n\techo nothing\n",
		"packages/system/orphan/patches/lost.diff": "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
	})
	b, _ := os.ReadFile(m.Pkg("reloader", "Makefile"))
	t.Logf("reloader Makefile:\n%s", b)
	run("init", "--dry-run")
	os.RemoveAll(filepath.Join(m.Root, "packages/system/orphan"))
	run("init")
	b, _ = os.ReadFile(m.Pkg("reloader", FileName))
	t.Logf("reloader spec:\n%s", b)
	b, _ = os.ReadFile(m.Pkg("kubeovn", FileName))
	t.Logf("kubeovn spec:\n%s", b)
	run("init", "-o", "json", "--dry-run")
	run("--cache-dir", cache, "verify")
	p := m.Pkg("reloader", "charts/reloader/values.yaml")
	b, _ = os.ReadFile(p)
	os.WriteFile(p, append(b, "extra: true\n"...), 0o644)
	run("--cache-dir", cache, "verify", "packages/system/reloader/charts/reloader")
	os.WriteFile(p, b, 0o644)
	mk := m.Pkg("reloader", "Makefile")
	b, _ = os.ReadFile(mk)
	os.WriteFile(mk, []byte(strings.Replace(string(b), "CHART_VERSION=2.0.0", "CHART_VERSION=2.1.0", 1)), 0o644)
	run("--cache-dir", cache, "verify", "packages/system/reloader/charts/reloader")
	os.WriteFile(mk, b, 0o644)
	pp := m.Pkg("robotlb", "patches/values.diff")
	b, _ = os.ReadFile(pp)
	os.WriteFile(pp, []byte(strings.Replace(string(b), "--- a/", "index 0000000..0000001 100644\n--- a/", 1)), 0o644)
	run("--cache-dir", cache, "verify", "packages/system/robotlb/charts/robotlb", "-o", "json")
}
