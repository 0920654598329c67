package release

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/stamp"
)

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
		return t, &diag.UsageError{Err: fmt.Errorf("%s %q is not a valid tag", source, t.Tag)}
	}
	if _, err := name.NewRepository(t.Repo()); err != nil {
		return t, &diag.UsageError{Err: fmt.Errorf("registry %q: %s is not a valid repository: %v", t.Registry, t.Repo(), err)}
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
