package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/spec"
)

// TestVersionChecks: each upstream.versions place passes when it spells the
// pin, fails naming file:line and both values when it does not, and fails
// when it cannot be read.
func TestVersionChecks(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "images", "kubeovn")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("ARG VERSION=\"1.15.9\"\nARG TAG=\"v1.15.10\"\nARG BASE=1.15.10\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte("appVersion: \"1.15.10\"\n"), 0o644)
	s, err := spec.LoadReader(strings.NewReader(`upstream:
  url: file:///u
  ref: {dockerfile-arg: TAG}
  versions:
    - {file: ./Dockerfile, dockerfile-arg: VERSION, spelling: bare}
    - {file: ./Dockerfile, dockerfile-arg: BASE, spelling: bare}
    - {file: ./Chart.yaml, key: .appVersion, spelling: bare}
    - {file: ./Chart.yaml, key: .version}
patches: p
`), root, "kubeovn")
	if err != nil {
		t.Fatal(err)
	}
	got := VersionChecks(root, s, nil)
	want := []struct{ status, msg string }{
		{StatusFail, "images/kubeovn/Dockerfile:1 holds 1.15.9, but the pin v1.15.10 spells 1.15.10 there"},
		{StatusPass, "images/kubeovn/Dockerfile:3 holds 1.15.10 (BASE)"},
		{StatusPass, "images/kubeovn/Chart.yaml:1 holds 1.15.10 (.appVersion)"},
		{StatusFail, "key .version of images/kubeovn/Chart.yaml: cannot read it"},
	}
	if len(got) != len(want) {
		t.Fatalf("VersionChecks() = %+v", got)
	}
	for i, w := range want {
		if got[i].Check != CheckVersions || got[i].Status != w.status || !strings.Contains(got[i].Message, w.msg) || got[i].Line != 5+i {
			t.Errorf("VersionChecks()[%d] = %+v, want %s %q at line %d", i, got[i], w.status, w.msg, 5+i)
		}
	}
}
