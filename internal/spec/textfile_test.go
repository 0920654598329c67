package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
)

// eksUnit is a release-branch unit of eks-distro's shape.
const eksUnit = "projects/o/r/1-30"

// loadEKS writes files (relative to eksUnit; "../x" leaves it) and the spec
// under a fresh root, and loads the unit.
func loadEKS(t *testing.T, specText string, files map[string]string) (*Spec, string, error) {
	t.Helper()
	root := t.TempDir()
	files["patchkit.yaml"] = specText
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(eksUnit), filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Load(root, eksUnit)
	return s, root, err
}

const eksSpec = "upstream:\n  url: https://github.com/o/r.git\n  ref:\n    file: ./GIT_TAG\n  versions:\n    - file: ./GOLANG_VERSION\n      whole-file: true\npatches: ./patches\n"

// TestPinFromFile: upstream.ref: {file: PATH} reads the pin as the file's
// one line, white space and the line ending dropped, prefix and suffix
// around it; the place is located at its line.
func TestPinFromFile(t *testing.T) {
	tests := []struct {
		name, ref, content, want string
		line                     int
	}{
		{"a tag and a newline", "{file: ./GIT_TAG}", "v1.12.4\n", "v1.12.4", 1},
		{"no newline", "{file: ./GIT_TAG}", "v1.12.4", "v1.12.4", 1},
		{"white space and blank lines around", "{file: ./GIT_TAG}", "\n  v1.12.4 \t\r\n\n", "v1.12.4", 2},
		{"a path from the root", "{file: projects/o/r/1-30/GIT_TAG}", "v1.12.4\n", "v1.12.4", 1},
		{"prefix", "{file: ./VERSION, prefix: v}", "1.12.4\n", "v1.12.4", 1},
		{"a commit id", "{file: ./GIT_TAG}", strings.Repeat("ab", 20) + "\n", strings.Repeat("ab", 20), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "GIT_TAG"
			if strings.Contains(tt.ref, "VERSION") {
				name = "VERSION"
			}
			spec := "upstream:\n  url: https://github.com/o/r.git\n  ref: " + tt.ref + "\npatches: ./patches\n"
			s, _, err := loadEKS(t, spec, map[string]string{name: tt.content, "patches/0001-x.patch": ""})
			if err != nil {
				t.Fatalf("Load() error = %v", err)
			}
			src := s.Upstream.RefFrom
			if s.Upstream.Ref != tt.want || src == nil || src.Where() != eksUnit+"/"+name+":"+strconv.Itoa(tt.line) {
				t.Errorf("Load() = %q from %+v, want %q from %s/%s:%d", s.Upstream.Ref, src, tt.want, eksUnit, name, tt.line)
			}
			if got := src.String(); got != "file "+eksUnit+"/"+name {
				t.Errorf("Source.String() = %q", got)
			}
		})
	}
}

