package image_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/patchkit/patchkit/internal/image"
	"github.com/patchkit/patchkit/internal/image/imagetest"
)

// TestBuildahRealRegistry builds a Dockerfile with the real buildah, FROM a
// busybox base the test makes, and pushes it to the real docker-registry;
// the registry's digest is the one the build reported.
func TestBuildahRealRegistry(t *testing.T) {
	reg := imagetest.StartRegistry(t)
	bh := imagetest.NewBuildah(t)
	base := bh.Busybox("localhost/busybox:test")
	ctxDir := t.TempDir()
	os.WriteFile(filepath.Join(ctxDir, "greet.txt"), []byte("hello from the patched tree\n"), 0o644)
	dockerfile := filepath.Join(t.TempDir(), "Dockerfile")
	os.WriteFile(dockerfile, []byte("FROM "+base+"\nRUN echo built > /built\nCOPY greet.txt /greet.txt\n"), 0o644)

	b := image.NewBuildah(image.WithBuildahStorage(bh.Root, bh.RunRoot), image.WithBuildahTempDir(t.TempDir()))
	if err := b.Available(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := b.Build(context.Background(), image.Request{
		ContextDir: ctxDir, Dockerfile: dockerfile, Created: time.Unix(1700000000, 0),
		Annotations: map[string]string{image.AnnotationRevision: "c0ffee"},
		Labels:      map[string]string{image.AnnotationSource: "https://example.com/greeter.git"},
	})
	if err != nil {
		t.Fatalf("Build() error = %v", err)
	}
	defer res.Close()
	publishGreeter(t, reg.Addr+"/greeter", res)
	// The image left buildah's storage; only the base remains.
	if out := bh.Run("images", "--quiet", "--noheading"); strings.Count(out, "\n") != 0 {
		t.Errorf("buildah images = %q, want only the base", out)
	}
}

// TestNativeRealRegistry builds natively on a base pulled from the real
// registry, pushes it there, and checks with buildah that the file's
// capabilities survive into a container's root filesystem.
func TestNativeRealRegistry(t *testing.T) {
	reg := imagetest.StartRegistry(t)
	bh := imagetest.NewBuildah(t)
	bh.Push(bh.Busybox("localhost/busybox:test"), "docker://"+reg.Addr+"/busybox:test")

	tree := t.TempDir()
	os.MkdirAll(filepath.Join(tree, "bin"), 0o755)
	os.WriteFile(filepath.Join(tree, "bin", "greeter"), []byte("#!/bin/sh\necho hello\n"), 0o755)
	req := image.Request{
		ContextDir: tree,
		Base:       reg.Addr + "/busybox:test",
		Files:      []image.File{{From: "bin/greeter", To: "/usr/bin/greeter", Capabilities: []string{"cap_net_bind_service"}}},
		Created:    time.Unix(1700000000, 0),
	}
	n := image.NewNative(image.WithBaseRemote(remote.WithAuth(authn.Anonymous)))
	res, err := n.Build(context.Background(), req)
	if err != nil {
		t.Fatalf("Build() error = %v", err)
	}
	defer res.Close()
	again, err := n.Build(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	if again.Digest != res.Digest {
		t.Errorf("rebuild = %s, want %s: the native build is reproducible", again.Digest, res.Digest)
	}
	pub, err := publishAndCheck(t, reg.Addr+"/greeter", res)
	if err != nil {
		t.Fatal(err)
	}

	// Unpack it as a container runtime would and read the file's capabilities.
	bh.Run("pull", "--tls-verify=false", "--quiet", pub.Reference)
	c := bh.Run("from", "--pull=never", pub.Reference)
	mnt := bh.Run("mount", c)
	defer bh.Run("umount", c)
	out, err := exec.Command("getcap", filepath.Join(mnt, "usr", "bin", "greeter")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "cap_net_bind_service=ep") {
		t.Errorf("getcap = %q, %v; want cap_net_bind_service=ep", out, err)
	}
	if _, err := os.Stat(filepath.Join(mnt, "bin", "busybox")); err != nil {
		t.Errorf("the base's /bin/busybox is missing: %v", err)
	}
}

// publishAndCheck pushes res to repo:v1.0.0 and reads the digest back.
func publishAndCheck(t *testing.T, repo string, res *image.Result) (*image.Published, error) {
	t.Helper()
	r, err := image.NewRegistry(repo, image.WithRetry(2, 10*time.Millisecond))
	if err != nil {
		return nil, err
	}
	pub, err := r.Publish(context.Background(), res, "v1.0.0")
	if err != nil {
		return nil, err
	}
	got, err := image.Fetch(context.Background(), repo+":v1.0.0")
	if err != nil {
		return nil, err
	}
	if got != res.Digest || pub.Digest != res.Digest {
		t.Errorf("registry has %s, published %s, built %s", got, pub.Digest, res.Digest)
	}
	return pub, nil
}

// publishGreeter checks that the greeter image built from a Dockerfile
// carries its source label, pushes it with publishAndCheck, and checks the
// pushed manifest keeps the revision annotation.
func publishGreeter(t *testing.T, repo string, res *image.Result) {
	t.Helper()
	cf, err := res.Image.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.Labels[image.AnnotationSource] != "https://example.com/greeter.git" {
		t.Errorf("labels = %v, want the source", cf.Config.Labels)
	}
	pub, err := publishAndCheck(t, repo, res)
	if err != nil {
		t.Fatal(err)
	}
	if m := manifest(t, pub.Reference); !strings.Contains(m, `"org.opencontainers.image.revision":"c0ffee"`) {
		t.Errorf("pushed manifest lacks the revision annotation: %s", m)
	}
}

func manifest(t *testing.T, ref string) string {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	d, err := remote.Get(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(d.Manifest)
}

// TestDockerClassicRealEngine builds a Dockerfile with the docker builder
// against a real dockerd that has no buildx (classic mode, DOCKER_BUILDKIT=0),
// FROM a busybox base loaded with docker load from an archive buildah made,
// and pushes the image to the real docker-registry.
func TestDockerClassicRealEngine(t *testing.T) {
	dockerd := imagetest.StartDockerd(t)
	reg := imagetest.StartRegistry(t)
	bh := imagetest.NewBuildah(t)
	archive := filepath.Join(t.TempDir(), "busybox.tar")
	bh.Push(bh.Busybox("localhost/busybox:test"), "docker-archive:"+archive+":localhost/busybox:test")
	dockerd.Run("load", "--input", archive)

	ctxDir := t.TempDir()
	os.WriteFile(filepath.Join(ctxDir, "greet.txt"), []byte("hello from the patched tree\n"), 0o644)
	dockerfile := filepath.Join(t.TempDir(), "Dockerfile")
	os.WriteFile(dockerfile, []byte("FROM localhost/busybox:test\nRUN echo built > /built\nCOPY greet.txt /greet.txt\n"), 0o644)

	d := image.NewDocker(image.WithDockerHost(dockerd.Host), image.WithDockerTempDir(t.TempDir()))
	if err := d.Available(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d.Mode() != image.DockerClassic {
		t.Fatalf("Mode() = %q, want classic (this machine has no buildx)", d.Mode())
	}
	res, err := d.Build(context.Background(), image.Request{
		ContextDir: ctxDir, Dockerfile: dockerfile, Push: reg.Addr + "/greeter:v1",
		Annotations: map[string]string{image.AnnotationRevision: "c0ffee"},
		Labels:      map[string]string{image.AnnotationSource: "https://example.com/greeter.git"},
	})
	if err != nil {
		t.Fatalf("Build() error = %v", err)
	}
	defer res.Close()
	if res.Image == nil || res.Pushed != "" {
		t.Fatalf("Build() = %+v, want an image for a publisher to push", res)
	}
	publishGreeter(t, reg.Addr+"/greeter", res)
	// The RUN step ran: /built is in the top layers; the built image left the engine.
	if out := dockerd.Run("images", "--quiet"); strings.Count(out, "\n") != 0 {
		t.Errorf("docker images = %q, want only the base", out)
	}
	layers, _ := res.Image.Layers()
	if len(layers) < 3 {
		t.Errorf("the image has %d layers, want the base's, RUN's and COPY's", len(layers))
	}
}
