package backport

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/txn"
	"github.com/patchkit/patchkit/internal/upstream"
)

// Request asks for a new patch file made from an upstream commit.
type Request struct {
	// Cache is the upstream cache.
	Cache *upstream.Cache
	// RepoURL is the spec's upstream.url, which the Origin and Bug URLs are
	// built from (not a --upstream-url override).
	RepoURL string
	// Display is the patch directory as messages name it (patches/kubeovn).
	Display string
	// Existing is the series as loaded, references materialized.
	Existing []*series.Patch
	// Rev is the commit: a full or abbreviated id, a tag or a branch.
	Rev string
	// PinCommit is the pin resolved; a commit the pin already has is refused.
	PinCommit string
	// Slug names the file (NNNN-<slug>.diff); "" makes one from the subject.
	Slug string
	// Reference asks for a reference file instead of the diff.
	Reference bool
}

// Plan is a new patch file, not yet written.
type Plan struct {
	// Name is the file name, Path the file as messages name it.
	Name, Path string
	// Content is the file's bytes.
	Content []byte
	// Patch is Content parsed; for a reference, materialized, as the series
	// engine will apply it.
	Patch *series.Patch
	// Commit is the upstream commit.
	Commit *Commit
	// PatchID is the commit's `git patch-id --stable`.
	PatchID string
}

// ErrBadRequest is wrapped by errors about the request itself: a commit
// upstream does not have, one the pin or the series already has, a commit
// without a diff, a name that would not sort last.
var ErrBadRequest = errors.New("bad backport request")

// NewPlan makes the patch file for r: a DEP-3 header from the commit
// (Subject, Origin: upstream with the commit URL, Bug from the message's
// references, Author, and the message body), then the commit's diff as
// `git show --format= --binary` prints it; or, for a reference, the header
// with Reference and Patch-Id and no diff. The name takes the last place of
// the series (NextName).
func NewPlan(ctx context.Context, r Request) (*Plan, error) {
	id, err := ResolveCommit(ctx, r.Cache, r.Rev)
	if errors.Is(err, ErrUnknownCommit) {
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	if err != nil {
		return nil, err
	}
	if r.PinCommit != "" {
		has, err := IsAncestor(ctx, r.Cache, id, r.PinCommit)
		if err != nil {
			return nil, err
		}
		if has {
			return nil, fmt.Errorf("%w: the pin already has commit %s", ErrBadRequest, id)
		}
	}
	cm, err := ReadCommit(r.Cache, id)
	if err != nil {
		return nil, err
	}
	diff, err := Show(ctx, r.Cache, id)
	if err != nil {
		return nil, err
	}
	pid, err := series.PatchID(diff)
	if err != nil || len(diff) == 0 {
		return nil, fmt.Errorf("%w: commit %s changes no file", ErrBadRequest, id)
	}
	for _, p := range r.Existing {
		if p.PatchID == pid {
			return nil, fmt.Errorf("%w: the series already has commit %s: %s has its patch-id %s", ErrBadRequest, id, p.Path, pid)
		}
	}
	slug := r.Slug
	if slug == "" {
		if slug = Slug(cm.Subject); slug == "" {
			slug = "backport-" + id[:12]
		}
	}
	names := make([]string, len(r.Existing))
	for i, p := range r.Existing {
		names[i] = p.Name
	}
	name, err := NextName(names, slug, r.Reference)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	h := NewHeader(cm, r.RepoURL)
	var content []byte
	if r.Reference {
		content, err = FormatReference(h, id, pid)
	} else {
		content, err = Format(h, id, diff)
	}
	if err != nil {
		return nil, err
	}
	path := name
	if r.Display != "" {
		path = r.Display + "/" + name
	}
	p, err := series.Parse(path, content)
	if err != nil {
		return nil, fmt.Errorf("the new patch does not parse: %w", err)
	}
	if p, err = series.Materialize(p, diff); err != nil {
		return nil, err
	}
	return &Plan{Name: name, Path: path, Content: content, Patch: p, Commit: cm, PatchID: pid}, nil
}

// Write writes the file into dir (created if missing), atomically and
// without replacing a file of the same name: the content goes to a
// temporary file that is then hard-linked to its name.
func (p *Plan) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("writing %s: %w", p.Path, err)
	}
	tmp, err := os.CreateTemp(dir, "."+p.Name+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", p.Path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(p.Content); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", p.Path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", p.Path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", p.Path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", p.Path, err)
	}
	if err := os.Link(tmp.Name(), filepath.Join(dir, p.Name)); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("writing %s: %w: it already exists", p.Path, ErrBadRequest)
		}
		return fmt.Errorf("writing %s: %w", p.Path, err)
	}
	return nil
}

// WriteRepo writes the file into the repository at root as one transaction
// (txn): under the repository lock (o.Waiting is told when another
// patchkit holds it), never replacing a file of the same name, and
// refused with txn.ErrChanged, nothing written, when the patch directory
// gained or lost a patch file since the plan read the series (existing
// names those it read): a concurrent backport or upgrade is never
// numbered over. p.Path is the file relative to root.
func (p *Plan) WriteRepo(ctx context.Context, root string, existing []string, o txn.Options) error {
	dir := path.Dir(p.Path)
	if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(dir)), 0o755); err != nil {
		return fmt.Errorf("writing %s: %w", p.Path, err)
	}
	set := txn.New(root)
	set.ExpectDir(dir, existing, isPatchName)
	set.Create(p.Path, p.Content)
	if _, err := set.Commit(ctx, o); err != nil {
		return fmt.Errorf("writing %s: %w", p.Path, txn.Explain(err))
	}
	return nil
}

// isPatchName is the series.Load rule: *.diff and *.patch, not hidden.
func isPatchName(name string) bool {
	return !strings.HasPrefix(name, ".") && (path.Ext(name) == ".diff" || path.Ext(name) == ".patch")
}

// ListPatches returns the names of the patch files (*.diff, *.patch, not
// hidden) in dir, none when it does not exist: what WriteRepo checks the
// directory against.
func ListPatches(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if isPatchName(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}
