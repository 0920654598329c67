// Package build is the `patchkit build` command: gate, build, publish and
// stamp one image.
package build

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"

	applystage "github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
	gatestage "github.com/patchkit/patchkit/internal/gate"
	"github.com/patchkit/patchkit/internal/image"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/report"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/stamp"
	"github.com/patchkit/patchkit/internal/tree"
	"github.com/patchkit/patchkit/internal/txn"
	"github.com/patchkit/patchkit/internal/upstream"
)

// DefaultLayout is where the OCI layout goes without --push or
// --oci-layout, under the root.
const DefaultLayout = "_output/%s/oci"

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
		RunE: func(cmd *cobra.Command, args []string) error {
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
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return run(cmd.Context(), opts)
		},
	}
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

// Target is where an image goes: the registry (may be ""), the repository
// and the tag.
type Target struct {
	Registry, Repository, Tag string
}

// ResolveTarget applies the precedence of flags, environment and spec:
// registry from flag, then REGISTRY; tag from flag, then IMAGE_TAG, then
// image.tag. It checks the result is a valid reference.
func ResolveTarget(s *spec.Spec, registryFlag, tagFlag string, getenv func(string) string) (Target, error) {
	t := Target{Registry: registryFlag, Repository: s.Image.Repository, Tag: tagFlag}
	if t.Registry == "" {
		t.Registry = getenv("REGISTRY")
	}
	t.Registry = strings.TrimSuffix(t.Registry, "/")
	source := "--tag"
	if t.Tag == "" {
		t.Tag, source = getenv("IMAGE_TAG"), "IMAGE_TAG"
	}
	if t.Tag == "" {
		t.Tag, source = s.Image.Tag, "image.tag"
		if t.Tag == "" {
			return t, &diag.InputError{File: s.File, Key: "image.tag", Msg: "required (or give --tag or IMAGE_TAG)"}
		}
	}
	if s.Image.Repository == "" {
		return t, &diag.InputError{File: s.File, Key: "image.repository", Msg: "required"}
	}
	if _, err := name.NewTag("example.com/x:"+t.Tag, name.StrictValidation); err != nil {
		return t, &cmdutil.UsageError{Err: fmt.Errorf("%s %q is not a valid tag", source, t.Tag)}
	}
	if _, err := name.NewRepository(t.Repo()); err != nil {
		return t, &cmdutil.UsageError{Err: fmt.Errorf("registry %q: %s is not a valid repository: %v", t.Registry, t.Repo(), err)}
	}
	return t, nil
}

// Repo is registry/repository, or the repository alone.
func (t Target) Repo() string {
	if t.Registry == "" {
		return t.Repository
	}
	return t.Registry + "/" + t.Repository
}

// Reference is the image's reference with digest.
func (t Target) Reference(digest string) string {
	return t.Repo() + ":" + t.Tag + "@" + digest
}

// Value is what a stamp writes for this target and digest.
func (t Target) Value(digest string) stamp.Value {
	return stamp.Value{Registry: t.Registry, Repository: t.Repository, Tag: t.Tag, Digest: digest}
}

// placeholder is a well-formed digest for checking stamp targets before the build.
var placeholder = "sha256:" + strings.Repeat("0", 64)

// run wires the stages, in order:
//
//  1. check: spec, builder, target and stamp targets, before any network;
//  2. apply the series (a series that does not apply is a finding);
//  3. gate: the regression test on the patched tree (a failure is a finding);
//  4. build from the patched tree, without the injected tests;
//  5. publish: registry (--push) and/or OCI layout;
//  6. stamp (--stamp), only once the image is published.
func run(ctx context.Context, opts *Options) error {
	// A damaged cache is never a verdict: online it is repaired and the
	// build run again (every read of the cache comes before anything is
	// printed, pushed or stamped); offline it is exit 2.
	return upstream.RetryRepaired(ctx, func() error { return runOnce(ctx, opts) })
}

