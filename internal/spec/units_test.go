package spec

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"

	"github.com/patchkit/patchkit/internal/diag"
)

const minimal = "upstream: {url: file:///u, ref: v1}\npatches: ./patches\n"

func TestDiscoverAndFind(t *testing.T) {
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{
		"images/kubeovn/patchkit.yaml":                           minimal,
		"packages/system/kamaji/images/kamaji/patchkit.yaml":     minimal,
		"packages/a/images/dup/patchkit.yaml":                    minimal,
		"packages/b/images/dup/patchkit.yaml":                    minimal,
		"vendor/x/images/vendored/patchkit.yaml":                 minimal,
		"node_modules/y/patchkit.yaml":                           minimal,
		"_output/kubeovn/patchkit.yaml":                          minimal,
		"packages/system/kamaji/images/kamaji/patches/0001.diff": "",
	})
	units, dirs := discover(t, root)
	wantDirs := []string{"images/kubeovn", "packages/a/images/dup", "packages/b/images/dup", "packages/system/kamaji/images/kamaji"}
	if !reflect.DeepEqual(dirs, wantDirs) {
		t.Fatalf("Discover() = %q, want %q", dirs, wantDirs)
	}
	if got, want := Args(units), []string{"kamaji", "kubeovn", "packages/a/images/dup", "packages/b/images/dup"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Args() = %q, want %q", got, want)
	}
	tests := []struct {
		arg, wantDir, wantErr string
	}{
		{"kubeovn", "images/kubeovn", ""},
		{"kamaji", "packages/system/kamaji/images/kamaji", ""},
		{"packages/system/kamaji/images/kamaji", "packages/system/kamaji/images/kamaji", ""},
		{"./packages/a/images/dup/", "packages/a/images/dup", ""},
		{"dup", "", "ambiguous: name one of packages/a/images/dup, packages/b/images/dup"},
		{"nope", "", `no image "nope": no unit is named nope (the repository has 4 units; name one by its directory or its name)`},
		{"kube-ovn", "", `no image "kube-ovn": no unit is named kube-ovn: did you mean images/kubeovn? (the repository has 4 units`},
		{"kamaj", "", "did you mean packages/system/kamaji/images/kamaji?"},
		{"packages/nope", "", "no packages/nope/patchkit.yaml"},
		{"../x", "", "not a unit directory inside the repository"},
		{"vendored", "", `no image "vendored"`},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			u, err := Find(root, tt.arg)
			if tt.wantErr != "" {
				if !diag.IsInput(err) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Find(%q) = %v, want bad input containing %q", tt.arg, err, tt.wantErr)
				}
				return
			}
			if err != nil || u.Dir != tt.wantDir {
				t.Fatalf("Find(%q) = %+v, %v, want %s", tt.arg, u, err, tt.wantDir)
			}
		})
	}
	s, err := Load(root, "kamaji")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "kamaji" || s.Patches != "packages/system/kamaji/images/kamaji/patches" || s.File != "packages/system/kamaji/images/kamaji/patchkit.yaml" {
		t.Errorf("Load(kamaji) = name %s, patches %s, file %s", s.Name, s.Patches, s.File)
	}
}

func TestPinSources(t *testing.T) {
	const unit = "packages/sys/linstor/images/app/"
	files := map[string]string{
		unit + "Dockerfile":             "ARG BASE=1.2\nFROM x\nARG TAG=\"v${BASE}.3\"\nARG NODEF\n",
		"packages/sys/linstor/Makefile": "include ../../../hack/x.mk\nVER ?= 1.33.3\nCOMPUTED = $(shell cat VERSION)\nNESTED := $(VER)-rc\n",
	}
	tests := []struct {
		name, ref, want, wantErr string
	}{
		{"literal", "v9", "v9", ""},
		{"dockerfile arg, expanded", "{dockerfile-arg: TAG}", "v1.2.3", ""},
		{"makefile var with prefix", "{makefile-var: VER, makefile: ../../Makefile, prefix: v}", "v1.33.3", ""},
		{"root-relative makefile", "{makefile-var: NESTED, makefile: packages/sys/linstor/Makefile}", "1.33.3-rc", ""},
		{"computed", "{makefile-var: COMPUTED, makefile: ../../Makefile}", "", "packages/sys/linstor/Makefile:3: upstream.ref: COMPUTED is computed by $(shell ...)"},
		{"no default", "{dockerfile-arg: NODEF}", "", unit + "Dockerfile:4: upstream.ref: ARG NODEF has no default"},
		{"missing arg", "{dockerfile-arg: NOPE}", "", "no ARG NOPE"},
		{"missing makefile", "{makefile-var: VER}", "", "upstream.ref.makefile: required"},
		{"both", "{makefile-var: VER, makefile: ../../Makefile, dockerfile-arg: TAG}", "", "not both"},
		{"unknown key", "{dockerfile-args: TAG}", "", "unknown key"},
		{"escape", "{makefile-var: VER, makefile: ../../../../../../Makefile}", "", "leaves the repository"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			gittest.WriteFiles(t, root, files)
			gittest.WriteFiles(t, root, map[string]string{unit + FileName: "upstream:\n  url: file:///u\n  ref: " + tt.ref + "\npatches: ./patches\n"})
			s, err := Load(root, unit)
			if tt.wantErr != "" {
				if !diag.IsInput(err) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Load() = %v, want bad input containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || s.Upstream.Ref != tt.want {
				t.Fatalf("Load() ref = %q, %v, want %q", s.Upstream.Ref, err, tt.want)
			}
		})
	}
}

func TestDiscoverSkipsNestedRepositories(t *testing.T) {
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{
		RepoFileName:                            "",
		"images/a/patchkit.yaml":                minimal,
		"examples/demo/" + RepoFileName:         "",
		"examples/demo/images/b/patchkit.yaml":  minimal,
		"examples/other/images/c/patchkit.yaml": minimal,
	})
	_, dirs := discover(t, root)
	if want := []string{"examples/other/images/c", "images/a"}; !reflect.DeepEqual(dirs, want) {
		t.Errorf("Discover() = %q, want %q", dirs, want)
	}
	// From the nested root, its units are found.
	if units, err := Discover(filepath.Join(root, "examples/demo")); err != nil || len(units) != 1 || units[0].Dir != "images/b" {
		t.Errorf("Discover(nested) = %+v, %v", units, err)
	}
}

// discover runs Discover on root, failing the test on an error, and returns
// the units with their directories.
func discover(t *testing.T, root string) ([]Unit, []string) {
	t.Helper()
	units, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, u := range units {
		dirs = append(dirs, u.Dir)
	}
	return units, dirs
}
