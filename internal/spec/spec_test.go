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
		{"patches absolute", "upstream:\n  url: file:///u\n  ref: v1\npatches: /etc\n", 4, "patches: \"/etc\" is absolute"},
		{"patches escape", "upstream:\n  url: file:///u\n  ref: v1\npatches: a/../../x\n", 4, "leaves the repository"},
		{"inject from escape", base + "test:\n  inject:\n    - {from: ../../../x.go, to: a.go}\n  package: ./a\n", 7, "test.inject[0].from"},
		{"inject to escape", base + "test:\n  inject:\n    - {from: x.go, to: ../a.go}\n  package: ./a\n", 7, "test.inject[0].to"},
		{"inject to .git", base + "test:\n  inject:\n    - {from: x.go, to: .git/hooks/pre-commit}\n  package: ./a\n", 7, "inside .git"},
		{"test package escape", base + "test:\n  package: ../a\n", 6, "test.package"},
		{"bad run regexp", base + "test:\n  package: ./a\n  run: '('\n", 7, "test.run: bad regular expression"},
		{"bad builder", base + "build:\n  builder: kaniko\n", 6, "build.builder: \"kaniko\" is not one of"},
		{"dockerfile escape", base + "build:\n  dockerfile: ../../../Dockerfile\n", 6, "build.dockerfile"},
		{"stamp file escape", base + "stamp:\n  - {file: /etc/passwd, key: .a}\n", 6, "stamp[0].file"},
		{"stamp bad format", base + "stamp:\n  - {file: v.yaml, key: .a, format: digets}\n", 6, "stamp[0].format: \"digets\" is not one of tag@digest, digest, ref, split (did you mean digest?"},
		{"stamp format case", base + "stamp:\n  - {file: v.yaml, key: .a, format: Tag@Digest}\n", 6, "did you mean tag@digest?"},
		{"stamp bad key", base + "stamp:\n  - {file: v.yaml, key: a.b}\n", 6, "stamp[0].key"},
		{"stamp bad index", base + "stamp:\n  - {file: v.yaml, key: '.a[x]'}\n", 6, "stamp[0].key: \".a[x]\": index"},
		{"stamp unquoted special key", base + "stamp:\n  - {file: v.yaml, key: '.a b'}\n", 6, "stamp[0].key"},
		{"stamp format and value", base + "stamp:\n  - file: v.yaml\n    key: .a\n    format: ref\n    value: '{{.Tag}}'\n", 9, "stamp[0].value: conflicts with stamp[0].format on line 8: write only format"},
		{"stamp unknown field", base + "stamp:\n  - file: v.yaml\n    key: .a\n    format: '{{.Tga}}'\n", 8, "stamp[0].format: unknown field {{.Tga}}"},
		{"stamp unterminated template", base + "stamp:\n  - {file: v.yaml, key: .a, format: 'x={{.Tag'}\n", 6, "stamp[0].format: unterminated"},
		{"stamp literal format", base + "stamp:\n  - {file: v.yaml, key: .a, format: tagdigest}\n", 6, "stamp[0].format: \"tagdigest\" is not one of tag@digest, digest, ref, split (did you mean tag@digest?"},
		{"stamp bad kind", base + "stamp:\n  - {file: v.yaml, key: .a, kind: json}\n", 6, "stamp[0].kind"},
		{"stamp bad stale", base + "stamp:\n  - file: v.yaml\n    key: .a\n    stale: error\n", 8, "stamp[0].stale: \"error\" is not warn or fail"},
		{"stamp text with key", base + "stamp:\n  - {file: TAG, kind: text, key: .a}\n", 6, "stamp[0].kind: text, but the entry has a key"},
		{"stamp yaml without key", base + "stamp:\n  - {file: v.yaml, kind: yaml}\n", 6, "stamp[0].kind: yaml, but the entry has no key"},
		{"stamp text split", base + "stamp:\n  - {file: TAG, format: split}\n", 6, "stamp[0].format: split writes a mapping"},
		{"stamp same value twice", base + "stamp:\n  - {file: images/x/v.yaml, key: .a.b}\n  - {file: ./v.yaml, key: '.a[\"b\"]'}\n", 7, "stamp[1]: writes the same value as stamp[0]"},
		{"unknown build.files key", base + "build:\n  files:\n    - {tree: a, image: /a, owner: root}\n", 7, "build.files[0].owner: unknown key (known keys here: tree, image, mode, capabilities)"},
		{"unknown stamp key", base + "stamp:\n  - {file: v.yaml, kye: .a}\n", 6, "stamp[0].kye: unknown key (known keys here: file, key, format, stale)"},
		{"files tree escape", base + "build:\n  files:\n    - {tree: ../a, image: /a}\n", 7, "build.files[0].tree"},
		{"files tree .git", base + "build:\n  files:\n    - {tree: .git/config, image: /a}\n", 7, "inside .git"},
		{"files missing image", base + "build:\n  files:\n    - {tree: a}\n", 7, "build.files[0].image: required"},
		{"files relative image", base + "build:\n  files:\n    - {tree: a, image: usr/bin/a}\n", 7, "clean absolute path"},
		{"files unclean image", base + "build:\n  files:\n    - {tree: a, image: /usr/../etc/a}\n", 7, "clean absolute path"},
		{"files duplicate image", base + "build:\n  files:\n    - {tree: a, image: /a}\n    - {tree: b, image: /a}\n", 8, "also the path of build.files[0]"},
		{"files bad mode", base + "build:\n  files:\n    - {tree: a, image: /a, mode: \"0789\"}\n", 7, "build.files[0].mode"},
		{"files mode too big", base + "build:\n  files:\n    - {tree: a, image: /a, mode: \"17777\"}\n", 7, "build.files[0].mode"},
		{"files bad capability", base + "build:\n  files:\n    - tree: a\n      image: /a\n      capabilities: [cap_fly]\n", 9, "build.files[0].capabilities[0]: unknown capability"},
		{"bad stage", base + "build:\n  dockerfile: Dockerfile\n  stage: 'a b'\n", 7, "build.stage: \"a b\" is not a stage name"},
		{"bad stage, deprecated spelling", base + "build:\n  target: 'a b'\n", 6, "build.stage: \"a b\" is not a stage name"},
		// an old and a new spelling of one key that disagree (see deprecated.go)
		{"stage and target", base + "build:\n  stage: a\n  target: b\n", 7, "build.target: conflicts with build.stage on line 6: write only stage"},
		{"tree and from", base + "build:\n  files:\n    - {tree: a, from: b, image: /a}\n", 7, "build.files[0].from: conflicts with build.files[0].tree on line 7"},
		{"image and to", base + "build:\n  files:\n    - tree: a\n      to: /b\n      image: /a\n", 8, "build.files[0].to: conflicts with build.files[0].image on line 9"},
		{"format and value", base + "stamp:\n  - {file: v.yaml, key: .a, format: digest, value: '{{.Digest}}'}\n", 6, "stamp[0].value: conflicts with stamp[0].format"},
		{"base oci escape", base + "build:\n  base: oci:../../../x\n", 6, "build.base"},
		{"base oci empty", base + "build:\n  base: 'oci:'\n", 6, "build.base: oci: needs a directory"},
		{"base bad ref", base + "build:\n  base: 'UPPER/Case:@@'\n", 6, "build.base"},
		{"bad repository", base + "image:\n  repository: Kube OVN\n", 6, "image.repository"},
		{"bad tag", base + "image:\n  repository: x\n  tag: v1:2\n", 7, "image.tag"},
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

