package spec

import (
	"reflect"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

func TestLoadRepo(t *testing.T) {
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{"hack/common.mk": "", "go.mod": ""})
	r, err := LoadRepo(root)
	if err != nil {
		t.Fatal(err)
	}
	if r.File != "" || r.Build.Makefile != "Makefile" || r.Build.Target != "build" {
		t.Errorf("LoadRepo(no file) = %+v, want the defaults", r)
	}
	if got, want := r.SharedInputs(), []string{"Makefile", ".patchkit.yaml"}; !reflect.DeepEqual(got, want) {
		t.Errorf("SharedInputs() = %q, want %q", got, want)
	}
	gittest.WriteFiles(t, root, map[string]string{RepoFileName: "build: {makefile: ./ci/Makefile, target: images}\nshared: [hack/*.mk, ./go.mod]\n"})
	r, err = LoadRepo(root)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.SharedInputs(), []string{"ci/Makefile", ".patchkit.yaml", "hack/*.mk", "go.mod"}; !reflect.DeepEqual(got, want) || r.Build.Target != "images" {
		t.Errorf("LoadRepo() = %+v, shared %q, want %q", r, got, want)
	}

	for _, tc := range []struct{ name, body, want string }{
		{"unknown key", "build:\n  makefile: Makefile\n  targte: x\n", ".patchkit.yaml:3: build.targte: unknown key (known keys here: makefile, target)"},
		{"unknown top key", "shard: [a]\n", ".patchkit.yaml:1: shard: unknown key"},
		{"bad glob", "shared:\n  - go.mod\n  - 'hack/[.mk'\n", ".patchkit.yaml:3: shared[1]: bad glob"},
		{"missing path", "shared: [go.sum]\n", `.patchkit.yaml:1: shared[0]: "go.sum" does not exist`},
		{"leaves the repo", "exclude: [../x]\n", `.patchkit.yaml:1: exclude[0]: "../x" leaves the repository`},
		{"stamps is no key", "stamps:\n  stale: fail\n", ".patchkit.yaml:1: stamps: unknown key (known keys here: build, shared, exclude, unbuilt, headers)"},
		{"header policy", "headers:\n  policy: strict\n", `.patchkit.yaml:2: headers.policy: "strict" is not required, warn or off`},
		{"header unit policy", "headers:\n  units:\n    - unit: hack/*\n      policy: fail\n", `.patchkit.yaml:4: headers.units[0].policy: "fail" is not required, warn or off`},
		{"header unit missing", "headers:\n  units:\n    - unit: nowhere\n      policy: off\n", `.patchkit.yaml:3: headers.units[0].unit: "nowhere" does not exist`},
		{"target", "build: {target: 'a b'}\n", `.patchkit.yaml:1: build.target: "a b" is not a Makefile target name`},
		{"not a mapping", "- a\n", ".patchkit.yaml:1: must be a mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadRepoReader(strings.NewReader(tc.body), root)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("LoadRepoReader() error = %v, want prefix %q", err, tc.want)
			}
		})
	}
}

func TestInputs(t *testing.T) {
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{
		"packages/seaweedfs/values.yaml":        "",
		"packages/os/images/cosi/patchkit.yaml": minimal + "inputs:\n  - ../../../seaweedfs/values.yaml\n  - packages/*/Chart.yaml\n",
	})
	s, err := Load(root, "cosi")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"packages/seaweedfs/values.yaml", "packages/*/Chart.yaml"}; !reflect.DeepEqual(s.Inputs, want) {
		t.Errorf("Inputs = %q, want %q", s.Inputs, want)
	}
	for _, tc := range []struct{ in, want string }{
		{"[../../../seaweedfs/nope.yaml]", `packages/os/images/cosi/patchkit.yaml:3: inputs[0]: "packages/seaweedfs/nope.yaml" does not exist`},
		{"[/etc/passwd]", `packages/os/images/cosi/patchkit.yaml:3: inputs[0]: "/etc/passwd" is absolute`},
		{"['a/**/b']", `packages/os/images/cosi/patchkit.yaml:3: inputs[0]: "a/**/b": ** is not supported`},
	} {
		gittest.WriteFiles(t, root, map[string]string{"packages/os/images/cosi/patchkit.yaml": minimal + "inputs: " + tc.in + "\n"})
		if _, err := Load(root, "cosi"); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Load(inputs: %s) error = %v, want %q", tc.in, err, tc.want)
		}
	}
}