func runOnce(ctx context.Context, opts *Options) error {
	f := opts.Factory
	format, env, err := f.Setup()
	if err != nil {
		return err
	}
	env.Shallow = true // reads the pin's tree, not its history
	root := env.Root

	// 1. Check.
	s, err := spec.Load(root, opts.Image)
	if err != nil {
		return err
	}
	builderName := opts.Builder
	if builderName == "" {
		builderName = s.Build.Builder
	}
	if err := s.CheckBuild(builderName); err != nil {
		return err
	}
	target, err := ResolveTarget(s, opts.Registry, opts.Tag, opts.Getenv)
	if err != nil {
		return err
	}
	if opts.Push && target.Registry == "" {
		return &cmdutil.UsageError{Err: errors.New("--push needs a registry: give --registry or set REGISTRY")}
	}
	if opts.Stamp {
		if _, err := stamp.Prepare(root, s, target.Value(placeholder)); err != nil {
			return err
		}
	}
	created, err := sourceDateEpoch(opts.Getenv)
	if err != nil {
		return err
	}

	// 2. Apply.
	im, err := pipeline.Prepare(ctx, env, opts.Image, "")
	if err != nil {
		return err
	}
	defer im.Close()
	res, src, err := im.Apply()
	if err != nil {
		return err
	}
	if err := res.Hostile(); err != nil {
		return err
	}
	out := report.Build{Image: opts.Image, OK: true}
	if !res.OK {
		var failed []string
		for _, p := range res.Patches {
			if p.Status != applystage.StatusApplied {
				failed = append(failed, p.Name)
			}
		}
		out.OK = false
		out.Message = fmt.Sprintf("the series does not apply to %s: %s fails (see patchkit apply %s)", im.Ref, strings.Join(failed, ", "), opts.Image)
		return renderFindings(f, format, out)
	}

	// 3. Gate.
	if im.Spec.Test != nil {
		g, err := gatestage.New(root, im.Spec, append([]gatestage.Option{
			gatestage.WithOffline(f.Offline), gatestage.WithProgress(f.IO.Progress()),
		}, opts.gateOpts...)...)
		if err != nil {
			return err
		}
		gr, err := g.Run(ctx, src, res.Changes)
		if err != nil {
			return err
		}
		out.Gate = gr
		out.Tests = report.TestCounts{Run: gr.Ran, Passed: gr.Passed, Failed: gr.Failed}
		if !gr.OK {
			out.OK = false
			out.Message = "gate failed: " + gr.Message
			return renderFindings(f, format, out)
		}
	}

	// 4. Build.
	tmp, err := os.MkdirTemp("", "patchkit-build-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ctxDir := filepath.Join(tmp, "src")
	if err := tree.WriteAtomic(ctxDir, src, res.Changes); err != nil {
		return fmt.Errorf("writing the build context: %w", err)
	}
	if created.IsZero() {
		if created, err = commitTime(im); err != nil {
			return err
		}
	}
	req := request(root, s, im, ctxDir, created)
	auth := registryAuth(opts.Getenv, target)
	b, err := chooseBuilder(ctx, builderName, s, tmp, auth, opts)
	if err != nil {
		return err
	}
	if f.Offline && b.Name() == "native" && req.Base != "" && req.Base != "scratch" && !strings.HasPrefix(req.Base, "oci:") {
		return &cmdutil.UsageError{Err: fmt.Errorf("--offline forbids the network, and build.base %s is in a registry: use scratch or oci:<dir>", req.Base)}
	}
	if opts.Push && b.Name() == "docker" {
		req.Push = target.Repo() + ":" + target.Tag
	}
	fmt.Fprintf(f.IO.Progress(), "build: %s with %s\n", opts.Image, b.Name())
	built, err := b.Build(ctx, req)
	if err != nil {
		return err
	}
	defer built.Close()

	// 5. Publish.
	pubs, layoutDir, err := publishers(root, target, auth, opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(f.IO.Progress(), "build: publishing %s\n", target.Reference(built.Digest.String()))
	pub, err := pubs.Publish(ctx, built, target.Tag)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	digest := pub.Digest.String()
	out.Digest, out.Reference, out.Builder, out.Pushed, out.OCILayout = digest, target.Reference(digest), b.Name(), opts.Push, layoutDir

	// 6. Stamp, now that the image is where the reference says.
	if opts.Stamp {
		v := target.Value(digest)
		v.Series, v.By = series.Idents(im.Patches), stamp.ByBuild
		plan, err := stamp.Prepare(root, s, v)
		if err != nil {
			return err
		}
		if err := plan.WriteContext(ctx); err != nil {
			return err
		}
		out.Stamped = plan.Changes
	}
	return report.RenderBuild(f.IO.Out, format, []report.Build{out}, true)
}

// request is what the builder builds: the tree in ctxDir, the spec's
// Dockerfile or files and base, and the provenance annotations.
func request(root string, s *spec.Spec, im *pipeline.Image, ctxDir string, created time.Time) image.Request {
	prov := image.Provenance{
		// The spec's URL, not --upstream-url (a mirror, a temporary copy):
		// the image names its canonical source, and its digest stays the
		// same wherever the upstream was read from.
		Image: s.Name, Source: upstream.Redact(s.Upstream.URL), Ref: im.Ref, Revision: im.Commit, Created: created,
	}
	prov.Patches = series.Idents(im.Patches)
	ann := prov.Annotations()
	req := image.Request{ContextDir: ctxDir, Created: created, Annotations: ann, Labels: ann, Base: s.Build.Base}
	// build.context unit: the Dockerfile fetches and patches the upstream
	// itself, from the unit's directory; patchkit gated its own tree.
	if dir := s.ContextDir(); dir != "" {
		req.ContextDir = filepath.Join(root, filepath.FromSlash(dir))
	}
	req.Target, req.BuildArgs = s.Build.Target, s.Build.Args
	if s.Build.Dockerfile != "" {
		req.Dockerfile = filepath.Join(root, filepath.FromSlash(s.Build.Dockerfile))
	}
	if strings.HasPrefix(req.Base, "oci:") {
		req.Base = "oci:" + filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(req.Base, "oci:")))
	}
	for _, bf := range s.Build.Files {
		req.Files = append(req.Files, image.File{From: bf.From, To: bf.To, Mode: bf.Perm, Capabilities: bf.Capabilities})
	}
	return req
}

