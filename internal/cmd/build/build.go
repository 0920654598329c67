// Package build is the `patchkit build` command: its flags, and the
// rendering of what internal/release did (gate, build, publish and stamp one
// image).
package build

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
	gatestage "github.com/patchkit/patchkit/internal/gate"
	"github.com/patchkit/patchkit/internal/image"
	"github.com/patchkit/patchkit/internal/release"
	"github.com/patchkit/patchkit/internal/report"
)

// DefaultLayout is where the OCI layout goes without --push or
// --oci-layout, under the root.
const DefaultLayout = release.DefaultLayout

// Options are the flags and dependencies of `patchkit build`.
type Options struct {
	Factory   *cmdutil.Factory
	Image     string
	Builder   string
	Registry  string
	Tag       string
	Push      bool
	OCILayout string
	Stamp     bool
	// RegistryTimeout bounds connecting to the registry and waiting for
	// each answer's headers; PushTimeout the whole push with its retries
	// and the readback.
	RegistryTimeout time.Duration
	PushTimeout     time.Duration
	// Getenv reads REGISTRY, IMAGE_TAG, SOURCE_DATE_EPOCH and the registry
	// credentials; os.Getenv by default.
	Getenv func(string) string

	// Test seams: options for the gate, buildah and the registry.
	gateOpts     []gatestage.Option
	buildahOpts  []image.BuildahOption
	registryOpts []image.RegistryOption
}

// NewCmdBuild returns the build command. runF replaces the run function in tests.
func NewCmdBuild(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f, Getenv: os.Getenv}
	cmd := &cobra.Command{
		Use:   "build IMAGE [--builder B] [--registry R] [--tag T] [--push] [--oci-layout DIR] [--stamp]",
		Short: "Gate, build, push and stamp the patched image",
		Long: `Apply the image's series, run its regression test (the gate, without the
ownership check), build the image from the patched tree, publish it and,
with --stamp, write its digest into the spec's stamp targets.

Builders (--builder or build.builder): buildah and docker build
build.dockerfile with the patched tree as context; native adds build.files
to build.base with go-containerregistry, reproducibly; auto takes the first
available of docker buildx, buildah and native. docker uses buildx when its
plugin answers, else the engine's classic builder (DOCKER_BUILDKIT=0; its
digests are not reproducible).

The image is <registry>/<image.repository>:<tag>. The registry is --registry,
else $REGISTRY; the tag is --tag, else $IMAGE_TAG, else image.tag. --push
pushes it there (retrying transient registry errors); without --push the
image goes to an OCI layout, --oci-layout DIR or _output/IMAGE/oci. Both
are written when both are asked for. Each registry request must connect and
answer within --registry-timeout, and is retried when it failed transiently
(a 408, 429 or 5xx answer, a refused or reset connection, a timeout); the
whole push, retries included, must end within --push-timeout. The pushed
manifest is then read back by digest: a registry that does not serve what
it acknowledged fails the build. --offline refuses --push. Registry credentials come from
$REGISTRY_USERNAME and $REGISTRY_PASSWORD, else the docker and podman
config files; they are never printed.

Timestamps come from $SOURCE_DATE_EPOCH, else the pinned commit's time, so
a native build of the same inputs gives the same digest. The image carries
its provenance as annotations and labels: org.opencontainers.image.source
and .revision, and dev.patchkit.patches (each patch's name and patch-id).

A stamp is prepared before the build (so a bad target fails early) and
written only after the image is published: a failed or interrupted build
leaves the values files untouched.

Exit codes: 0 built; 1 the series does not apply or the gate failed; 2 bad
input, or the build, the push or its readback failed (nothing stamped).`,
		Args: cobra.ExactArgs(1),
	}
	cmdutil.NewCommand(cmd, opts, runF, run, func(_ *cobra.Command, args []string) error {
		opts.Image = args[0]
		if opts.Builder != "" && !oneOf(opts.Builder, "auto", "buildah", "docker", "native") {
			return &cmdutil.UsageError{Err: fmt.Errorf("--builder %q: want auto, buildah, docker or native", opts.Builder)}
		}
		if opts.RegistryTimeout <= 0 || opts.PushTimeout <= 0 {
			return &cmdutil.UsageError{Err: errors.New("--registry-timeout and --push-timeout must be positive")}
		}
		if opts.Push && f.Offline {
			return &cmdutil.UsageError{Err: errors.New("--offline forbids the network, and --push needs the registry: drop one of them")}
		}
		return nil
	})
	fl := cmd.Flags()
	fl.StringVar(&opts.Builder, "builder", "", "auto, buildah, docker or native (default: build.builder)")
	fl.StringVar(&opts.Registry, "registry", "", "registry to name and push the image in (default: $REGISTRY)")
	fl.StringVar(&opts.Tag, "tag", "", "image tag (default: $IMAGE_TAG, else image.tag)")
	fl.BoolVar(&opts.Push, "push", false, "push the image to the registry")
	fl.StringVar(&opts.OCILayout, "oci-layout", "", "write the image into this OCI layout directory (default without --push: _output/IMAGE/oci)")
	fl.BoolVar(&opts.Stamp, "stamp", false, "write the digest into the spec's stamp targets")
	fl.DurationVar(&opts.RegistryTimeout, "registry-timeout", image.DefaultRequestTimeout, "limit on connecting to the registry and on waiting for each answer")
	fl.DurationVar(&opts.PushTimeout, "push-timeout", image.DefaultPushTimeout, "limit on the whole push, its retries and readback included")
	return cmd
}

func oneOf(s string, list ...string) bool {
	for _, x := range list {
		if s == x {
			return true
		}
	}
	return false
}

// run releases the image (internal/release runs the stages in order) and
// renders the result; a series that does not apply or a failed gate is a
// finding.
func run(ctx context.Context, opts *Options) error {
	f := opts.Factory
	format, env, err := f.Setup()
	if err != nil {
		return err
	}
	res, err := release.Run(ctx, env, release.Request{
		Image: opts.Image, Builder: opts.Builder, Registry: opts.Registry, Tag: opts.Tag,
		Push: opts.Push, OCILayout: opts.OCILayout, Stamp: opts.Stamp,
		RegistryTimeout: opts.RegistryTimeout, PushTimeout: opts.PushTimeout,
		Getenv: opts.Getenv, Progress: f.IO.Progress(),
		GateOptions: opts.gateOpts, BuildahOptions: opts.buildahOpts, RegistryOptions: opts.registryOpts,
	})
	if err != nil {
		return err
	}
	out := report.Build{
		Image: res.Image, OK: res.OK, Message: res.Message, Gate: res.Gate,
		Digest: res.Digest, Reference: res.Reference, Builder: res.Builder,
		Pushed: res.Pushed, OCILayout: res.OCILayout, Stamped: res.Stamped,
	}
	if g := res.Gate; g != nil {
		out.Tests = report.TestCounts{Run: g.Ran, Passed: g.Passed, Failed: g.Failed}
	}
	if err := report.RenderBuild(f.IO.Out, format, []report.Build{out}, true); err != nil {
		return err
	}
	if !res.OK {
		return diag.ErrFindings
	}
	return nil
}
