package image

import (
	"archive/tar"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"
)

// call is one command a fake runner saw.
type call struct {
	env  []string
	name string
	args []string
}

// flag returns the value after flag in args.
func flag(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
		if strings.HasPrefix(a, name+"=") {
			return strings.TrimPrefix(a, name+"=")
		}
	}
	return ""
}

func TestDockerPush(t *testing.T) {
	const digest = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	var calls []call
	fake := func(_ context.Context, env []string, name string, args ...string) ([]byte, error) {
		calls = append(calls, call{env, name, args})
		if meta := flag(args, "--metadata-file"); meta != "" {
			os.WriteFile(meta, []byte(`{"buildx.build.ref":"default/default/x","containerimage.digest":"`+digest+`","image.name":"r/x:v1"}`), 0o644)
		}
		return nil, nil
	}
	tmp := t.TempDir()
	d := NewDocker(withDockerRunner(fake), WithBuildxBuilder("ci"), WithDockerTempDir(tmp))
	res, err := d.Build(context.Background(), Request{
		ContextDir: "/src", Dockerfile: "/repo/images/x/Dockerfile", Push: "r.example/x:v1",
		Created:     time.Unix(1700000000, 0),
		Annotations: map[string]string{AnnotationRevision: "abc"}, Labels: map[string]string{"l": "v"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if res.Digest.String() != digest || res.Pushed != "r.example/x:v1" || res.Image != nil {
		t.Errorf("Build() = %+v, want digest %s pushed to r.example/x:v1", res, digest)
	}
	c := calls[len(calls)-1] // after Available's buildx inspect
	want := []string{"buildx", "build", "--builder", "ci", "--file", "/repo/images/x/Dockerfile", "--metadata-file"}
	if c.name != "docker" || !slices.Equal(c.args[:len(want)], want) {
		t.Errorf("docker args = %q, want them to start with %q", c.args, want)
	}
	for _, w := range []string{"--push", "--provenance=false", "org.opencontainers.image.revision=abc", "l=v", "/src"} {
		if !slices.Contains(c.args, w) {
			t.Errorf("docker args = %q, want %q", c.args, w)
		}
	}
	if flag(c.args, "--tag") != "r.example/x:v1" || !slices.Contains(c.env, "SOURCE_DATE_EPOCH=1700000000") {
		t.Errorf("docker args %q env %q: want --tag r.example/x:v1 and SOURCE_DATE_EPOCH", c.args, c.env)
	}
	res.Close()
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("Close() left %d files", len(left))
	}
}

// TestDockerOCIArchive: without Push, buildx exports an OCI archive, which
// the result holds.
func TestDockerOCIArchive(t *testing.T) {
	img, _ := random.Image(128, 1)
	want, _ := img.Digest()
	fake := func(_ context.Context, _ []string, _ string, args ...string) ([]byte, error) {
		if slices.Equal(args, []string{"buildx", "inspect"}) {
			return nil, nil
		}
		out := flag(args, "--output")
		dest := strings.TrimPrefix(out, "type=oci,dest=")
		dir := t.TempDir()
		p, _ := layout.Write(dir, empty.Index)
		p.AppendImage(img)
		writeTar(t, dir, dest)
		os.WriteFile(flag(args, "--metadata-file"), []byte(`{"containerimage.digest":"`+want.String()+`"}`), 0o644)
		return nil, nil
	}
	res, err := NewDocker(withDockerRunner(fake)).Build(context.Background(), Request{ContextDir: "/src", Dockerfile: "/D"})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if res.Image == nil || res.Digest != want || res.Pushed != "" {
		t.Errorf("Build() = %+v, want the archive's image %s", res, want)
	}
}

func writeTar(t *testing.T, dir, dest string) {
	f, err := os.Create(dest)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	defer tw.Close()
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		h, _ := tar.FileInfoHeader(info, "")
		h.Name = rel
		tw.WriteHeader(h)
		if info.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			tw.Write(b)
		}
		return nil
	})
}

