package buildfile

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLogicalLines(t *testing.T) {
	in := "# comment\n\nA = 1\nB = x \\\n  y \\\n# dropped inside\n  z\n\tcmd\r\nlast \\\n"
	got := logicalLines([]byte(in))
	want := []Line{{3, "A = 1"}, {4, "B = x    y    z"}, {8, "\tcmd"}, {9, "last  "}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("logicalLines() = %+v, want %+v", got, want)
	}
}

func TestRefsAndExpand(t *testing.T) {
	if got, want := Refs("a ${X} $Y ${Z:-d} $$"), []string{"X", "Y", "Z"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Refs() = %q, want %q", got, want)
	}
	vars := map[string]string{"X": "1", "Y": "2"}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	tests := []struct{ in, want, missing string }{
		{"v${X}.$Y", "v1.2", ""},
		{"${X}-${NOPE}-${Y}", "1-${NOPE}-${Y}", "NOPE"},
		{"plain", "plain", ""},
	}
	for _, tt := range tests {
		got, missing := Expand(tt.in, lookup)
		if got != tt.want || missing != tt.missing {
			t.Errorf("Expand(%q) = %q, %q; want %q, %q", tt.in, got, missing, tt.want, tt.missing)
		}
	}
}

func TestParseMakefile(t *testing.T) {
	m := ParseMakefile([]byte(`include ../../../hack/package.mk
-include $(DYN).mk
TAG ?= v1.0.0
TAG ?= v9.9.9
VERSION = 1.0.0 # trailing comment
VERSION = 1.0.1
export REPO := ghcr.io/x

image:
	docker buildx build images/kubeovn --build-arg TAG=$(TAG) \
	  --build-arg "VERSION=$(VERSION)" --build-arg=EXTRA=1
	echo done
`), "Makefile")
	if got := m.Includes; !reflect.DeepEqual(got, []string{"../../../hack/package.mk"}) {
		t.Errorf("Includes = %q", got)
	}
	for name, want := range map[string][2]string{"TAG": {"?=", "v1.0.0"}, "VERSION": {"=", "1.0.1"}, "REPO": {":=", "ghcr.io/x"}} {
		v := m.Vars[name]
		if v.Op != want[0] || v.Value != want[1] {
			t.Errorf("Vars[%s] = %+v, want %s %s", name, v, want[0], want[1])
		}
	}
	if len(m.Recipes) != 2 || m.Recipes[0].N != 10 {
		t.Errorf("Recipes = %+v", m.Recipes)
	}
	args, line := m.BuildArgs("images/kubeovn")
	if line != 10 || args["TAG"].Value != "$(TAG)" || args["VERSION"].Value != "$(VERSION)" || args["EXTRA"].Value != "1" {
		t.Errorf("BuildArgs(images/kubeovn) = %+v, line %d", args, line)
	}
	if _, line := m.BuildArgs("images/other"); line != 0 {
		t.Errorf("BuildArgs(images/other) found a build on line %d", line)
	}
	if v, n, err := m.Value("TAG"); v != "v1.0.0" || n != 3 || err != nil {
		t.Errorf("Value(TAG) = %q, %d, %v", v, n, err)
	}
}

func TestDockerfileArgValue(t *testing.T) {
	d := ParseDockerfile([]byte(`ARG BASE=alpine
FROM ${BASE} AS build
ARG VERSION="1.15.10"
ARG TAG=v${VERSION}
ARG NODEF
arg lower='x'
RUN git clone --branch ${TAG} https://example.com/u.git
`), "images/u/Dockerfile")
	tests := []struct {
		name, want string
		line       int
		err        string
	}{
		{"TAG", "v1.15.10", 4, ""},
		{"VERSION", "1.15.10", 3, ""},
		{"lower", "x", 6, ""},
		{"NODEF", "", 5, "images/u/Dockerfile:5: ARG NODEF"},
		{"MISSING", "", 0, "images/u/Dockerfile: no ARG MISSING"},
	}
	for _, tt := range tests {
		got, line, err := d.ArgValue(tt.name)
		if got != tt.want || line != tt.line || (err == nil) != (tt.err == "") || (err != nil && !strings.HasPrefix(err.Error(), tt.err)) {
			t.Errorf("ArgValue(%s) = %q, %d, %v; want %q, %d, %q", tt.name, got, line, err, tt.want, tt.line, tt.err)
		}
	}
	var be *Error
	if _, _, err := d.ArgValue("NODEF"); !errors.As(err, &be) || be.Where() != "images/u/Dockerfile:5" {
		t.Errorf("ArgValue(NODEF) error = %v, want an *Error at images/u/Dockerfile:5", err)
	}
}

func TestReadErrorsNameTheFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "Makefile")
	if _, err := ReadMakefile(missing, "packages/x/Makefile"); err == nil || !strings.HasPrefix(err.Error(), "packages/x/Makefile: reading:") || strings.Contains(err.Error(), missing) {
		t.Errorf("ReadMakefile(missing) = %v, want an error naming the display path only", err)
	}
	p := filepath.Join(t.TempDir(), "Dockerfile")
	os.WriteFile(p, []byte("FROM scratch\n"), 0o644)
	if d, err := ReadDockerfile(p, "Dockerfile"); err != nil || len(d.Instrs) != 1 || d.Instrs[0].Cmd != "FROM" {
		t.Errorf("ReadDockerfile() = %+v, %v", d, err)
	}
}
