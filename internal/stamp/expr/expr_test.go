package expr

import (
	"strings"
	"testing"
)

func TestParsePath(t *testing.T) {
	tests := []struct{ in, want string }{
		{".global.images.kubeovn.tag", ".global.images.kubeovn.tag"},
		{".kamaji.extraArgs[0]", ".kamaji.extraArgs[0]"},
		{".kamaji.extraArgs.[12]", ".kamaji.extraArgs[12]"},
		{`.a["b.c"]`, `.a["b.c"]`},
		{`."x-y".tag`, ".x-y.tag"},
		{`.a."b c"`, `.a["b c"]`},
		{`.a["q\"x"]`, `.a["q\"x"]`},
		{".kube-ovn.image_tag", ".kube-ovn.image_tag"},
		{`.l[0][1].x`, `.l[0][1].x`},
	}
	for _, tt := range tests {
		p, err := ParsePath(tt.in)
		if err != nil || p.String() != tt.want {
			t.Errorf("ParsePath(%q) = %v, %v; want %s", tt.in, p, err, tt.want)
		}
	}
	p, _ := ParsePath(`.a["b.c"][3]`)
	if len(p) != 3 || p[1].Key != "b.c" || !p[2].IsIndex || p[2].Index != 3 {
		t.Errorf("ParsePath steps = %+v", p)
	}
	for _, bad := range []string{"", "a.b", ".", "..a", ".a..b", ".a[", ".a[-1]", ".a[x]", `.a["b`, `.a["b"`, ".a b", ".a|b", ".a=1", `.a[""x]`} {
		if p, err := ParsePath(bad); err == nil {
			t.Errorf("ParsePath(%q) = %v, want an error", bad, p)
		}
	}
}

func TestTemplate(t *testing.T) {
	vals := map[string]string{"Registry": "ghcr.io/org", "Repository": "kamaji", "Tag": "v1", "Digest": "sha256:d", "Reference": "ghcr.io/org/kamaji:v1@sha256:d"}
	get := func(f string) string { return vals[f] }
	tests := []struct{ in, want string }{
		{"--migrate-image={{.Reference}}", "--migrate-image=ghcr.io/org/kamaji:v1@sha256:d"},
		{"{{.Registry}}/kamaji", "ghcr.io/org/kamaji"},
		{"{{ .Tag }}@{{.Digest}}", "v1@sha256:d"},
		{"literal only", "literal only"},
		{"a }} b", "a }} b"},
	}
	for _, tt := range tests {
		tm, err := ParseTemplate(tt.in)
		if err != nil || tm.Render(get) != tt.want {
			t.Errorf("ParseTemplate(%q).Render = %q, %v; want %q", tt.in, tm.Render(get), err, tt.want)
		}
	}
	if tm, _ := ParseTemplate("{{.Registry}}/x"); !tm.Uses("Registry") || tm.Uses("Tag") {
		t.Error("Uses() wrong")
	}
	for _, bad := range []string{"", "{{.Tag", "{{.Nope}}", "{{Tag}}", "{{.tag}}", "{{ .Tag | upper }}"} {
		if _, err := ParseTemplate(bad); err == nil || (bad != "" && !strings.Contains(err.Error(), "{{")) {
			t.Errorf("ParseTemplate(%q) error = %v, want one naming the problem", bad, err)
		}
	}
}
