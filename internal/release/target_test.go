package release

import (
	"errors"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/spec"
)

type envMap map[string]string

func (e envMap) get(k string) string { return e[k] }

func TestResolveTarget(t *testing.T) {
	s, err := spec.LoadReader(strings.NewReader("upstream: {url: file:///u, ref: v1}\npatches: p\nimage: {repository: kubeovn, tag: v1.15.10}\n"), t.TempDir(), "kubeovn")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, registry, tag string
		e                   envMap
		want                string
	}{
		{"spec only", "", "", envMap{}, "kubeovn:v1.15.10"},
		{"env", "", "", envMap{"REGISTRY": "ghcr.io/cozystack/cozystack/", "IMAGE_TAG": "v0.30.0"}, "ghcr.io/cozystack/cozystack/kubeovn:v0.30.0"},
		{"flags beat env", "127.0.0.1:5000", "dev", envMap{"REGISTRY": "ghcr.io/x", "IMAGE_TAG": "v0.30.0"}, "127.0.0.1:5000/kubeovn:dev"},
	}
	for _, tt := range tests {
		got, err := ResolveTarget(s, tt.registry, tt.tag, tt.e.get)
		if err != nil || got.Repo()+":"+got.Tag != tt.want {
			t.Errorf("ResolveTarget(%s) = %+v, %v; want %s", tt.name, got, err, tt.want)
		}
	}
	if _, err := ResolveTarget(s, "UPPER CASE", "", envMap{}.get); !isUsage(err) {
		t.Errorf("ResolveTarget(bad registry) = %v, want a usage error", err)
	}
}

func isUsage(err error) bool {
	var ue *diag.UsageError
	return errors.As(err, &ue)
}
