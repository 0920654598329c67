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
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Docker builds a Dockerfile with the docker engine, in one of two modes,
// detected by Available:
//
//   - buildx, when the buildx plugin answers: `docker buildx build`. With
//     Request.Push it pushes the image itself and takes the digest from the
//     metadata file's containerimage.digest; without, it exports an OCI
//     archive (the builder must support the oci exporter: a
//     docker-container builder, or the containerd image store) that the
//     Result holds until it is closed.
//   - classic, when there is no buildx but the engine answers: `docker
//     build` with DOCKER_BUILDKIT=0, then `docker save` of the image, which
//     is removed from the engine again. The Result holds the image, with
//     Request.Annotations added to its manifest (the classic builder has
//     no --annotation), and a Publisher pushes it; Request.Push is ignored.
//     The classic builder ignores SOURCE_DATE_EPOCH: its digests differ
//     from build to build.
type Docker struct {
	bin     string
	builder string
	tmpDir  string
	env     []string
	mode    string // "buildx" or "classic", once Available found it
	buildx  bool   // buildx mode only
	run     runner
}

// The modes of the docker builder.
const (
	DockerBuildx  = "buildx"
	DockerClassic = "classic"
)

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

// WithBuildxOnly refuses the classic mode: auto uses it, preferring
// buildah's reproducible builds to the classic builder's.
func WithBuildxOnly() DockerOption {
	return func(d *Docker) { d.buildx = true }
}

// WithDockerHost talks to the engine at host (DOCKER_HOST, e.g.
// unix:///run/docker.sock) instead of the environment's.
func WithDockerHost(host string) DockerOption {
	return func(d *Docker) { d.env = append(d.env, "DOCKER_HOST="+host) }
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
// builder answers (buildx mode), or else the engine answers (classic mode).
func (d *Docker) Available(ctx context.Context) error {
	args := []string{"buildx", "inspect"}
	if d.builder != "" {
		args = append(args, d.builder)
	}
	_, bxErr := d.run(ctx, d.env, d.bin, args...)
	if bxErr == nil {
		d.mode = DockerBuildx
		return nil
	}
	if d.builder == "" && !d.buildx {
		if _, err := d.run(ctx, d.env, d.bin, "version", "--format", "{{.Server.Version}}"); err == nil {
			d.mode = DockerClassic
			return nil
		}
	}
	return fmt.Errorf("docker is not usable (start the engine; install the buildx plugin for --builder NAME): %w", bxErr)
}

// Mode is DockerBuildx or DockerClassic once Available succeeded, else "".
func (d *Docker) Mode() string { return d.mode }

// metadata is the part of buildx's --metadata-file that we read.
type metadata struct {
	Digest string `json:"containerimage.digest"`
}

// Build implements Builder.
func (d *Docker) Build(ctx context.Context, req Request) (_ *Result, err error) {
	if req.Dockerfile == "" {
		return nil, errors.New("docker build: no Dockerfile (build.dockerfile)")
	}
	if d.mode == "" {
		if err := d.Available(ctx); err != nil {
			return nil, err
		}
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
	if d.mode == DockerClassic {
		return d.buildClassic(ctx, req, res, tmp)
	}
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
	env := append([]string{"SOURCE_DATE_EPOCH=" + strconv.FormatInt(epoch(req.Created).Unix(), 10)}, d.env...)
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

// buildClassic builds with the classic builder, saves the image into tmp
// and removes it from the engine.
func (d *Docker) buildClassic(ctx context.Context, req Request, res *Result, tmp string) (*Result, error) {
	iid := filepath.Join(tmp, "iid")
	args := []string{"build", "--file", req.Dockerfile, "--iidfile", iid, "--quiet"}
	for _, kv := range sortedPairs(req.Labels) {
		args = append(args, "--label", kv)
	}
	args = append(args, req.ContextDir)
	env := append([]string{"DOCKER_BUILDKIT=0"}, d.env...)
	if _, err := d.run(ctx, env, d.bin, args...); err != nil {
		return nil, fmt.Errorf("docker build: %w", err)
	}
	b, err := os.ReadFile(iid)
	if err != nil {
		return nil, fmt.Errorf("docker build: reading its image id: %w", err)
	}
	id := strings.TrimSpace(string(b))
	archive := filepath.Join(tmp, "image.tar")
	_, saveErr := d.run(ctx, d.env, d.bin, "save", "--output", archive, id)
	if _, err := d.run(ctx, d.env, d.bin, "rmi", "--force", id); err != nil && saveErr == nil {
		saveErr = err
	}
	if saveErr != nil {
		return nil, fmt.Errorf("docker build: %w", saveErr)
	}
	img, err := tarball.ImageFromPath(archive, nil)
	if err != nil {
		return nil, fmt.Errorf("docker build: reading the saved image: %w", err)
	}
	if len(req.Annotations) > 0 {
		img = mutate.Annotations(img, req.Annotations).(v1.Image)
	}
	if res.Digest, err = img.Digest(); err != nil {
		return nil, fmt.Errorf("docker build: %w", err)
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
