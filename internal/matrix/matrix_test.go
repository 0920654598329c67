package matrix

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"

	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/stamp"
)

func TestEntryLines(t *testing.T) {
	mk := `# units
VAR := build
build: deps
	$(MAKE) image IMAGE=alpha
	@make image IMAGE=beta PUSH=1
	+${MAKE} -C . image IMAGE=gamma REGISTRY=r
	make -j2 image REGISTRY=x IMAGE=delta.v2
	# make image IMAGE=commented
	echo make image IMAGE=notmake
	$(MAKE) image-push IMAGE=nope
	make -C packages/system/kamaji image
	$(MAKE) -C packages/apps/http-cache image
	make --directory=packages/x image PUSH=1
	make -Cpackages/y image
	make -C packages/core/installer manifests
	make -C $(PKG) image
	make -C packages/z \
		image

	make image IMAGE=after-blank
image:
	make image IMAGE=other-target
build-all:
	make image IMAGE=wrong-target
`
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{"Makefile": mk})
	repo := loadRepo(t, root)
	e, err := ReadEntry(root, repo)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range e.Lines {
		if l.Image != "" {
			got = append(got, "IMAGE="+l.Image)
		} else {
			got = append(got, "-C "+l.Dir)
		}
	}
	want := []string{"IMAGE=alpha", "IMAGE=beta", "IMAGE=gamma", "IMAGE=delta.v2",
		"-C packages/system/kamaji", "-C packages/apps/http-cache", "-C packages/x", "-C packages/y", "-C packages/z", "IMAGE=after-blank"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReadEntry() lines = %q, want %q", got, want)
	}
	if e.Lines[0].N != 4 || e.Lines[4].N != 11 {
		t.Errorf("line numbers = %d, %d, want 4, 11", e.Lines[0].N, e.Lines[4].N)
	}

	for _, tc := range []struct{ name, mk, want string }{
		{"image twice", "build:\n\tmake image IMAGE=a\n\tmake image IMAGE=a\n", "Makefile:3: IMAGE=a is built twice by build: (first at line 2)"},
		{"dir twice", "build:\n\tmake -C p/a image\n\tmake -C p/a/ image\n", "Makefile:3: -C p/a is built twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gittest.WriteFiles(t, root, map[string]string{"Makefile": tc.mk})
			if _, err := ReadEntry(root, repo); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadEntry() error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestBuiltBy(t *testing.T) {
	e := &Entry{Makefile: "Makefile", Exists: true, Lines: []Line{
		{N: 2, Dir: "packages/system/linstor"},
		{N: 3, Dir: "packages/system"},
		{N: 4, Image: "kubeovn"},
		{N: 5, Image: "packages/extra/images/kilo"},
	}}
	for _, tc := range []struct {
		dir  string
		want int // line, 0 for none
	}{
		{"packages/system/linstor/images/piraeus-server", 2},
		{"packages/system/linstor/images/linstor-csi", 2},
		{"packages/system/kamaji/images/kamaji", 3},
		{"packages/system-x/images/a", 0},
		{"images/kubeovn", 4},
		{"packages/system/kubeovn/images/kubeovn", 4},
		{"packages/extra/images/kilo", 5},
		{"other/images/kilo", 0},
	} {
		u := spec.Unit{Name: filepath.Base(tc.dir), Dir: tc.dir}
		l, ok := e.BuiltBy(u)
		if got := map[bool]int{true: l.N}[ok]; got != tc.want {
			t.Errorf("BuiltBy(%s) = line %d, want %d", tc.dir, got, tc.want)
		}
	}
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"packages/library", "packages/library/cozy-lib/templates/_x.tpl", true},
		{"packages/library/", "packages/library/cozy-lib/Chart.yaml", true},
		{"packages/library", "packages/library-x/a", false},
		{"hack/*.mk", "hack/common-envs.mk", true},
		{"hack/*.mk", "hack/sub/x.mk", false},
		{"go.mod", "go.mod", true},
		{"go.mod", "sub/go.mod", false},
		{"./packages/*/seaweedfs/values.yaml", "packages/system/seaweedfs/values.yaml", true},
		{"packages/*/kamaji", "packages/system/kamaji/images/kamaji/Dockerfile", true},
	} {
		if got := Match(tc.pattern, tc.path); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}

const kamajiSpec = `upstream:
  url: https://github.com/clastix/kamaji
  ref: {makefile-var: KAMAJI_VERSION, makefile: ../../Makefile}
patches: ./patches
build: {dockerfile: ./Dockerfile, context: unit}
stamp:
  - {file: ../../values.yaml, key: .kamaji.image.tag}
`

const osSpec = `upstream: {url: https://github.com/x/cosi, ref: v0.2.0}
patches: ./patches
inputs: [../../../seaweedfs/values.yaml]
`

// monorepo writes a repository in cozystack's shape: package directories
// built by `make -C packages/... image` lines, a shared library chart and
// build macros declared in .patchkit.yaml, a pin in a package Makefile, a
// cross-package input, and a patched unit nothing builds.
func monorepo(t *testing.T) string {
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{
		".patchkit.yaml": "shared: [packages/library, hack/*.mk, go.mod]\nexclude: [packages/core/installer]\n",
		"Makefile": "include hack/common-envs.mk\nbuild: build-deps\n" +
			"\tmake -C packages/apps/http-cache image\n" +
			"\tmake -C packages/system/kamaji image\n" +
			"\tmake -C packages/system/objectstorage-controller image\n" +
			"\tmake -C packages/core/installer image\n" +
			"\tmake manifests\n",
		"hack/common-envs.mk":                                                 "REGISTRY ?= ghcr.io/x\n",
		"hack/other.sh":                                                       "",
		"go.mod":                                                              "module x\n",
		"packages/library/cozy-lib/Chart.yaml":                                "name: cozy-lib\n",
		"packages/apps/http-cache/Makefile":                                   "image:\n\tdocker build .\n",
		"packages/apps/http-cache/templates/a.yaml":                           "",
		"packages/system/kamaji/Makefile":                                     "KAMAJI_VERSION ?= 26.3.6-edge\nimage:\n\tdocker buildx build images/kamaji\n",
		"packages/system/kamaji/values.yaml":                                  "kamaji:\n  image:\n    tag: x\n",
		"packages/system/kamaji/templates/deploy.yaml":                        "",
		"packages/system/kamaji/images/kamaji/patchkit.yaml":                  kamajiSpec,
		"packages/system/kamaji/images/kamaji/Dockerfile":                     "FROM scratch\n",
		"packages/system/kamaji/images/kamaji/patches/1.diff":                 "",
		"packages/system/objectstorage-controller/Makefile":                   "image:\n\ttrue\n",
		"packages/system/objectstorage-controller/images/cosi/patchkit.yaml":  osSpec,
		"packages/system/objectstorage-controller/images/cosi/patches/1.diff": "",
		"packages/system/seaweedfs/values.yaml":                               "seaweedfs: {}\n",
		"packages/system/seaweedfs/templates/a.yaml":                          "",
		"packages/system/kubeovn/Makefile":                                    "image:\n\ttrue\n",
		"packages/system/kubeovn/images/kubeovn/patchkit.yaml":                "upstream: {url: https://github.com/kubeovn/kube-ovn, ref: v1.15.10}\npatches: ./patches\n",
		"packages/system/kubeovn/images/kubeovn/patches/0001-fix.diff":        "",
		"packages/core/installer/Makefile":                                    "image:\n\ttrue\n",
		"packages/core/installer/images/inst/patchkit.yaml":                   "upstream: {url: https://github.com/x/inst, ref: v1}\npatches: ./patches\n",
		"packages/core/installer/images/inst/patches/1.diff":                  "",
	})
	return root
}

