package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
)

const good = `upstream:
  url: https://github.com/kubeovn/kube-ovn   # any git URL
  ref: v1.15.10
  releases: "v1.15.*"
  branches: [release-1.15, master]
patches: patches/kubeovn
test:
  inject:
    - from: patches/kubeovn/tests/kubevirt_migration_test.go
      to: pkg/controller/kubevirt_migration_test.go
  package: ./pkg/controller
  run: '^TestVMIMigrationSchedulingRetry$'
build:
  builder: auto
  dockerfile: images/kubeovn/Dockerfile
image:
  repository: kubeovn
  tag: v1.15.10
stamp:
  - file: images/kubeovn/values.yaml
    key: .global.images.kubeovn.tag
    format: tag@digest
`

func TestLoadGood(t *testing.T) {
	s, err := LoadReader(strings.NewReader(good), t.TempDir(), "kubeovn")
	if err != nil {
		t.Fatalf("LoadReader() error = %v", err)
	}
	if s.Upstream.Ref != "v1.15.10" || s.Patches != "patches/kubeovn" || len(s.Upstream.Branches) != 2 {
		t.Errorf("LoadReader() = %+v", s)
	}
	if s.Test.Inject[0].To != "pkg/controller/kubevirt_migration_test.go" || s.Stamp[0].Format != "tag@digest" {
		t.Errorf("LoadReader() = %+v", s)
	}
	if got := s.Line("upstream.ref"); got != 3 {
		t.Errorf("Line(upstream.ref) = %d, want 3", got)
	}
}

func TestLoadDefaults(t *testing.T) {
	s, err := LoadReader(strings.NewReader("upstream: {url: file:///x, ref: v1}\npatches: p\nstamp:\n  - {file: v.yaml, key: .a.b}\n"), t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	if s.Build.Builder != DefaultBuilder || s.Stamp[0].Format != DefaultStampFormat {
		t.Errorf("defaults = %q %q", s.Build.Builder, s.Stamp[0].Format)
	}
}

func TestLoadErrors(t *testing.T) {
	base := "upstream:\n  url: file:///u\n  ref: v1\npatches: patches/x\n"
	tests := []struct {
		name     string
		yaml     string
		wantLine int
		wantText string
	}{
		{"unknown top key", base + "colour: red\n", 5, "colour: unknown key"},
		{"unknown nested key", "upstream:\n  url: file:///u\n  ref: v1\n  pin: v2\npatches: p\n", 4, "upstream.pin: unknown key"},
		{"unknown key in list item", base + "stamp:\n  - file: v.yaml\n    key: .a\n    fmt: digest\n", 8, "stamp[0].fmt: unknown key"},
		{"missing url", "upstream:\n  ref: v1\npatches: p\n", 1, "upstream.url: required"},
		{"missing ref", "upstream:\n  url: file:///u\npatches: p\n", 1, "upstream.ref: required"},
		{"missing patches", "upstream:\n  url: file:///u\n  ref: v1\n", 0, "patches: required"},
		{"abbreviated commit", "upstream:\n  url: file:///u\n  ref: a229dec3d\npatches: p\n", 3, "abbreviated commit id"},
		{"patches absolute", "upstream:\n  url: file:///u\n  ref: v1\npatches: /etc\n", 4, "patches: \"/etc\" is absolute"},
		{"patches escape", "upstream:\n  url: file:///u\n  ref: v1\npatches: a/../../x\n", 4, "leaves the repository"},
		{"inject from escape", base + "test:\n  inject:\n    - {from: ../x.go, to: a.go}\n  package: ./a\n", 7, "test.inject[0].from"},
		{"inject to escape", base + "test:\n  inject:\n    - {from: x.go, to: ../a.go}\n  package: ./a\n", 7, "test.inject[0].to"},
		{"inject to .git", base + "test:\n  inject:\n    - {from: x.go, to: .git/hooks/pre-commit}\n  package: ./a\n", 7, "inside .git"},
		{"test package escape", base + "test:\n  package: ../a\n", 6, "test.package"},
		{"bad run regexp", base + "test:\n  package: ./a\n  run: '('\n", 7, "test.run: bad regular expression"},
		{"bad builder", base + "build:\n  builder: kaniko\n", 6, "build.builder: \"kaniko\" is not one of"},
		{"dockerfile escape", base + "build:\n  dockerfile: ../../Dockerfile\n", 6, "build.dockerfile"},
		{"stamp file escape", base + "stamp:\n  - {file: /etc/passwd, key: .a}\n", 6, "stamp[0].file"},
		{"stamp bad format", base + "stamp:\n  - {file: v.yaml, key: .a, format: sha}\n", 6, "stamp[0].format"},
		{"stamp bad key", base + "stamp:\n  - {file: v.yaml, key: a.b}\n", 6, "stamp[0].key"},
		{"wrong type", "upstream:\n  url: file:///u\n  ref: v1\n  branches: main\npatches: p\n", 4, "cannot unmarshal"},
		{"duplicate key", base + "patches: q\n", 5, "duplicate key"},
		{"not a mapping", "- a\n- b\n", 1, "must be a mapping"},
		{"empty", "", 1, "empty"},
		{"syntax error", "upstream: [\n", 1, "did not find expected node"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadReader(strings.NewReader(tt.yaml), t.TempDir(), "x")
			var ie *diag.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("LoadReader() error = %v, want *diag.InputError", err)
			}
			if ie.File != "images/x/patchkit.yaml" {
				t.Errorf("error file = %q, want images/x/patchkit.yaml", ie.File)
			}
			if ie.Line != tt.wantLine {
				t.Errorf("error line = %d, want %d (%v)", ie.Line, tt.wantLine, err)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("error = %q, want it to contain %q", err, tt.wantText)
			}
		})
	}
}

func TestSymlinkEscape(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "patches")); err != nil {
		t.Fatal(err)
	}
	_, err := LoadReader(strings.NewReader("upstream: {url: file:///u, ref: v1}\npatches: patches/x\n"), root, "x")
	if err == nil || !strings.Contains(err.Error(), "through a symlink") {
		t.Fatalf("LoadReader() error = %v, want a symlink escape", err)
	}
}

func TestLoadAndList(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"b", "a"} {
		dir := filepath.Join(root, "images", name)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, FileName), []byte("upstream: {url: file:///u, ref: v1}\npatches: patches/"+name+"\n"), 0o644)
	}
	os.MkdirAll(filepath.Join(root, "images", "nospec"), 0o755)
	names, err := List(root)
	if err != nil || strings.Join(names, ",") != "a,b" {
		t.Fatalf("List() = %v, %v; want [a b]", names, err)
	}
	s, err := Load(root, "b")
	if err != nil || s.Name != "b" || s.Patches != "patches/b" {
		t.Fatalf("Load(b) = %+v, %v", s, err)
	}
	if _, err := Load(root, "missing"); !diag.IsInput(err) || !strings.Contains(err.Error(), "no image \"missing\"") {
		t.Errorf("Load(missing) error = %v", err)
	}
	if _, err := Load(root, "../etc"); !diag.IsInput(err) {
		t.Errorf("Load(../etc) error = %v, want input error", err)
	}
}