func TestLoadBuild(t *testing.T) {
	y := `upstream: {url: file:///u, ref: v1}
patches: p
build:
  builder: native
  base: oci:images/base/oci
  files:
    - tree: bin/greeter
      image: /usr/bin/greeter
      mode: 0755
      capabilities: [cap_net_bind_service]
    - tree: README.md
      image: /README.md
    - tree: tool
      image: /usr/bin/tool
      mode: "4750"
image: {repository: org/greeter, tag: v1.0.0}
stamp:
  - {file: v.yaml, key: .image, format: split}
`
	s, err := LoadReader(strings.NewReader(y), t.TempDir(), "x")
	if err != nil {
		t.Fatalf("LoadReader() error = %v", err)
	}
	f := s.Build.Files
	if len(f) != 3 || f[0].Perm != 0o755 || f[0].Capabilities[0] != "cap_net_bind_service" || f[1].Perm != 0 {
		t.Errorf("build.files = %+v", f)
	}
	if f[2].Perm != os.ModeSetuid|0o750 {
		t.Errorf("build.files[2].Perm = %v, want setuid 0750", f[2].Perm)
	}
	if s.Build.Base != "oci:images/base/oci" || s.Stamp[0].Format != "split" {
		t.Errorf("build.base, stamp format = %q, %q", s.Build.Base, s.Stamp[0].Format)
	}
	if got := s.Line("build.files[1].image"); got != 12 {
		t.Errorf("Line(build.files[1].image) = %d, want 12", got)
	}
	if err := s.CheckBuild("native"); err != nil {
		t.Errorf("CheckBuild(native) = %v", err)
	}
}