// loadRepo reads the repository at root.
func loadRepo(t *testing.T, root string) *spec.Repo {
	t.Helper()
	repo, err := spec.LoadRepo(root)
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

// loadPlan loads the build plan of the repository at root.
func loadPlan(t *testing.T, root string) *Plan {
	t.Helper()
	plan, err := Load(root, loadRepo(t, root))
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

func TestSelect(t *testing.T) {
	root := monorepo(t)
	plan := loadPlan(t, root)
	const (
		kamaji = "packages/system/kamaji/images/kamaji"
		cosi   = "packages/system/objectstorage-controller/images/cosi"
	)
	for _, tc := range []struct {
		name    string
		changed []string
		full    bool
		by      string
		want    []string
		unbuilt string // the unit dir reported unbuilt, if any
	}{
		{name: "a patch", changed: []string{kamaji + "/patches/1.diff"}, want: []string{kamaji}},
		{name: "the package Makefile (the pin)", changed: []string{"packages/system/kamaji/Makefile"}, want: []string{kamaji}},
		{name: "the stamp target", changed: []string{"packages/system/kamaji/values.yaml"}, want: []string{kamaji}},
		{name: "a chart template selects no unit", changed: []string{"packages/system/kamaji/templates/deploy.yaml"}, want: []string{}},
		{name: "a chart template selects its build dir", by: ByBuildDir, changed: []string{"packages/system/kamaji/templates/deploy.yaml"}, want: []string{"packages/system/kamaji"}},
		{name: "a unit by its build dir", by: ByBuildDir, changed: []string{kamaji + "/Dockerfile"}, want: []string{"packages/system/kamaji"}},
		{name: "a package without a unit, by build dir", by: ByBuildDir, changed: []string{"packages/apps/http-cache/templates/a.yaml"}, want: []string{"packages/apps/http-cache"}},
		{name: "a cross-package input", changed: []string{"packages/system/seaweedfs/values.yaml"}, want: []string{cosi}},
		{name: "another file of that package", changed: []string{"packages/system/seaweedfs/templates/a.yaml"}, want: []string{}},
		{name: "a shared glob", changed: []string{"hack/common-envs.mk"}, want: []string{kamaji, cosi}, unbuilt: "packages/system/kubeovn/images/kubeovn"},
		{name: "a shared directory, by build dir", by: ByBuildDir, changed: []string{"packages/library/cozy-lib/Chart.yaml"},
			want: []string{"packages/apps/http-cache", "packages/system/kamaji", "packages/system/objectstorage-controller"}, unbuilt: "packages/system/kubeovn/images/kubeovn"},
		{name: "the root Makefile is shared", changed: []string{"Makefile"}, want: []string{kamaji, cosi}, unbuilt: "packages/system/kubeovn/images/kubeovn"},
		{name: "not shared", changed: []string{"hack/other.sh", "README.md"}, want: []string{}},
		{name: "excluded", changed: []string{"packages/core/installer/images/inst/patches/1.diff"}, want: []string{}},
		{name: "unbuilt patched unit", changed: []string{"packages/system/kubeovn/images/kubeovn/patches/0001-fix.diff"}, want: []string{}, unbuilt: "packages/system/kubeovn/images/kubeovn"},
		{name: "stamp records select nothing", changed: []string{"packages/system/kamaji/" + stamp.RecordName}, want: []string{}},
		{name: "FULL", full: true, want: []string{kamaji, cosi}, unbuilt: "packages/system/kubeovn/images/kubeovn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			by := tc.by
			if by == "" {
				by = ByUnit
			}
			sel := plan.Select(root, tc.changed, tc.full, by)
			if !reflect.DeepEqual(sel.Paths, tc.want) {
				t.Errorf("Select(%q).Paths = %q, want %q", tc.changed, sel.Paths, tc.want)
			}
			var unbuilt string
			if len(sel.Unbuilt) > 0 {
				unbuilt = sel.Unbuilt[0].Unit.Dir
			}
			if unbuilt != tc.unbuilt || len(sel.Unbuilt) > 1 {
				t.Errorf("Select(%q).Unbuilt = %+v, want %q", tc.changed, sel.Unbuilt, tc.unbuilt)
			}
		})
	}
	sel := plan.Select(root, []string{"packages/system/kubeovn/images/kubeovn/patches/0001-fix.diff"}, false, ByUnit)
	err := sel.Err(plan.Entry)
	want := "packages/system/kubeovn/images/kubeovn: selected by packages/system/kubeovn/images/kubeovn/patches/0001-fix.diff, but no line of Makefile's build: target builds it, so CI would never build it: add `make -C packages/system/kubeovn image`"
	if err == nil || err.Error() != want || !IsUnbuilt(err) {
		t.Errorf("Err() = %v,\nwant %s", err, want)
	}
}

func TestLoadBadInputs(t *testing.T) {
	root := monorepo(t)
	gittest.WriteFiles(t, root, map[string]string{"packages/system/objectstorage-controller/images/cosi/patchkit.yaml": strings.Replace(osSpec, "seaweedfs/values.yaml", "seaweedfs/valeus.yaml", 1)})
	_, err := Load(root, loadRepo(t, root))
	if err == nil || !strings.Contains(err.Error(), "packages/system/objectstorage-controller/images/cosi/patchkit.yaml:3: inputs[0]: \"packages/system/seaweedfs/valeus.yaml\" does not exist") {
		t.Errorf("Load() error = %v, want the missing input named with file:line:key", err)
	}
}

func TestParseChanged(t *testing.T) {
	got := ParseChanged([]byte("./a/b\n\n# c\n  d/e  \n"))
	if strings.Join(got, "|") != "a/b|d/e" {
		t.Errorf("ParseChanged() = %q", got)
	}
}

// TestDirectoryInput: "a change under another package rebuilds this unit"
// is a directory in inputs: (docs/ci.md): any file under it selects the
// unit, by its directory and by its build line's directory.
func TestDirectoryInput(t *testing.T) {
	root := monorepo(t)
	const cosi = "packages/system/objectstorage-controller/images/cosi"
	file := filepath.Join(root, cosi, "patchkit.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(regexp.MustCompile(`(?m)^inputs:.*\n(  - .*\n)*`).ReplaceAllString(string(data), "")+"inputs: [../../../seaweedfs]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := loadPlan(t, root)
	for _, by := range []string{ByUnit, ByBuildDir} {
		want := cosi
		if by == ByBuildDir {
			want = "packages/system/objectstorage-controller"
		}
		for _, changed := range []string{"packages/system/seaweedfs/templates/a.yaml", "packages/system/seaweedfs/values.yaml"} {
			sel := plan.Select(root, []string{changed}, false, by)
			if !reflect.DeepEqual(sel.Paths, []string{want}) {
				t.Errorf("Select(%s, by %s) = %q, want [%s]", changed, by, sel.Paths, want)
			}
		}
	}
}
