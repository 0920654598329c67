package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/spec"
)

func TestDockerfileChecks(t *testing.T) {
	const dockerfile = "FROM golang\nARG TAG=v1.2.0\nRUN git clone --branch ${TAG} https://github.com/o/r /src\nCOPY patches /patches\nRUN git apply /patches/*.diff\n"
	tests := []struct {
		name, dockerfile, spec string
		want                   map[string]string // check -> status
		msg                    string
	}{
		{"copied pin agrees", dockerfile, "upstream: {url: https://github.com/o/r, ref: v1.2.0}\npatches: ./patches\n",
			map[string]string{CheckPin: StatusPass}, "copied into the spec"},
		{"copied pin disagrees", dockerfile, "upstream: {url: https://github.com/o/r, ref: v1.1.0}\npatches: ./patches\n",
			map[string]string{CheckPin: StatusFail}, "the spec pins v1.1.0"},
		{"pin from the ARG", dockerfile, "upstream:\n  url: https://github.com/o/r.git\n  ref: {dockerfile-arg: TAG}\npatches: ./patches\nbuild: {dockerfile: ./Dockerfile, context: unit}\n",
			map[string]string{CheckPin: StatusPass, CheckDockerfile: StatusPass}, "Dockerfile:2"},
		{"other upstream", dockerfile, "upstream: {url: https://github.com/x/r, ref: v1.2.0}\npatches: ./patches\n",
			map[string]string{CheckPin: StatusFail}, "fetches https://github.com/o/r"},
		{"patch tool differs", strings.Replace(dockerfile, "git apply /patches/*.diff", "patch -p1 < /patches/0001.diff", 1),
			"upstream: {url: https://github.com/o/r, ref: {dockerfile-arg: TAG}}\npatches: ./patches\nbuild: {dockerfile: ./Dockerfile, context: unit}\n",
			map[string]string{CheckPin: StatusPass, CheckDockerfile: StatusWarn}, "applies with patch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "pkg", "images", "app")
			if err := os.MkdirAll(filepath.Join(dir, "patches"), 0o755); err != nil {
				t.Fatal(err)
			}
			for name, body := range map[string]string{"Dockerfile": tt.dockerfile, "patchkit.yaml": tt.spec, "patches/0001.diff": "diff --git a/x b/x\n"} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err := spec.Load(root, "app")
			if err != nil {
				t.Fatalf("spec.Load: %v", err)
			}
			checks := DockerfileChecks(root, s)
			got := map[string]string{}
			all := ""
			for _, c := range checks {
				got[c.Check] = c.Status
				all += c.Message + "\n"
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("check %s = %q, want %q\n%s", k, got[k], v, all)
				}
			}
			if len(got) != len(tt.want) || !strings.Contains(all, tt.msg) {
				t.Errorf("DockerfileChecks() = %v\n%s; want %v mentioning %q", got, all, tt.want, tt.msg)
			}
		})
	}
}
