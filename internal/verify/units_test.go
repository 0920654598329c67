package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

const unitSpec = "upstream: {url: x, ref: v1}\npatches: p\n"

func TestUnits(t *testing.T) {
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{
		"images/built/patchkit.yaml":  unitSpec,
		"images/orphan/patchkit.yaml": unitSpec,
		"Makefile":                    "build:\n\t$(MAKE) image IMAGE=built\n\t$(MAKE) image IMAGE=ghost\n",
	})

	checks, orphans, err := Units(root, []string{"built", "orphan"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if c := checks["built"]; c.Status != StatusPass || !strings.Contains(c.Message, "Makefile:2") {
		t.Errorf("built: %+v, want pass naming Makefile:2", c)
	}
	if c := checks["orphan"]; c.Status != StatusFail || !strings.Contains(c.Message, "IMAGE=orphan") || c.Patch != "images/orphan/patchkit.yaml" {
		t.Errorf("orphan: %+v, want a fail telling how to add it", c)
	}
	if len(orphans) != 1 || orphans[0].Image != "ghost" || orphans[0].OK || orphans[0].Checks[0].Line != 3 {
		t.Errorf("units without a spec = %+v, want ghost at Makefile:3", orphans)
	}
	// Named images only: a unit without a spec is not reported.
	if _, orphans, _ := Units(root, []string{"built"}, false); len(orphans) != 0 {
		t.Errorf("Units(named) reported %+v", orphans)
	}
	// Acknowledged in .patchkit.yaml: a skip giving the reason, not a failure.
	os.WriteFile(filepath.Join(root, ".patchkit.yaml"), []byte("unbuilt:\n  - unit: images/orphan\n    reason: a release job builds it\n"), 0o644)
	checks, _, err = Units(root, []string{"orphan"}, true)
	if c := checks["orphan"]; err != nil || c.Status != StatusSkip || c.Message != "not built: a release job builds it (.patchkit.yaml:2)" {
		t.Errorf("acknowledged orphan: %+v, %v; want a skip giving the reason", c, err)
	}
	os.Remove(filepath.Join(root, ".patchkit.yaml"))
	// No Makefile: a warning, not a failure.
	os.Remove(filepath.Join(root, "Makefile"))
	checks, _, err = Units(root, []string{"built"}, true)
	if err != nil || checks["built"].Status != StatusWarn {
		t.Errorf("no Makefile: %+v, %v; want a warning", checks["built"], err)
	}
}

// TestUnitsMonorepo: make -C lines build every unit under their directory,
// as the matrix reads them; a -C line of a package without units is no orphan.
func TestUnitsMonorepo(t *testing.T) {
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{
		"packages/system/linstor/Makefile":                            "image:\n\ttrue\n",
		"packages/system/linstor/images/piraeus-server/patchkit.yaml": unitSpec,
		"packages/system/linstor/images/linstor-csi/patchkit.yaml":    unitSpec,
		"packages/system/kubeovn/Makefile":                            "image:\n\ttrue\n",
		"packages/system/kubeovn/images/kubeovn/patchkit.yaml":        unitSpec,
		".patchkit.yaml": "build: {makefile: ci.mk, target: images}\n",
		"ci.mk":          "images:\n\tmake -C packages/system/linstor image\n\tmake -C packages/apps/http-cache image\n",
	})
	args := []string{"piraeus-server", "linstor-csi", "kubeovn"}
	checks, orphans, err := Units(root, args, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range args[:2] {
		if c := checks[a]; c.Status != StatusPass || c.Message != "built by `make -C packages/system/linstor image` (ci.mk:2)" {
			t.Errorf("%s: %+v, want pass by ci.mk:2", a, c)
		}
	}
	want := "packages/system/kubeovn/images/kubeovn/patchkit.yaml has a spec, but no line of ci.mk's images: target builds it, so its stamped digest would silently freeze: add `make -C packages/system/kubeovn image` to images:"
	if c := checks["kubeovn"]; c.Status != StatusFail || c.Message != want {
		t.Errorf("kubeovn: %+v,\nwant %s", c, want)
	}
	if len(orphans) != 0 {
		t.Errorf("orphans = %+v, want none", orphans)
	}
}

// TestUnitsReleaseBranch: a unit in a release-branch directory of a project
// Makefile that reads its pin from that branch's file (aws/eks-distro's
// projects/<org>/<repo>/<1-NN>/) is built by that Makefile with the branch
// set, whatever the root Makefile lists; a directory beside it without the
// file is not.
func TestUnitsReleaseBranch(t *testing.T) {
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{
		"Makefile":                                 "build:\n\ttrue\n",
		"projects/acme/widget/Makefile":            "GIT_TAG?=$(shell cat $(RELEASE_BRANCH)/GIT_TAG)\ninclude ../../../Common.mk\n",
		"projects/acme/widget/1-30/GIT_TAG":        "v1.3.1\n",
		"projects/acme/widget/1-30/patchkit.yaml":  unitSpec,
		"projects/acme/widget/other/patchkit.yaml": unitSpec,
	})
	checks, _, err := Units(root, []string{"projects/acme/widget/1-30", "projects/acme/widget/other"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if c := checks["projects/acme/widget/1-30"]; c.Status != StatusPass || c.Message != "built by `make -C projects/acme/widget RELEASE_BRANCH=1-30` (projects/acme/widget/Makefile:1 reads projects/acme/widget/1-30/GIT_TAG)" {
		t.Errorf("1-30: %+v, want a pass naming the project Makefile", c)
	}
	if c := checks["projects/acme/widget/other"]; c.Status != StatusFail {
		t.Errorf("other: %+v, want a fail", c)
	}
}
