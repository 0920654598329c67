package image

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Request is one image to build.
type Request struct {
	// ContextDir is the patched tree on disk: the build context of a
	// Dockerfile, and where the native builder reads Files from.
	ContextDir string
	// Dockerfile is the Dockerfile's path (buildah, docker).
	Dockerfile string
	// Base is the native builder's base image: "scratch", "oci:<dir>" (an
	// OCI image layout; an absolute dir), or a registry reference.
	Base string
	// Files are what the native builder adds on top of Base, in one layer.
	Files []File
	// Created is the image's creation time and every added file's mtime:
	// the same inputs and Created give the same digest. The zero time means
	// the Unix epoch.
	Created time.Time
	// Annotations go on the image manifest; Labels into its config.
	Annotations map[string]string
	Labels      map[string]string
	// Push, when set, is the reference (registry/repository:tag) that a
	// builder which publishes by itself (docker buildx) pushes to. The other
	// builders ignore it and leave pushing to a Publisher.
	Push string
	// Target is the Dockerfile stage to build (--target), "" for the last
	// (buildah, docker).
	Target string
	// BuildArgs are passed as --build-arg NAME=value (buildah, docker).
	BuildArgs map[string]string
}

// The modes of a File that names none, after its source in the tree.
const (
	DefaultFileMode os.FileMode = 0o644
	DefaultExecMode os.FileMode = 0o755
)

// File is one file the native builder copies from the tree into the image.
type File struct {
	// From is the file's path in the tree (ContextDir), slash-separated.
	From string
	// To is its absolute path in the image.
	To string
	// Mode is its permission bits (with os.ModeSetuid, os.ModeSetgid,
	// os.ModeSticky); 0 means DefaultExecMode for an executable source,
	// else DefaultFileMode.
	Mode os.FileMode
	// Capabilities are Linux file capabilities (cap_net_bind_service),
	// written as setcap <caps>=ep writes them.
	Capabilities []string
}

// Result is a built image.
type Result struct {
	// Image is the image, held by this process; nil when the builder pushed
	// it itself (see Pushed).
	Image v1.Image
	// Digest is the image manifest's digest.
	Digest v1.Hash
	// Pushed is the reference the builder pushed the image to, without its
	// digest, or "".
	Pushed string
	// Builder names the builder that made it.
	Builder string

	cleanup []func() error
}

// Close removes what backs the image on disk (a temporary layout, a layer
// file). Publish the image before closing it.
func (r *Result) Close() error {
	var errs []error
	for i := len(r.cleanup) - 1; i >= 0; i-- {
		errs = append(errs, r.cleanup[i]())
	}
	r.cleanup = nil
	return errors.Join(errs...)
}

// Builder builds an image. Implementations: *Buildah, *Docker, *Native.
type Builder interface {
	// Name is the builder's name as build.builder spells it.
	Name() string
	// Available returns nil if the builder can run on this machine, else an
	// error that says how to fix that.
	Available(ctx context.Context) error
	// Build builds the image. A cancelled context stops it and leaves
	// nothing behind.
	Build(ctx context.Context, req Request) (*Result, error)
}

// Published is where an image was published.
type Published struct {
	// Reference is the image's full reference: registry/repository:tag@digest
	// for a registry, oci:<dir>:<tag>@digest for a layout.
	Reference string
	// Repository is registry/repository, or the layout's dir.
	Repository string
	Tag        string
	Digest     v1.Hash
}

// Publisher publishes a built image under a tag. Implementations:
// *Registry, *Layout, and Multi, which wraps several.
type Publisher interface {
	Publish(ctx context.Context, res *Result, tag string) (*Published, error)
}

// ErrNoBuilder is returned by Auto when no candidate is available.
var ErrNoBuilder = errors.New("no builder is available")

// Auto returns the first available of candidates (docker buildx, buildah,
// native is the order build.builder auto uses).
func Auto(ctx context.Context, candidates ...Builder) (Builder, error) {
	var why []string
	for _, b := range candidates {
		err := b.Available(ctx)
		if err == nil {
			return b, nil
		}
		why = append(why, fmt.Sprintf("%s: %v", b.Name(), err))
	}
	return nil, fmt.Errorf("%w: %s", ErrNoBuilder, strings.Join(why, "; "))
}

func epoch(t time.Time) time.Time {
	if t.IsZero() {
		return time.Unix(0, 0).UTC()
	}
	return t.UTC().Truncate(time.Second)
}