func TestBaseDefaultAndRef(t *testing.T) {
	for _, tt := range []struct{ base, want string }{
		{"", DefaultBase},
		{"scratch", "scratch"},
		{"ghcr.io/org/base:v1", "ghcr.io/org/base:v1"},
		{"debian:12@sha256:" + strings.Repeat("a", 64), "debian:12@sha256:" + strings.Repeat("a", 64)},
	} {
		y := "upstream: {url: file:///u, ref: v1}\npatches: p\n"
		if tt.base != "" {
			y += "build: {base: '" + tt.base + "'}\n"
		}
		s, err := LoadReader(strings.NewReader(y), t.TempDir(), "x")
		if err != nil || s.Build.Base != tt.want {
			t.Errorf("LoadReader(base %q) = %v, %v; want base %q", tt.base, s, err, tt.want)
		}
	}
}

func TestCheckBuild(t *testing.T) {
	base := "upstream: {url: file:///u, ref: v1}\npatches: p\nimage: {repository: r, tag: v1}\n"
	tests := []struct {
		name, yaml, builder, want string
	}{
		{"native without files", base + "build: {builder: native}\n", "native", "build.files: required by the native builder"},
		{"buildah without dockerfile", base, "buildah", "build.dockerfile: required by the buildah builder"},
		{"auto with nothing", base, "auto", "nothing to build"},
		{"no repository", "upstream: {url: file:///u, ref: v1}\npatches: p\nbuild: {dockerfile: D}\n", "auto", "image.repository: required"},
		{"no tag", "upstream: {url: file:///u, ref: v1}\npatches: p\nbuild: {dockerfile: D}\nimage: {repository: r}\n", "buildah", "image.tag: required"},
		{"ok", base + "build: {dockerfile: D}\n", "docker", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := LoadReader(strings.NewReader(tt.yaml), t.TempDir(), "x")
			if err != nil {
				t.Fatal(err)
			}
			err = s.CheckBuild(tt.builder)
			if tt.want == "" {
				if err != nil {
					t.Errorf("CheckBuild(%s) = %v, want nil", tt.builder, err)
				}
				return
			}
			if !diag.IsInput(err) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckBuild(%s) = %v, want an input error containing %q", tt.builder, err, tt.want)
			}
		})
	}
}

