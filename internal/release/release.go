package release

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/gate"
	"github.com/patchkit/patchkit/internal/image"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/stamp"
	"github.com/patchkit/patchkit/internal/tree"
	"github.com/patchkit/patchkit/internal/txn"
	"github.com/patchkit/patchkit/internal/upstream"
)

// DefaultLayout is where the OCI layout goes without Push or OCILayout,
// under the root.
const DefaultLayout = "_output/%s/oci"

// Request is one image to release and how.
type Request struct {
	Image     string // the unit: its directory or unique name
	Builder   string // auto, buildah, docker or native; "" is build.builder
	Registry  string // "" is $REGISTRY
	Tag       string // "" is $IMAGE_TAG, else image.tag
	Push      bool   // push to the registry
	OCILayout string // write an OCI layout here; "" is DefaultLayout without Push
	Stamp     bool   // write the digest into the spec's stamp targets
	// RegistryTimeout bounds connecting to the registry and waiting for
	// each answer's headers; PushTimeout the whole push with its retries
	// and the readback.
	RegistryTimeout, PushTimeout time.Duration
	// Getenv reads REGISTRY, IMAGE_TAG, SOURCE_DATE_EPOCH and the registry
	// credentials.
	Getenv func(string) string
	// Progress receives one line per stage; nil discards it.
	Progress io.Writer

	// Options of the gate, buildah and the registry (test seams).
	GateOptions     []gate.Option
	BuildahOptions  []image.BuildahOption
	RegistryOptions []image.RegistryOption
}

// Result is what a release did. OK is false when the series does not apply
// or the gate failed (a finding; Message says which), and then nothing was
// built, published or stamped.
type Result struct {
	Image   string
	OK      bool
	Message string
	Gate    *gate.Result // the gate's run; nil without a test
	// Digest and Reference (registry/repository:tag@digest) of the
	// published image; "" when it stopped before.
	Digest, Reference string
	Builder           string // the builder used
	Pushed            bool   // the registry has the image
	OCILayout         string // the layout directory written, if any
	Stamped           []stamp.Change
}

// placeholder is a well-formed digest for checking stamp targets before the build.
var placeholder = "sha256:" + strings.Repeat("0", 64)

// Run releases one image unit. The stages, in order:
//
//  1. check: spec, builder, target and stamp targets, before any network;
//  2. apply the series (a series that does not apply is a finding);
//  3. gate: the regression test on the patched tree (a failure is a finding);
//  4. build from the patched tree, without the injected tests;
//  5. publish: registry (Push) and/or OCI layout;
//  6. stamp (Stamp), only once the image is published.
//
// A damaged cache is never a verdict: online it is repaired and the release
// run again (every read of the cache comes before anything is pushed or
// stamped); offline it is a cache fault.
func Run(ctx context.Context, env pipeline.Env, req Request) (Result, error) {
	if req.Getenv == nil {
		req.Getenv = os.Getenv
	}
	if req.Progress == nil {
		req.Progress = io.Discard
	}
	env.Shallow = true // reads the pin's tree, not its history
	units, err := pipeline.Each(ctx, pipeline.Runner{Env: env, Repair: true}, []string{req.Image}, func(ctx context.Context, _ string) (Result, error) {
		return runOnce(ctx, env, req)
	})
	if err != nil {
		return Result{Image: req.Image}, err
	}
	return units[0].Result, nil
}

