package image

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Docker builds a Dockerfile with `docker buildx build`. With Request.Push
// it pushes the image itself and takes the digest from the metadata file's
// containerimage.digest; without, it exports an OCI archive (the builder
// must support the oci exporter: a docker-container builder, or the
// containerd image store) that the Result holds until it is closed.
type Docker struct {
	bin     string
	builder string
	tmpDir  string
	run     runner
}

var _ Builder = (*Docker)(nil)

// DockerOption configures NewDocker.
type DockerOption func(*Docker)

// WithBuildxBuilder selects a buildx builder instance (docker buildx build
// --builder NAME) instead of the current one.
func WithBuildxBuilder(name string) DockerOption {
	return func(d *Docker) { d.builder = name }
}

// WithDockerTempDir puts the metadata file and the exported archive under dir.
func WithDockerTempDir(dir string) DockerOption {
	return func(d *Docker) { d.tmpDir = dir }
}

// withDockerRunner replaces the command runner: the unit tests' seam, as
// this machine has the docker client but no engine.
func withDockerRunner(r runner) DockerOption {
	return func(d *Docker) { d.run = r }
}

// NewDocker returns the docker buildx builder.
func NewDocker(opts ...DockerOption) *Docker {
	d := &Docker{bin: "docker", run: execRunner}
	for _, o := range opts {
		o(d)
	}
	return d
}

// Name implements Builder.
func (d *Docker) Name() string { return "docker" }

// Available implements Builder: the buildx plugin is installed and its
// builder answers.
func (d *Docker) Available(ctx context.Context) error {
	args := []string{"buildx", "inspect"}
	if d.builder != "" {
		args = append(args, d.builder)
	}
	if _, err := d.run(ctx, nil, d.bin, args...); err != nil {
		return fmt.Errorf("docker buildx is not usable (install the buildx plugin and start the engine): %w", err)
	}
	return nil
}

// metadata is the part of buildx's --metadata-file that we read.
type metadata struct {
	Digest string `json:"containerimage.digest"`
}

// Build implements Builder.
func (d *Docker) Build(ctx context.Context, req Request) (_ *Result, err error) {
	if req.Dockerfile == "" {
		return nil, errors.New("docker build: no Dockerfile (build.dockerfile)")
	}
	tmp, err := os.MkdirTemp(d.tmpDir, "patchkit-docker-*")
	if err != nil {
		return nil, fmt.Errorf("docker build: %w", err)
	}
	res := &Result{Builder: d.Name(), cleanup: []func() error{func() error { return os.RemoveAll(tmp) }}}
	defer func() {
		if err != nil {
			res.Close()
		}
	}()
	meta := filepath.Join(tmp, "metadata.json")
	archive := filepath.Join(tmp, "image.tar")
	args := []string{"buildx", "build"}
	if d.builder != "" {
		args = append(args, "--builder", d.builder)
	}
	args = append(args, "--file", req.Dockerfile, "--metadata-file", meta, "--provenance=false")
	for _, kv := range sortedPairs(req.Labels) {
		args = append(args, "--label", kv)
	}
	for _, kv := range sortedPairs(req.Annotations) {
		args = append(args, "--annotation", kv)
	}
	args = append(args, stageOptions(req)...)
	if req.Push != "" {
		args = append(args, "--tag", req.Push, "--push")
	} else {
		args = append(args, "--output", "type=oci,dest="+archive)
	}
	args = append(args, req.ContextDir)
	env := []string{"SOURCE_DATE_EPOCH=" + strconv.FormatInt(epoch(req.Created).Unix(), 10)}
	if _, err := d.run(ctx, env, d.bin, args...); err != nil {
		return nil, fmt.Errorf("docker buildx build: %w", err)
	}
	b, err := os.ReadFile(meta)
	if err != nil {
		return nil, fmt.Errorf("docker buildx build: reading its metadata file: %w", err)
	}
	var m metadata
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("docker buildx build: parsing its metadata file: %w", err)
	}
	if m.Digest == "" {
		return nil, errors.New("docker buildx build: the metadata file has no containerimage.digest")
	}
	digest, err := v1.NewHash(m.Digest)
	if err != nil {
		return nil, fmt.Errorf("docker buildx build: containerimage.digest: %w", err)
	}
	res.Digest = digest
	if req.Push != "" {
		res.Pushed = req.Push
		return res, nil
	}
	dir := filepath.Join(tmp, "oci")
	if err := untar(archive, dir); err != nil {
		return nil, fmt.Errorf("docker buildx build: unpacking its OCI archive: %w", err)
	}
	img, err := layoutImage(dir)
	if err != nil {
		return nil, fmt.Errorf("docker buildx build: %w", err)
	}
	if got, err := img.Digest(); err != nil || got != digest {
		return nil, fmt.Errorf("docker buildx build: the archive holds %v, the metadata says %v (%v)", got, digest, err)
	}
	res.Image = img
	return res, nil
}

// untar unpacks an OCI archive (regular files and directories only) into dir.
func untar(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(filepath.Clean("/"+h.Name), "/")
		if name == "" {
			continue
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(name, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if d := filepath.Dir(name); d != "." {
				if err := root.MkdirAll(d, 0o755); err != nil {
					return err
				}
			}
			w, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
			if err != nil {
				return err
			}
			if _, err := io.Copy(w, tr); err != nil {
				w.Close()
				return err
			}
			if err := w.Close(); err != nil {
				return err
			}
		}
	}
}