func TestDockerErrors(t *testing.T) {
	failing := func(_ context.Context, _ []string, name string, args ...string) ([]byte, error) {
		return nil, &CmdError{Args: append([]string{name}, args...), Output: "ERROR: failed to solve: process \"/bin/sh -c make\" did not complete", Err: &exec.ExitError{}}
	}
	noDigest := func(_ context.Context, _ []string, _ string, args ...string) ([]byte, error) {
		os.WriteFile(flag(args, "--metadata-file"), []byte(`{}`), 0o644)
		return nil, nil
	}
	tests := []struct {
		name string
		r    runner
		req  Request
		want string
	}{
		{"build fails", failing, Request{Dockerfile: "/D", Push: "r/x:1"}, "failed to solve"},
		{"no digest", noDigest, Request{Dockerfile: "/D", Push: "r/x:1"}, "no containerimage.digest"},
		{"no dockerfile", noDigest, Request{}, "no Dockerfile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewDocker(withDockerRunner(tt.r)).Build(context.Background(), tt.req)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Build() error = %v, want %q", err, tt.want)
			}
		})
	}
	if err := NewDocker(withDockerRunner(failing)).Available(context.Background()); err == nil || !strings.Contains(err.Error(), "docker is not usable") {
		t.Errorf("Available() = %v, want docker not usable", err)
	}
}

// TestDockerMode: buildx when its builder answers, else the classic
// builder when the engine answers; a named buildx builder needs buildx.
func TestDockerMode(t *testing.T) {
	noBuildx := func(_ context.Context, _ []string, name string, args ...string) ([]byte, error) {
		if args[0] == "buildx" {
			return nil, &CmdError{Args: append([]string{name}, args...), Output: "unknown command: docker buildx", Err: &exec.ExitError{}}
		}
		return []byte("20.10.24\n"), nil
	}
	ok := func(context.Context, []string, string, ...string) ([]byte, error) { return nil, nil }
	for _, tt := range []struct {
		name string
		d    *Docker
		want string
	}{
		{"buildx", NewDocker(withDockerRunner(ok)), DockerBuildx},
		{"classic", NewDocker(withDockerRunner(noBuildx)), DockerClassic},
		{"named builder without buildx", NewDocker(withDockerRunner(noBuildx), WithBuildxBuilder("ci")), ""},
		{"buildx only, without buildx", NewDocker(withDockerRunner(noBuildx), WithBuildxOnly()), ""},
	} {
		err := tt.d.Available(context.Background())
		if tt.d.Mode() != tt.want || (err == nil) != (tt.want != "") {
			t.Errorf("%s: Available() = %v, Mode() = %q; want %q", tt.name, err, tt.d.Mode(), tt.want)
		}
	}
}

func TestAuto(t *testing.T) {
	no := func(context.Context, []string, string, ...string) ([]byte, error) {
		return nil, errors.New("unknown command: docker buildx")
	}
	docker := NewDocker(withDockerRunner(no))
	b, err := Auto(context.Background(), docker, NewNative())
	if err != nil || b.Name() != "native" {
		t.Errorf("Auto(docker missing, native) = %v, %v; want native", b, err)
	}
	if _, err := Auto(context.Background(), docker); !errors.Is(err, ErrNoBuilder) || !strings.Contains(err.Error(), "docker: ") {
		t.Errorf("Auto(docker missing) error = %v, want ErrNoBuilder naming docker", err)
	}
}

func TestCmdErrorRedacts(t *testing.T) {
	t.Setenv("REGISTRY_PASSWORD", "hunter2-secret")
	err := &CmdError{Args: []string{"buildah", "push", "https://bob:tok3n@r.example/x"}, Output: "auth failed for hunter2-secret", Err: errors.New("exit status 1")}
	if msg := err.Error(); strings.Contains(msg, "hunter2-secret") || strings.Contains(msg, "tok3n") {
		t.Errorf("CmdError.Error() = %q, leaks a secret", msg)
	}
}