func runOnce(ctx context.Context, env pipeline.Env, req Request) (Result, error) {
	root := env.Root
	out := Result{Image: req.Image, OK: true}

	// 1. Check.
	s, err := spec.Load(root, req.Image)
	if err != nil {
		return out, err
	}
	builderName := req.Builder
	if builderName == "" {
		builderName = s.Build.Builder
	}
	if err := s.CheckBuild(builderName); err != nil {
		return out, err
	}
	target, err := ResolveTarget(s, req.Registry, req.Tag, req.Getenv)
	if err != nil {
		return out, err
	}
	if req.Push && target.Registry == "" {
		return out, &diag.UsageError{Err: errors.New("--push needs a registry: give --registry or set REGISTRY")}
	}
	if req.Stamp {
		if _, err := stamp.Prepare(root, s, target.Value(placeholder)); err != nil {
			return out, err
		}
	}
	created, err := sourceDateEpoch(req.Getenv)
	if err != nil {
		return out, err
	}

	// 2. Apply.
	im, err := pipeline.Prepare(ctx, env, req.Image, "")
	if err != nil {
		return out, err
	}
	defer im.Close()
	res, src, err := im.Apply()
	if err != nil {
		return out, err
	}
	if !res.OK {
		var failed []string
		for _, p := range res.Patches {
			if p.Status != apply.StatusApplied {
				failed = append(failed, p.Name)
			}
		}
		out.OK = false
		out.Message = fmt.Sprintf("the series does not apply to %s: %s fails (see patchkit apply %s)", im.Ref, strings.Join(failed, ", "), req.Image)
		return out, nil
	}

	// 3. Gate.
	if im.Spec.Test != nil {
		g, err := gate.New(root, im.Spec, append([]gate.Option{
			gate.WithOffline(env.Offline), gate.WithProgress(req.Progress),
		}, req.GateOptions...)...)
		if err != nil {
			return out, err
		}
		gr, err := g.Run(ctx, src, res.Changes)
		if err != nil {
			return out, err
		}
		out.Gate = gr
		if !gr.OK {
			out.OK = false
			out.Message = "gate failed: " + gr.Message
			return out, nil
		}
	}

	// 4. Build.
	tmp, err := os.MkdirTemp("", "patchkit-build-*")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(tmp)
	ctxDir := filepath.Join(tmp, "src")
	if err := tree.WriteAtomic(ctxDir, src, res.Changes); err != nil {
		return out, fmt.Errorf("writing the build context: %w", err)
	}
	if created.IsZero() {
		c, err := im.Cache.Commit(im.Commit)
		if err != nil {
			return out, fmt.Errorf("reading commit %s: %w", im.Commit, err)
		}
		created = c.Committer.When.UTC()
	}
	breq := request(root, s, im, ctxDir, created)
	auth := registryAuth(req.Getenv, target)
	b, err := chooseBuilder(ctx, builderName, s, tmp, auth, req.BuildahOptions)
	if err != nil {
		return out, err
	}
	if env.Offline && b.Name() == "native" && breq.Base != "" && breq.Base != "scratch" && !strings.HasPrefix(breq.Base, "oci:") {
		return out, &diag.UsageError{Err: fmt.Errorf("--offline forbids the network, and build.base %s is in a registry: use scratch or oci:<dir>", breq.Base)}
	}
	if req.Push && b.Name() == "docker" {
		breq.Push = target.Repo() + ":" + target.Tag
	}
	fmt.Fprintf(req.Progress, "build: %s with %s\n", req.Image, b.Name())
	built, err := b.Build(ctx, breq)
	if err != nil {
		return out, err
	}
	defer built.Close()

	// 5. Publish.
	pubs, layoutDir, err := publishers(root, target, auth, req)
	if err != nil {
		return out, err
	}
	fmt.Fprintf(req.Progress, "build: publishing %s\n", target.Reference(built.Digest.String()))
	pub, err := pubs.Publish(ctx, built, target.Tag)
	if err != nil {
		return out, err
	}
	if err := ctx.Err(); err != nil {
		return out, err
	}
	digest := pub.Digest.String()
	out.Digest, out.Reference, out.Builder, out.Pushed, out.OCILayout = digest, target.Reference(digest), b.Name(), req.Push, layoutDir

	// 6. Stamp, now that the image is where the reference says.
	if req.Stamp {
		v := target.Value(digest)
		v.Series, v.By = series.Idents(im.Patches), stamp.ByBuild
		plan, err := stamp.Prepare(root, s, v)
		if err != nil {
			return out, err
		}
		if err := plan.WriteContext(ctx); err != nil {
			return out, err
		}
		out.Stamped = plan.Changes
	}
	return out, nil
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

// publishers are the registry (with Push) and the OCI layout (with
// OCILayout, or by default without Push); layoutDir is "" when none.
func publishers(root string, target Target, auth authn.Keychain, req Request) (_ image.Publisher, layoutDir string, _ error) {
	var pubs []image.Publisher
	if req.Push {
		reg, err := image.NewRegistry(target.Repo(), append([]image.RegistryOption{
			image.WithKeychain(auth), image.WithTimeouts(req.RegistryTimeout, req.PushTimeout),
		}, req.RegistryOptions...)...)
		if err != nil {
			return nil, "", &diag.UsageError{Err: err}
		}
		pubs = append(pubs, reg)
	}
	layoutDir = req.OCILayout
	if layoutDir == "" && !req.Push {
		layoutDir = filepath.Join(root, fmt.Sprintf(DefaultLayout, req.Image))
		if _, err := txn.Resolve(root, fmt.Sprintf(DefaultLayout, req.Image)); err != nil {
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

// chooseBuilder makes the builder named builderName, or picks one for auto.
func chooseBuilder(ctx context.Context, builderName string, s *spec.Spec, tmp string, auth authn.Keychain, buildahOpts []image.BuildahOption) (image.Builder, error) {
	docker := func(o ...image.DockerOption) image.Builder {
		return image.NewDocker(append([]image.DockerOption{image.WithDockerTempDir(tmp)}, o...)...)
	}
	buildah := func() image.Builder {
		return image.NewBuildah(append([]image.BuildahOption{image.WithBuildahTempDir(tmp)}, buildahOpts...)...)
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
		return nil, &diag.UsageError{Err: err}
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
		return time.Time{}, &diag.UsageError{Err: fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a number of seconds", v)}
	}
	return time.Unix(n, 0).UTC(), nil
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
