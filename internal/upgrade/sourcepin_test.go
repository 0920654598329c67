package upgrade

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/spec"
)

// TestSourcePin moves a pin the spec reads from a Dockerfile ARG or a
// Makefile variable, and checks the result with the spec's own reader: the
// reloaded spec's pin is the new ref, and the spec file is untouched.
func TestSourcePin(t *testing.T) {
	const unit = "packages/system/foo/images/foo"
	tests := []struct {
		name, ref, file, content, want string
	}{
		{"dockerfile arg, quoted, prefix", "{dockerfile-arg: VERSION, prefix: v}", unit + "/Dockerfile",
			"FROM golang\nARG VERSION=\"1.2.3\"\nRUN git clone --branch v${VERSION} https://example.com/foo /src\n",
			"FROM golang\nARG VERSION=\"1.3.0\"\nRUN git clone --branch v${VERSION} https://example.com/foo /src\n"},
		{"makefile variable", "{makefile-var: FOO_VERSION, makefile: ../../Makefile}", "packages/system/foo/Makefile",
			"FOO_VERSION ?= v1.2.3  # the pin\nimage:\n\tdocker build --build-arg VERSION=$(FOO_VERSION) images/foo\n",
			"FOO_VERSION ?= v1.3.0  # the pin\nimage:\n\tdocker build --build-arg VERSION=$(FOO_VERSION) images/foo\n"},
		{"whole file", "{file: ./GIT_TAG}", unit + "/GIT_TAG", "v1.2.3\n", "v1.3.0\n"},
		{"whole file, no newline, white space kept", "{file: ./GIT_TAG}", unit + "/GIT_TAG", "\n v1.2.3\t", "\n v1.3.0\t"},
		{"whole file, prefix", "{file: ../../VERSION, prefix: v}", "packages/system/foo/VERSION", "1.2.3\r\n", "1.3.0\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			write := func(p, s string) { gittest.WriteFiles(t, root, map[string]string{p: s}) }
			specText := "upstream:\n  url: https://example.com/foo\n  ref: " + tt.ref + "\npatches: ./patches\n"
			write(unit+"/patchkit.yaml", specText)
			write(unit+"/patches/0001-x.diff", "")
			if !strings.HasSuffix(tt.file, "Dockerfile") {
				write(unit+"/Dockerfile", "FROM x\n")
			}
			write(tt.file, tt.content)
			s, err := spec.Load(root, unit)
			if err != nil {
				t.Fatalf("spec.Load() error = %v", err)
			}
			if !strings.HasSuffix(s.Upstream.Ref, "1.2.3") {
				t.Fatalf("pin read = %q, want ...1.2.3", s.Upstream.Ref)
			}
			pw := PinFor(root, s)
			if _, ok := pw.(SourcePin); !ok {
				t.Fatalf("PinFor() = %T, want SourcePin", pw)
			}
			newRef := strings.Replace(s.Upstream.Ref, "1.2.3", "1.3.0", 1)
			file, data, err := pw.Move(newRef)
			if err != nil {
				t.Fatalf("Move() error = %v", err)
			}
			if file != tt.file || string(data) != tt.want {
				t.Fatalf("Move() = %s %q, want %s %q", file, data, tt.file, tt.want)
			}
			write(file, string(data))
			again, err := spec.Load(root, unit)
			if err != nil || again.Upstream.Ref != newRef {
				t.Fatalf("reloaded pin = %q, %v; want %q", again.Upstream.Ref, err, newRef)
			}
			if b, _ := os.ReadFile(filepath.Join(root, unit, "patchkit.yaml")); string(b) != specText {
				t.Errorf("the spec changed: %q", b)
			}
		})
	}
}

func TestSourcePinRefusals(t *testing.T) {
	root := t.TempDir()
	unit := filepath.Join(root, "images", "foo")
	if err := os.MkdirAll(filepath.Join(unit, "patches"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(unit, "patches", "0001-x.diff"), nil, 0o644)
	os.WriteFile(filepath.Join(unit, "Dockerfile"), []byte("ARG VERSION=1.2.3\n"), 0o644)
	os.WriteFile(filepath.Join(unit, "patchkit.yaml"), []byte("upstream:\n  url: https://example.com/foo\n  ref: {dockerfile-arg: VERSION, prefix: v}\npatches: ./patches\n"), 0o644)
	s, err := spec.Load(root, "foo")
	if err != nil {
		t.Fatalf("spec.Load() error = %v", err)
	}
	if _, _, err := PinFor(root, s).Move("1.3.0"); err == nil || !strings.Contains(err.Error(), "prefix") {
		t.Errorf("Move(without the prefix) error = %v, want one naming the prefix", err)
	}
	// A pin that the Dockerfile chains from another ARG is the user's to move.
	os.WriteFile(filepath.Join(unit, "Dockerfile"), []byte("ARG BASE=1.2.3\nARG VERSION=${BASE}\n"), 0o644)
	if s, err = spec.Load(root, "foo"); err != nil || s.Upstream.Ref != "v1.2.3" {
		t.Fatalf("spec.Load(chained) = %v, %v", s, err)
	}
	if _, _, err := PinFor(root, s).Move("v1.3.0"); err == nil || !strings.Contains(err.Error(), "by hand") {
		t.Errorf("Move(a chained ARG) error = %v, want \"by hand\"", err)
	}
}
