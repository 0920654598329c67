package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVersions(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "images", "kubeovn")
	os.MkdirAll(filepath.Join(dir, "chart"), 0o755)
	os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("ARG VERSION=\"1.15.10\"\nARG TAG=\"v1.15.10\"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte("KUBEOVN_VERSION ?= v1.15.9 # old\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "chart", "Chart.yaml"), []byte("name: kube-ovn\nversion: v1.15.10\nappVersion: \"1.15.10\"\n"), 0o644)
	yml := `upstream:
  url: file:///u
  ref: {dockerfile-arg: TAG}
  versions:
    - {file: ./Dockerfile, dockerfile-arg: VERSION, spelling: bare}
    - {file: ./chart/Chart.yaml, key: .appVersion, spelling: bare}
    - {file: ./chart/Chart.yaml, key: .version}
    - {file: images/kubeovn/Makefile, makefile-var: KUBEOVN_VERSION, spelling: v}
patches: p
`
	s, err := LoadReader(strings.NewReader(yml), root, "kubeovn")
	if err != nil {
		t.Fatal(err)
	}
	if s.Upstream.Ref != "v1.15.10" || len(s.Upstream.Versions) != 4 {
		t.Fatalf("LoadReader() = %+v", s.Upstream)
	}
	want := []struct {
		file, value, spelled string
		line                 int
	}{
		{"images/kubeovn/Dockerfile", "1.15.10", "1.15.10", 1},
		{"images/kubeovn/chart/Chart.yaml", "1.15.10", "1.15.10", 3},
		{"images/kubeovn/chart/Chart.yaml", "v1.15.10", "v1.15.10", 2},
		{"images/kubeovn/Makefile", "v1.15.9", "v1.15.10", 1},
	}
	for i, w := range want {
		v := s.Upstream.Versions[i]
		got, line, err := ReadVersion(root, v)
		if v.File != w.file || err != nil || got != w.value || line != w.line {
			t.Errorf("ReadVersion(%s) = %q, %d, %v; want %s %q line %d", v, got, line, err, w.file, w.value, w.line)
		}
		if sp := v.Spell(s.Upstream.Ref); sp != w.spelled {
			t.Errorf("%s.Spell(%s) = %q, want %q", v, s.Upstream.Ref, sp, w.spelled)
		}
	}

	bad := []struct{ name, entry, want string }{
		{"two kinds", "{file: ./Dockerfile, dockerfile-arg: A, key: .a}", "upstream.versions[0]: give exactly one of"},
		{"no file", "{dockerfile-arg: A}", "upstream.versions[0].file: required"},
		{"escapes", "{file: ../../../x, key: .a}", "upstream.versions[0].file"},
		{"bad spelling", "{file: ./Dockerfile, dockerfile-arg: A, spelling: V}", `upstream.versions[0].spelling: "V" is not one of pin, bare, v`},
		{"bad key", "{file: ./Dockerfile, key: a}", "upstream.versions[0].key"},
		{"unknown key", "{file: ./Dockerfile, arg: A}", "upstream.versions[0].arg: unknown key"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadReader(strings.NewReader("upstream:\n  url: file:///u\n  ref: v1\n  versions:\n    - "+tt.entry+"\npatches: p\n"), root, "kubeovn")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("LoadReader() = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestAbbreviatedPin: an abbreviated commit id is a pin (upstream resolves
// it, see upstream.Cache.Resolve), kept as the repository spells it.
func TestAbbreviatedPin(t *testing.T) {
	s, err := LoadReader(strings.NewReader("upstream:\n  url: file:///u\n  ref: facbc36\npatches: p\n"), t.TempDir(), "x")
	if err != nil || s.Upstream.Ref != "facbc36" {
		t.Fatalf("LoadReader(ref: facbc36) = %v, %v", s, err)
	}
	for ref, want := range map[string]bool{"facbc36": true, strings.Repeat("a", 40): true, "v1.15.10": false, "abc12": false, "deadbeefcafe": true} {
		if got := IsCommitPin(ref); got != want {
			t.Errorf("IsCommitPin(%q) = %v, want %v", ref, got, want)
		}
	}
}