func TestLoadPatchesMapping(t *testing.T) {
	const head = "upstream: {url: file:///x, ref: v1}\n"
	cases := []struct {
		name    string
		patches string
		want    Series
		dir     string
		errKey  string
		errLine int
	}{
		{name: "string form", patches: "patches: p\n", dir: "p"},
		{name: "mapping, dir only", patches: "patches: {dir: p}\n", dir: "p", want: Series{Dir: "p"}},
		{name: "strip and directory", patches: "patches:\n  dir: p\n  strip: 4\n  directory: charts/foo\n  recount: true\n",
			dir: "p", want: Series{Dir: "p", Strip: 4, Directory: "charts/foo", Recount: true}},
		{name: "missing dir", patches: "patches:\n  strip: 4\n", errKey: "patches.dir", errLine: 2},
		{name: "unknown key", patches: "patches:\n  dir: p\n  fuzz: 2\n", errKey: "patches.fuzz", errLine: 4},
		{name: "strip zero", patches: "patches:\n  dir: p\n  strip: 0\n", errKey: "patches.strip", errLine: 4},
		{name: "strip negative", patches: "patches:\n  dir: p\n  strip: -1\n", errKey: "patches.strip", errLine: 4},
		{name: "strip not a number", patches: "patches:\n  dir: p\n  strip: four\n", errLine: 4},
		{name: "directory with ..", patches: "patches:\n  dir: p\n  directory: charts/../../etc\n", errKey: "patches.directory", errLine: 4},
		{name: "directory absolute", patches: "patches:\n  dir: p\n  directory: /etc\n", errKey: "patches.directory", errLine: 4},
		{name: "directory .git", patches: "patches:\n  dir: p\n  directory: .git/hooks\n", errKey: "patches.directory", errLine: 4},
		{name: "dir leaves the repository", patches: "patches:\n  dir: ../../../p\n", errKey: "patches.dir", errLine: 3},
		{name: "a list", patches: "patches: [p]\n", errKey: "patches", errLine: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := LoadReader(strings.NewReader(head+c.patches), t.TempDir(), "x")
			if c.errLine != 0 {
				var ie *diag.InputError
				if !errors.As(err, &ie) || ie.Line != c.errLine || ie.Key != c.errKey || ie.File != "images/x/patchkit.yaml" {
					t.Fatalf("LoadReader() error = %#v, want %s:%d key %q", err, "images/x/patchkit.yaml", c.errLine, c.errKey)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadReader() error = %v", err)
			}
			if s.Patches != c.dir || s.Series != c.want {
				t.Errorf("LoadReader() patches = %q %+v, want %q %+v", s.Patches, s.Series, c.dir, c.want)
			}
		})
	}
}

func TestLoadStampShapes(t *testing.T) {
	y := `upstream: {url: file:///u, ref: v1}
patches: p
stamp:
  - {file: v.yaml, key: '.kamaji.extraArgs[0]', format: '--migrate-image={{.Reference}}'}
  - {file: v.yaml, key: '.a["b.c"]'}
  - {file: TAG}
  - {file: TAG2, format: '{{.Tag}}', stale: fail}
`
	s, err := LoadReader(strings.NewReader(y), t.TempDir(), "x")
	if err != nil {
		t.Fatalf("LoadReader() error = %v", err)
	}
	want := []Stamp{
		{File: "v.yaml", Kind: StampYAML, Key: ".kamaji.extraArgs[0]", Value: "--migrate-image={{.Reference}}", Stale: StaleWarn},
		{File: "v.yaml", Kind: StampYAML, Key: `.a["b.c"]`, Format: DefaultStampFormat, Stale: StaleWarn},
		{File: "TAG", Kind: StampText, Format: DefaultStampFormat, Stale: StaleWarn},
		{File: "TAG2", Kind: StampText, Value: "{{.Tag}}", Stale: StaleFail},
	}
	for i, w := range want {
		if s.Stamp[i] != w {
			t.Errorf("stamp[%d] = %+v, want %+v", i, s.Stamp[i], w)
		}
	}
}
