package image

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// Buildah builds a Dockerfile with buildah, daemonless: chroot isolation and
// the vfs storage driver work as root without a container runtime's cgroups.
// The image is exported to a temporary OCI layout, which the Result holds
// until it is closed, and removed from buildah's storage.
type Buildah struct {
	bin       string
	root      string
	runroot   string
	driver    string
	isolation string
	pull      string
	keep      bool
	tmpDir    string
	run       runner
}

var _ Builder = (*Buildah)(nil)

// BuildahOption configures NewBuildah.
type BuildahOption func(*Buildah)

// WithBuildahStorage makes buildah keep its images under root and its state
// under runroot (buildah --root, --runroot) instead of the system's.
func WithBuildahStorage(root, runroot string) BuildahOption {
	return func(b *Buildah) { b.root, b.runroot = root, runroot }
}

// WithStorageDriver sets buildah's storage driver. The default, vfs, works
// everywhere, overlay is faster where the kernel allows it.
func WithStorageDriver(driver string) BuildahOption {
	return func(b *Buildah) { b.driver = driver }
}

// WithIsolation sets how RUN steps are isolated. The default, chroot, needs
// no OCI runtime; oci needs crun or runc and cgroups.
func WithIsolation(isolation string) BuildahOption {
	return func(b *Buildah) { b.isolation = isolation }
}

// WithPull sets when buildah pulls the FROM image: false (the default: only
// when storage lacks it), true, always or never.
func WithPull(policy string) BuildahOption {
	return func(b *Buildah) { b.pull = policy }
}

// WithKeepImage leaves the built image in buildah's storage.
func WithKeepImage() BuildahOption {
	return func(b *Buildah) { b.keep = true }
}

// WithBuildahTempDir puts the exported layout under dir.
func WithBuildahTempDir(dir string) BuildahOption {
	return func(b *Buildah) { b.tmpDir = dir }
}

// withBuildahRunner replaces the command runner: the unit tests' seam.
func withBuildahRunner(r runner) BuildahOption {
	return func(b *Buildah) { b.run = r }
}

// NewBuildah returns the buildah builder. Its storage driver defaults to
// $STORAGE_DRIVER, else vfs, and its isolation to $BUILDAH_ISOLATION, else
// chroot: buildah's own variables, for a machine whose storage already
// uses another driver.
func NewBuildah(opts ...BuildahOption) *Buildah {
	b := &Buildah{bin: "buildah", driver: envOr("STORAGE_DRIVER", "vfs"), isolation: envOr("BUILDAH_ISOLATION", "chroot"), pull: "false", run: execRunner}
	for _, o := range opts {
		o(b)
	}
	return b
}

// Name implements Builder.
func (b *Buildah) Name() string { return "buildah" }

// Available implements Builder.
func (b *Buildah) Available(ctx context.Context) error {
	if _, err := exec.LookPath(b.bin); err != nil {
		return fmt.Errorf("buildah is not installed (apt-get install buildah): %w", err)
	}
	if _, err := b.run(ctx, nil, b.bin, "--version"); err != nil {
		return err
	}
	return nil
}

func (b *Buildah) global() []string {
	var args []string
	if b.root != "" {
		args = append(args, "--root", b.root)
	}
	if b.runroot != "" {
		args = append(args, "--runroot", b.runroot)
	}
	if b.driver != "" {
		args = append(args, "--storage-driver", b.driver)
	}
	return args
}

// Build implements Builder: buildah build, buildah push to oci:, buildah rmi.
func (b *Buildah) Build(ctx context.Context, req Request) (_ *Result, err error) {
	if req.Dockerfile == "" {
		return nil, fmt.Errorf("buildah build: no Dockerfile (build.dockerfile)")
	}
	tmp, err := os.MkdirTemp(b.tmpDir, "patchkit-buildah-*")
	if err != nil {
		return nil, fmt.Errorf("buildah build: %w", err)
	}
	res := &Result{Builder: b.Name(), cleanup: []func() error{func() error { return os.RemoveAll(tmp) }}}
	defer func() {
		if err != nil {
			res.Close()
		}
	}()
	iidfile := filepath.Join(tmp, "iid")
	args := append(b.global(), "build",
		"--isolation", b.isolation,
		"--pull="+b.pull,
		"--format", "oci",
		"--identity-label=false",
		"--timestamp", strconv.FormatInt(epoch(req.Created).Unix(), 10),
		"--iidfile", iidfile,
		"--file", req.Dockerfile,
	)
	for _, kv := range sortedPairs(req.Labels) {
		args = append(args, "--label", kv)
	}
	args = append(args, stageOptions(req)...)
	args = append(args, req.ContextDir)
	if _, err := b.run(ctx, nil, b.bin, args...); err != nil {
		return nil, fmt.Errorf("buildah build: %w", err)
	}
	id, err := os.ReadFile(iidfile)
	if err != nil {
		return nil, fmt.Errorf("buildah build: reading the image id: %w", err)
	}
	imageID := strings.TrimPrefix(strings.TrimSpace(string(id)), "sha256:")
	if !b.keep {
		defer b.run(context.WithoutCancel(ctx), nil, b.bin, append(b.global(), "rmi", "--force", imageID)...)
	}
	dir := filepath.Join(tmp, "oci")
	if _, err := b.run(ctx, nil, b.bin, append(b.global(), "push", "--format", "oci", imageID, "oci:"+dir)...); err != nil {
		return nil, fmt.Errorf("buildah push to a layout: %w", err)
	}
	img, err := layoutImage(dir)
	if err != nil {
		return nil, fmt.Errorf("reading buildah's image: %w", err)
	}
	if len(req.Annotations) > 0 {
		img = mutate.Annotations(img, req.Annotations).(v1.Image)
	}
	res.Image = img
	if res.Digest, err = img.Digest(); err != nil {
		return nil, err
	}
	return res, nil
}

// layoutImage reads the single image of an OCI layout.
func layoutImage(dir string) (v1.Image, error) {
	idx, manifests, err := readLayoutIndex(dir)
	if err != nil {
		return nil, err
	}
	if len(manifests) != 1 || !manifests[0].MediaType.IsImage() {
		return nil, fmt.Errorf("layout %s holds %d manifests, want one image", dir, len(manifests))
	}
	return idx.Image(manifests[0].Digest)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// sortedPairs renders a map as sorted key=value strings.
func sortedPairs(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
