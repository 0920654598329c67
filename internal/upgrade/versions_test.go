package upgrade

import (
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/spec"
)

// TestMoveVersions: the pin and every upstream.versions place move in one
// write set, each place in its own spelling; the file that holds the pin
// (ARG TAG) and another place (ARG VERSION) is one write with both edits,
// and every other byte is kept. Reloaded, the spec reads the new pin and
// every place agrees with it.
func TestMoveVersions(t *testing.T) {
	root := t.TempDir()
	const unit = "packages/system/kubeovn/images/kubeovn"
	files := map[string]string{
		unit + "/patchkit.yaml": `upstream:
  url: https://example.com/kube-ovn
  ref: {dockerfile-arg: TAG}
  versions:
    - {file: ./Dockerfile, dockerfile-arg: VERSION, spelling: bare}
    - {file: ../../charts/kube-ovn/Chart.yaml, key: .appVersion, spelling: bare}
    - {file: ../../charts/kube-ovn/Chart.yaml, key: .version}
    - {file: ../../Makefile, makefile-var: OVN_RELEASE}
patches: ./patches
`,
		unit + "/Dockerfile": "# base\nARG VERSION=\"1.15.10\"\nARG BASE_TAG=v$VERSION\nFROM x\nARG TAG=\"v1.15.10\"\n",
		"packages/system/kubeovn/charts/kube-ovn/Chart.yaml": "apiVersion: v2\nversion: v1.15.10 # chart\nappVersion: \"1.15.10\"\n",
		"packages/system/kubeovn/Makefile":                   "OVN_RELEASE := v1.15.10\nimage:\n\tdocker build images/kubeovn\n",
		unit + "/patches/0001-x.diff":                        "",
	}
	gittest.WriteFiles(t, root, files)
	s, err := spec.Load(root, unit)
	if err != nil {
		t.Fatal(err)
	}
	file, data, err := PinFor(root, s).Move("v1.15.11")
	if err != nil {
		t.Fatal(err)
	}
	writes, err := moveVersions(root, s, "v1.15.11", nil, []Write{{Path: file, Data: data}})
	if err != nil {
		t.Fatalf("moveVersions() error = %v", err)
	}
	want := map[string]string{
		unit + "/Dockerfile": "# base\nARG VERSION=\"1.15.11\"\nARG BASE_TAG=v$VERSION\nFROM x\nARG TAG=\"v1.15.11\"\n",
		"packages/system/kubeovn/charts/kube-ovn/Chart.yaml": "apiVersion: v2\nversion: v1.15.11 # chart\nappVersion: \"1.15.11\"\n",
		"packages/system/kubeovn/Makefile":                   "OVN_RELEASE := v1.15.11\nimage:\n\tdocker build images/kubeovn\n",
	}
	if len(writes) != len(want) {
		t.Fatalf("moveVersions() = %d writes, want %d (one per file): %+v", len(writes), len(want), writes)
	}
	for _, w := range writes {
		if string(w.Data) != want[w.Path] {
			t.Errorf("%s = %q, want %q", w.Path, w.Data, want[w.Path])
		}
	}
	res := &Result{Writes: writes}
	if err := res.Apply(root); err != nil {
		t.Fatal(err)
	}
	s, err = spec.Load(root, unit)
	if err != nil || s.Upstream.Ref != "v1.15.11" {
		t.Fatalf("reloaded pin = %v, %v", s, err)
	}
	for _, v := range s.Upstream.Versions {
		if got, _, err := spec.ReadVersion(root, v); err != nil || got != v.Spell("v1.15.11") {
			t.Errorf("%s = %q, %v; want %q", v, got, err, v.Spell("v1.15.11"))
		}
	}
}

// TestSetVersionRefusesAReference: a place whose value names another
// variable is not moved silently.
func TestSetVersionRefusesAReference(t *testing.T) {
	_, err := SetVersion([]byte("ARG V=1\nARG BASE=v${V}x\n"), spec.Version{File: "Dockerfile", DockerfileArg: "BASE"}, "v2")
	if err == nil {
		t.Fatal("SetVersion(a reference) = nil error")
	}
}
