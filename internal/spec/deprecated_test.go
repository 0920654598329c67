package spec

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
)

const respellBase = "upstream:\n  url: file:///u\n  ref: v1\npatches: p\n"

// Each deprecated spelling loads to the Spec its replacement loads to, with
// exactly one note naming the file and the line of the old key.
func TestDeprecatedSpellings(t *testing.T) {
	tests := []struct {
		name, old, new string
		line           int
		note           string
	}{
		{"stamp kind yaml", "stamp:\n  - file: v.yaml\n    key: .a\n    kind: yaml\n", "stamp:\n  - file: v.yaml\n    key: .a\n", 8,
			"stamp[0].kind is implied by key; remove it (deprecated)"},
		{"stamp kind text", "stamp:\n  - file: v.yaml\n    key: .a\n  - file: TAG\n    kind: text\n    format: digest\n", "stamp:\n  - file: v.yaml\n    key: .a\n  - file: TAG\n    format: digest\n", 9,
			"stamp[1].kind is implied by key; remove it (deprecated)"},
		{"stamp value", "stamp:\n  - file: v.yaml\n    key: .a\n    value: '{{.Registry}}/x:{{.Tag}}'\n", "stamp:\n  - file: v.yaml\n    key: .a\n    format: '{{.Registry}}/x:{{.Tag}}'\n", 8,
			"stamp[0].value is a format template: write format (deprecated)"},
		{"stamp value and format agree", "stamp:\n  - {file: v.yaml, key: .a, format: '{{.Tag}}', value: '{{.Tag}}'}\n", "stamp:\n  - {file: v.yaml, key: .a, format: '{{.Tag}}'}\n", 6,
			"stamp[0].value repeats stamp[0].format; remove it (deprecated)"},
		{"build target", "build:\n  dockerfile: Dockerfile\n  target: builder\n", "build:\n  dockerfile: Dockerfile\n  stage: builder\n", 7,
			"build.target is the Dockerfile stage to build (--target): write stage (deprecated)"},
		{"build target and stage agree", "build:\n  stage: builder\n  target: builder\n", "build:\n  stage: builder\n", 7,
			"build.target repeats build.stage; remove it (deprecated)"},
		{"files from", "build:\n  files:\n    - tree: a\n      image: /a\n    - from: b\n      image: /b\n", "build:\n  files:\n    - tree: a\n      image: /a\n    - tree: b\n      image: /b\n", 9,
			"build.files[1].from is the file's path in the patched tree: write tree (deprecated)"},
		{"files to", "build:\n  files:\n    - tree: a\n      to: /a\n", "build:\n  files:\n    - tree: a\n      image: /a\n", 8,
			"build.files[0].to is the file's path in the image: write image (deprecated)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []diag.Note
			prev := diag.SetNotes(func(n diag.Note) { got = append(got, n) })
			defer diag.SetNotes(prev)

			root := t.TempDir()
			dir := filepath.Join(root, "images", "x")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, FileName), []byte(respellBase+tt.old), 0o644); err != nil {
				t.Fatal(err)
			}
			old, err := Load(root, "x")
			if err != nil {
				t.Fatalf("Load(old spelling) error = %v", err)
			}
			if _, err := Load(root, "x"); err != nil { // a run reads a spec more than once
				t.Fatalf("Load(old spelling) again: error = %v", err)
			}
			want := diag.Note{File: "images/x/patchkit.yaml", Line: tt.line, Msg: tt.note}
			if len(got) != 1 || got[0] != want {
				t.Errorf("notes = %q, want exactly [%q]", got, want)
			}
			if len(old.Deprecations) != 1 || old.Deprecations[0] != want {
				t.Errorf("Deprecations = %q, want [%q]", old.Deprecations, want)
			}

			got = nil
			cur, err := LoadReader(strings.NewReader(respellBase+tt.new), root, "x")
			if err != nil {
				t.Fatalf("LoadReader(new spelling) error = %v", err)
			}
			if len(got) != 0 || len(cur.Deprecations) != 0 {
				t.Errorf("the new spelling noted %q", got)
			}
			old.lines, old.Deprecations, cur.lines = nil, nil, nil
			if !reflect.DeepEqual(old, cur) {
				t.Errorf("the old spelling loads to\n%+v\nthe new one to\n%+v", old, cur)
			}
		})
	}
}

// The notes of one file come in line order, one per old key.
func TestDeprecationsInLineOrder(t *testing.T) {
	s, err := LoadReader(strings.NewReader(respellBase+"stamp:\n  - file: TAG\n    kind: text\n    value: '{{.Tag}}'\nbuild:\n  files:\n    - {from: a, to: /a}\n"), t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range s.Deprecations {
		got = append(got, n.String())
	}
	want := []string{
		"images/x/patchkit.yaml:7: stamp[0].kind is implied by key; remove it (deprecated)",
		"images/x/patchkit.yaml:8: stamp[0].value is a format template: write format (deprecated)",
		"images/x/patchkit.yaml:11: build.files[0].from is the file's path in the patched tree: write tree (deprecated)",
		"images/x/patchkit.yaml:11: build.files[0].to is the file's path in the image: write image (deprecated)",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Deprecations =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A constant (a template without fields, as a Makefile stamps a repository
// name) loads in either spelling; a misspelt format name does not.
func TestFormatConstant(t *testing.T) {
	for _, key := range []string{"format", "value"} {
		s, err := LoadReader(strings.NewReader(respellBase+"stamp:\n  - {file: v.yaml, key: .repo, "+key+": kubeovn}\n"), t.TempDir(), "x")
		if err != nil || s.Stamp[0].Value != "kubeovn" || s.Stamp[0].Format != "" {
			t.Errorf("LoadReader(%s: kubeovn) = %+v, %v; want the constant kubeovn", key, s, err)
		}
		for _, typo := range []string{"diggest", "sha256", "tag-digest"} {
			_, err = LoadReader(strings.NewReader(respellBase+"stamp:\n  - {file: v.yaml, key: .repo, "+key+": "+typo+"}\n"), t.TempDir(), "x")
			if !diag.IsInput(err) || !strings.Contains(err.Error(), "did you mean") {
				t.Errorf("LoadReader(%s: %s) error = %v, want did you mean ...?", key, typo, err)
			}
		}
	}
}
