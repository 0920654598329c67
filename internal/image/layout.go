package image

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/match"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// RefNameAnnotation names an image in an OCI layout's index.json by its tag.
const RefNameAnnotation = "org.opencontainers.image.ref.name"

// Layout writes images into an OCI image layout directory, each under its
// tag (org.opencontainers.image.ref.name); a new image replaces the one
// with the same tag.
type Layout struct {
	dir    string
	remote []remote.Option
}

var _ Publisher = (*Layout)(nil)

// LayoutOption configures NewLayout.
type LayoutOption func(*Layout)

// WithLayoutRemote adds go-containerregistry options for fetching an image
// that its builder pushed itself (docker) back from the registry.
func WithLayoutRemote(opts ...remote.Option) LayoutOption {
	return func(l *Layout) { l.remote = append(l.remote, opts...) }
}

// NewLayout returns a publisher to the layout in dir, created when missing.
func NewLayout(dir string, opts ...LayoutOption) (*Layout, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	l := &Layout{dir: abs}
	for _, o := range opts {
		o(l)
	}
	return l, nil
}

// Dir is the layout's directory.
func (l *Layout) Dir() string { return l.dir }

// Publish implements Publisher.
func (l *Layout) Publish(ctx context.Context, res *Result, tag string) (*Published, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	img := res.Image
	if img == nil {
		ref, err := name.ParseReference(res.Pushed + "@" + res.Digest.String())
		if err != nil {
			return nil, fmt.Errorf("OCI layout %s: %w", l.dir, err)
		}
		if img, err = remote.Image(ref, append([]remote.Option{remote.WithContext(ctx)}, l.remote...)...); err != nil {
			return nil, fmt.Errorf("OCI layout %s: fetching %s back: %w", l.dir, ref, err)
		}
	}
	p, err := layout.FromPath(l.dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, os.ErrNotExist) {
		p, err = layout.Write(l.dir, empty.Index)
	}
	if err != nil {
		return nil, fmt.Errorf("OCI layout %s: %w", l.dir, err)
	}
	ann := map[string]string{RefNameAnnotation: tag}
	if err := p.ReplaceImage(img, match.Annotation(RefNameAnnotation, tag), layout.WithAnnotations(ann)); err != nil {
		return nil, fmt.Errorf("writing %s into OCI layout %s: %w", tag, l.dir, err)
	}
	return &Published{
		Reference:  fmt.Sprintf("oci:%s:%s@%s", l.dir, tag, res.Digest),
		Repository: l.dir,
		Tag:        tag,
		Digest:     res.Digest,
	}, nil
}

// ReadLayout returns the image tagged tag in the layout at dir.
func ReadLayout(dir, tag string) (v1.Image, error) {
	idx, manifests, err := readLayoutIndex(dir)
	if err != nil {
		return nil, err
	}
	for _, d := range manifests {
		if d.Annotations[RefNameAnnotation] == tag && d.MediaType.IsImage() {
			return idx.Image(d.Digest)
		}
	}
	return nil, fmt.Errorf("no image tagged %q in %s", tag, dir)
}

// readLayoutIndex opens the OCI layout at dir and returns its index and the
// descriptors the index lists.
func readLayoutIndex(dir string) (v1.ImageIndex, []v1.Descriptor, error) {
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, nil, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, nil, err
	}
	return idx, im.Manifests, nil
}