// publishers are the registry (with --push) and the OCI layout (with
// --oci-layout, or by default without --push); layoutDir is "" when none.
func publishers(root string, target Target, auth authn.Keychain, opts *Options) (_ image.Publisher, layoutDir string, _ error) {
	var pubs []image.Publisher
	if opts.Push {
		reg, err := image.NewRegistry(target.Repo(), append([]image.RegistryOption{
			image.WithKeychain(auth), image.WithTimeouts(opts.RegistryTimeout, opts.PushTimeout),
		}, opts.registryOpts...)...)
		if err != nil {
			return nil, "", &cmdutil.UsageError{Err: err}
		}
		pubs = append(pubs, reg)
	}
	layoutDir = opts.OCILayout
	if layoutDir == "" && !opts.Push {
		layoutDir = filepath.Join(root, fmt.Sprintf(DefaultLayout, opts.Image))
		if _, err := txn.Resolve(root, fmt.Sprintf(DefaultLayout, opts.Image)); err != nil {
			return nil, "", err // a committed _output link leaving the repository
		}
	}
	if layoutDir != "" {
		lay, err := image.NewLayout(layoutDir, image.WithLayoutRemote(remote.WithAuthFromKeychain(auth)))
		if err != nil {
			return nil, "", err
		}
		pubs = append(pubs, lay)
		layoutDir = lay.Dir()
	}
	return image.Multi(pubs...), layoutDir, nil
}

func renderFindings(f *cmdutil.Factory, format report.Format, out report.Build) error {
	if err := report.RenderBuild(f.IO.Out, format, []report.Build{out}, true); err != nil {
		return err
	}
	return diag.ErrFindings
}

// chooseBuilder makes the builder named name, or picks one for auto.
func chooseBuilder(ctx context.Context, builderName string, s *spec.Spec, tmp string, auth authn.Keychain, opts *Options) (image.Builder, error) {
	docker := func(o ...image.DockerOption) image.Builder {
		return image.NewDocker(append([]image.DockerOption{image.WithDockerTempDir(tmp)}, o...)...)
	}
	buildah := func() image.Builder {
		return image.NewBuildah(append([]image.BuildahOption{image.WithBuildahTempDir(tmp)}, opts.buildahOpts...)...)
	}
	native := func() image.Builder {
		return image.NewNative(image.WithLayerDir(tmp), image.WithBaseRemote(remote.WithAuthFromKeychain(auth)))
	}
	var candidates []image.Builder
	switch builderName {
	case "docker":
		candidates = []image.Builder{docker()}
	case "buildah":
		candidates = []image.Builder{buildah()}
	case "native":
		candidates = []image.Builder{native()}
	default:
		if s.Build.Dockerfile != "" {
			candidates = append(candidates, docker(image.WithBuildxOnly()), buildah())
		}
		if len(s.Build.Files) > 0 {
			candidates = append(candidates, native())
		}
	}
	b, err := image.Auto(ctx, candidates...)
	if err != nil {
		return nil, &cmdutil.UsageError{Err: err}
	}
	return b, nil
}

// sourceDateEpoch reads SOURCE_DATE_EPOCH; the zero time when unset.
func sourceDateEpoch(getenv func(string) string) (time.Time, error) {
	v := strings.TrimSpace(getenv("SOURCE_DATE_EPOCH"))
	if v == "" {
		return time.Time{}, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, &cmdutil.UsageError{Err: fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a number of seconds", v)}
	}
	return time.Unix(n, 0).UTC(), nil
}

// commitTime is the pinned commit's committer time.
func commitTime(im *pipeline.Image) (time.Time, error) {
	c, err := im.Cache.Repo().CommitObject(plumbing.NewHash(im.Commit))
	if err != nil {
		return time.Time{}, fmt.Errorf("reading commit %s: %w", im.Commit, err)
	}
	return c.Committer.When.UTC(), nil
}

// registryAuth uses REGISTRY_USERNAME and REGISTRY_PASSWORD for the
// target's registry when both are set, and the docker and podman config
// files for every other registry (a base image's).
func registryAuth(getenv func(string) string, t Target) authn.Keychain {
	user, pass := getenv("REGISTRY_USERNAME"), getenv("REGISTRY_PASSWORD")
	repo, err := name.NewRepository(t.Repo())
	if user == "" || pass == "" || t.Registry == "" || err != nil {
		return authn.DefaultKeychain
	}
	return envKeychain{registry: repo.RegistryStr(), auth: authn.FromConfig(authn.AuthConfig{Username: user, Password: pass})}
}

// envKeychain answers the target registry with the credentials from the
// environment and defers to the default keychain for the others.
type envKeychain struct {
	registry string
	auth     authn.Authenticator
}

func (k envKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	if r.RegistryStr() == k.registry {
		return k.auth, nil
	}
	return authn.DefaultKeychain.Resolve(r)
}