// TestPinFromFileBadInput: every bad pin file and every bad combination is
// bad input (exit 2) naming the file, the line and the key.
func TestPinFromFileBadInput(t *testing.T) {
	spec := func(ref string) string {
		return "upstream:\n  url: https://github.com/o/r.git\n  ref: " + ref + "\npatches: ./patches\n"
	}
	const specFile = eksUnit + "/patchkit.yaml"
	const tagFile = eksUnit + "/GIT_TAG"
	tests := []struct {
		name, spec, content string // content of GIT_TAG; "-" for none
		file                string
		line                int
		key, msg            string
	}{
		{"missing file", spec("{file: ./GIT_TAG}"), "-", specFile, 3, "upstream.ref.file", "projects/o/r/1-30/GIT_TAG does not exist"},
		{"empty file", spec("{file: ./GIT_TAG}"), "", tagFile, 1, "upstream.ref", "is empty"},
		{"blank lines only", spec("{file: ./GIT_TAG}"), "\n \n\t\n", tagFile, 1, "upstream.ref", "is empty"},
		{"two lines", spec("{file: ./GIT_TAG}"), "v1.12.4\nv1.12.5\n", tagFile, 2, "upstream.ref", "a second line"},
		{"two lines apart", spec("{file: ./GIT_TAG}"), "v1.12.4\n\n# v1.12.5\n", tagFile, 3, "upstream.ref", "a second line"},
		{"white space inside", spec("{file: ./GIT_TAG}"), "v1.12 .4\n", tagFile, 1, "upstream.ref", "white space or a control character inside"},
		{"a control character", spec("{file: ./GIT_TAG}"), "v1.12.4\x1b[0m\n", tagFile, 1, "upstream.ref", "white space or a control character inside"},
		{"a NUL", spec("{file: ./GIT_TAG}"), "v1.12.4\x00\n", tagFile, 1, "upstream.ref", "white space or a control character inside"},
		{"not a ref", spec("{file: ./GIT_TAG}"), "v1.12.4^{}\n", tagFile, 1, "upstream.ref", "is not a tag or a commit id"},
		{"an option", spec("{file: ./GIT_TAG}"), "--upload-pack=x\n", tagFile, 1, "upstream.ref", "is not a tag or a commit id"},
		{"leaves the repository", spec("{file: ../../../../../GIT_TAG}"), "v1\n", specFile, 3, "upstream.ref.file", "leaves the repository"},
		{"absolute", spec("{file: /etc/GIT_TAG}"), "v1\n", specFile, 3, "upstream.ref.file", "is absolute"},
		{"with dockerfile-arg", spec("{file: ./GIT_TAG, dockerfile-arg: TAG}"), "v1\n", specFile, 3, "upstream.ref.file", "give file or dockerfile-arg, not both"},
		{"with makefile-var", spec("{file: ./GIT_TAG, makefile-var: TAG, makefile: ./Makefile}"), "v1\n", specFile, 3, "upstream.ref.file", "give file or makefile-var, not both"},
		{"with makefile", spec("{file: ./GIT_TAG, makefile: ./Makefile}"), "v1\n", specFile, 3, "upstream.ref.makefile", "goes with makefile-var, not with file"},
		{"with dockerfile", spec("{file: ./GIT_TAG, dockerfile: ./Dockerfile}"), "v1\n", specFile, 3, "upstream.ref.dockerfile", "goes with dockerfile-arg, not with file"},
		{"unknown key", spec("{file: ./GIT_TAG, trim: true}"), "v1\n", specFile, 3, "upstream.ref.trim", "unknown key (known keys here: file, dockerfile-arg"},
		{"url from a file", "upstream:\n  url: {file: ./URL}\n  ref: v1\npatches: ./patches\n", "v1\n", specFile, 2, "upstream.url.file", "unknown key"},
		{"a directory", spec("{file: ./patches}"), "v1\n", specFile, 3, "upstream.ref.file", "reading projects/o/r/1-30/patches"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"patches/0001-x.patch": ""}
			if tt.content != "-" {
				files["GIT_TAG"] = tt.content
			}
			_, _, err := loadEKS(t, tt.spec, files)
			var ie *diag.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("Load() error = %v, want bad input", err)
			}
			if ie.File != tt.file || ie.Line != tt.line || ie.Key != tt.key || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Load() error = %s:%d %s: %v; want %s:%d %s: ...%s...", ie.File, ie.Line, ie.Key, err, tt.file, tt.line, tt.key, tt.msg)
			}
			if ie.File == tagFile && !strings.Contains(err.Error(), "read for "+specFile) {
				t.Errorf("Load() error = %v, want it to name the spec it was read for", err)
			}
		})
	}
}

// TestPinFileSymlink: a pin file that is a symlink leaving the repository is
// refused, one inside it is read.
func TestPinFileSymlink(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "GIT_TAG"), []byte("v9\n"), 0o644)
	dir := filepath.Join(root, filepath.FromSlash(eksUnit))
	os.MkdirAll(filepath.Join(dir, "patches"), 0o755)
	os.WriteFile(filepath.Join(dir, "patchkit.yaml"), []byte("upstream:\n  url: https://github.com/o/r.git\n  ref: {file: ./GIT_TAG}\npatches: ./patches\n"), 0o644)
	os.WriteFile(filepath.Join(root, "TAG"), []byte("v1\n"), 0o644)
	if err := os.Symlink(filepath.Join(root, "TAG"), filepath.Join(dir, "GIT_TAG")); err != nil {
		t.Fatal(err)
	}
	if s, err := Load(root, eksUnit); err != nil || s.Upstream.Ref != "v1" {
		t.Fatalf("Load(a symlink inside) = %v, %v; want v1", s, err)
	}
	os.Remove(filepath.Join(dir, "GIT_TAG"))
	os.Symlink(filepath.Join(outside, "GIT_TAG"), filepath.Join(dir, "GIT_TAG"))
	if _, err := Load(root, eksUnit); err == nil || !strings.Contains(err.Error(), "upstream.ref.file") || !strings.Contains(err.Error(), "through a symlink") {
		t.Fatalf("Load(a symlink leaving) = %v, want a symlink escape at upstream.ref.file", err)
	}
}

