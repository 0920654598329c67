package image

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Native builds an image with go-containerregistry alone: a base image and
// one layer of files from the tree. It needs no external tool and is
// reproducible: the same base, files and Request.Created give the same digest.
type Native struct {
	platform v1.Platform
	remote   []remote.Option
	tmpDir   string
}

var _ Builder = (*Native)(nil)

// NativeOption configures NewNative.
type NativeOption func(*Native)

// WithPlatform sets the platform of the image: the one picked from a
// multi-platform base, and the one a scratch image declares. The default is
// linux and the machine's architecture.
func WithPlatform(p v1.Platform) NativeOption {
	return func(n *Native) { n.platform = p }
}

// WithBaseRemote adds go-containerregistry options (authentication, a
// transport) for pulling a base image from a registry.
func WithBaseRemote(opts ...remote.Option) NativeOption {
	return func(n *Native) { n.remote = append(n.remote, opts...) }
}

// WithLayerDir writes the layer file under dir instead of the system's
// temporary directory; Result.Close removes it.
func WithLayerDir(dir string) NativeOption {
	return func(n *Native) { n.tmpDir = dir }
}

// NewNative returns the native builder.
func NewNative(opts ...NativeOption) *Native {
	n := &Native{platform: v1.Platform{OS: "linux", Architecture: runtime.GOARCH}}
	for _, o := range opts {
		o(n)
	}
	return n
}

// Name implements Builder.
func (n *Native) Name() string { return "native" }

// Available implements Builder: the native builder always is.
func (n *Native) Available(context.Context) error { return nil }

// Build implements Builder.
func (n *Native) Build(ctx context.Context, req Request) (*Result, error) {
	if len(req.Files) == 0 {
		return nil, errors.New("native build: no files to add (build.files is empty)")
	}
	created := epoch(req.Created)
	base, err := n.base(ctx, req.Base)
	if err != nil {
		return nil, err
	}
	mt, err := base.MediaType()
	if err != nil {
		return nil, fmt.Errorf("reading the base image %s: %w", req.Base, err)
	}
	layerType := types.OCILayer
	if mt == types.DockerManifestSchema2 {
		layerType = types.DockerLayer
	}
	root, err := os.OpenRoot(req.ContextDir)
	if err != nil {
		return nil, fmt.Errorf("opening the patched tree: %w", err)
	}
	defer root.Close()
	layer, err := writeLayer(ctx, root, req.Files, created, n.tmpDir, layerType)
	if err != nil {
		return nil, err
	}
	res := &Result{Builder: n.Name(), cleanup: []func() error{func() error { return os.Remove(layer.path) }}}
	img, err := n.assemble(base, layer, req, created)
	if err == nil {
		res.Image = img
		res.Digest, err = img.Digest()
	}
	if err != nil {
		res.Close()
		return nil, err
	}
	return res, nil
}

func (n *Native) assemble(base v1.Image, layer v1.Layer, req Request, created time.Time) (v1.Image, error) {
	var files []string
	for _, f := range req.Files {
		files = append(files, f.To)
	}
	img, err := mutate.Append(base, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   v1.Time{Time: created},
			CreatedBy: "patchkit native: " + strings.Join(files, " "),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("adding the layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("reading the image config: %w", err)
	}
	cf = cf.DeepCopy()
	if len(req.Labels) > 0 {
		if cf.Config.Labels == nil {
			cf.Config.Labels = map[string]string{}
		}
		for k, v := range req.Labels {
			cf.Config.Labels[k] = v
		}
	}
	cf.Created = v1.Time{Time: created}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("writing the image config: %w", err)
	}
	if len(req.Annotations) > 0 {
		img = mutate.Annotations(img, req.Annotations).(v1.Image)
	}
	return img, nil
}

// base resolves build.base: scratch, oci:<dir> or a registry reference.
func (n *Native) base(ctx context.Context, ref string) (v1.Image, error) {
	switch {
	case ref == "" || ref == "scratch":
		img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
			OS:           n.platform.OS,
			Architecture: n.platform.Architecture,
			Variant:      n.platform.Variant,
			RootFS:       v1.RootFS{Type: "layers"},
		})
		if err != nil {
			return nil, err
		}
		img = mutate.MediaType(img, types.OCIManifestSchema1)
		return mutate.ConfigMediaType(img, types.OCIConfigJSON), nil
	case strings.HasPrefix(ref, "oci:"):
		dir := strings.TrimPrefix(ref, "oci:")
		idx, err := layout.ImageIndexFromPath(dir)
		if err != nil {
			return nil, fmt.Errorf("reading the base OCI layout %s: %w", dir, err)
		}
		img, err := pickImage(idx, n.platform)
		if err != nil {
			return nil, fmt.Errorf("base OCI layout %s: %w", dir, err)
		}
		return img, nil
	default:
		r, err := name.ParseReference(ref)
		if err != nil {
			return nil, fmt.Errorf("parsing the base image %q: %w", ref, err)
		}
		opts := append([]remote.Option{remote.WithContext(ctx), remote.WithPlatform(n.platform)}, n.remote...)
		img, err := remote.Image(r, opts...)
		if err != nil {
			return nil, fmt.Errorf("pulling the base image %s: %w", ref, err)
		}
		return img, nil
	}
}

// pickImage returns the image of an index: its only image, or the one for
// platform, looking into nested indexes.
func pickImage(idx v1.ImageIndex, platform v1.Platform) (v1.Image, error) {
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var found []v1.Descriptor
	for _, d := range im.Manifests {
		switch {
		case d.MediaType.IsIndex():
			child, err := idx.ImageIndex(d.Digest)
			if err != nil {
				return nil, err
			}
			img, err := pickImage(child, platform)
			if err == nil {
				return img, nil
			}
		case d.MediaType.IsImage():
			if len(im.Manifests) == 1 || d.Platform == nil || d.Platform.Satisfies(platform) {
				found = append(found, d)
			}
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no image for %s", platform.String())
	case 1:
		return idx.Image(found[0].Digest)
	}
	return nil, fmt.Errorf("%d images for %s: keep one image in the layout", len(found), platform.String())
}