// TestWholeFileVersion: a whole-file version place reads the file's one
// line; GOLANG_VERSION's spelling defaults to go, any other file's to pin;
// bad whole files are errors naming the file and line.
func TestWholeFileVersion(t *testing.T) {
	s, root, err := loadEKS(t, eksSpec+"", map[string]string{"GIT_TAG": "v1.12.4\n", "GOLANG_VERSION": "1.25", "patches/0001-x.patch": ""})
	if err != nil {
		t.Fatalf("Load() error = %v", err)
	}
	v := s.Upstream.Versions[0]
	if v.File != eksUnit+"/GOLANG_VERSION" || !v.WholeFile || v.Spelling != SpellingGo || v.Kind() != "whole-file" || v.Name() != "GOLANG_VERSION" {
		t.Fatalf("Versions[0] = %+v (%s %s), want the whole GOLANG_VERSION, spelling go", v, v.Kind(), v.Name())
	}
	if got, line, err := ReadVersion(root, v); got != "1.25" || line != 1 || err != nil {
		t.Errorf("ReadVersion(%s) = %q, %d, %v; want 1.25 at line 1", v, got, line, err)
	}
	other := strings.Replace(eksSpec, "./GOLANG_VERSION", "./VERSION", 1)
	s, _, err = loadEKS(t, other, map[string]string{"GIT_TAG": "v1.12.4\n", "patches/0001-x.patch": ""})
	if err != nil || s.Upstream.Versions[0].Spelling != SpellingPin {
		t.Fatalf("Load(whole-file VERSION) = %+v, %v; want spelling pin", s, err)
	}

	for _, tt := range []struct{ name, content, want string }{
		{"two lines", "1.25\n1.24\n", "projects/o/r/1-30/GOLANG_VERSION:2: a second line"},
		{"empty", "", "projects/o/r/1-30/GOLANG_VERSION:1: is empty"},
		{"white space inside", "1. 25\n", "projects/o/r/1-30/GOLANG_VERSION:1: \"1. 25\" has white space"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := ReadVersionData([]byte(tt.content), v); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReadVersionData(%q) = %v, want %q", tt.content, err, tt.want)
			}
		})
	}

	bad := []struct{ name, entry, want string }{
		{"whole-file and a key", "{file: ./GOLANG_VERSION, whole-file: true, key: .a}", "upstream.versions[0]: give exactly one of dockerfile-arg, makefile-var, key and whole-file: true"},
		{"whole-file and an ARG", "{file: ./GOLANG_VERSION, whole-file: true, dockerfile-arg: A}", "upstream.versions[0]: give exactly one of"},
		{"whole-file false", "{file: ./GOLANG_VERSION, whole-file: false}", "upstream.versions[0]: give exactly one of"},
		{"not a bool", "{file: ./GOLANG_VERSION, whole-file: yes please}", "cannot unmarshal"},
		{"no file", "{whole-file: true}", "upstream.versions[0].file: required"},
		{"misspelt", "{file: ./GOLANG_VERSION, wholefile: true}", "upstream.versions[0].wholefile: unknown key"},
		{"bad spelling", "{file: ./GOLANG_VERSION, whole-file: true, spelling: golang}", `upstream.versions[0].spelling: "golang" is not one of pin, bare, v, go`},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := loadEKS(t, "upstream:\n  url: file:///u\n  ref: v1\n  versions:\n    - "+tt.entry+"\npatches: ./patches\n", map[string]string{"patches/0001-x.patch": ""})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load() = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestGoNeeds(t *testing.T) {
	tests := []struct{ have, want, needs string }{
		{"1.25", "1.24.0", "1.25"},
		{"1.25", "1.25.3", "1.25"},
		{"1.24", "1.25.0", "1.25"},
		{"1.24", "1.25", "1.25"},
		{"1.24", "1.26rc1", "1.26"},
		{"1.24.4", "1.24.4", "1.24.4"},
		{"1.24.4", "1.24.6", "1.24.6"},
		{"1.24.4", "1.23", "1.24.4"},
		{"1.9", "1.10", "1.10"},
	}
	for _, tt := range tests {
		if got, err := GoNeeds(tt.have, tt.want); got != tt.needs || err != nil {
			t.Errorf("GoNeeds(%q, %q) = %q, %v; want %q", tt.have, tt.want, got, err, tt.needs)
		}
	}
	for _, bad := range [][2]string{{"v1.25", "1.24"}, {"1.25", "x"}, {"latest", "1.24"}} {
		if _, err := GoNeeds(bad[0], bad[1]); err == nil {
			t.Errorf("GoNeeds(%q, %q) = nil error, want one", bad[0], bad[1])
		}
	}
}
