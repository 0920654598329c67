package backport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchkit/patchkit/internal/upstream"
)

// emptyTree is git's empty tree, the parent of a root commit.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// ErrNoCombine is wrapped by Combine's error when a commit's diff does not
// apply after the ones before it: the commits are not one line of changes.
var ErrNoCombine = errors.New("the commits do not combine")

// Combine returns the combined diff of commits (full ids, in the order they
// apply) and the parent it is taken from: the first commit's first parent
// (git's empty tree for a root commit). The git CLI is the engine: on a
// temporary index it reads the parent's tree, applies each commit's diff
// (Show) with `git apply --cached` in order, writes the tree and prints
// `git diff-tree -p --binary -M <parent> <tree>`. For consecutive commits
// A..B that is `git diff A^ B`; for commits that are not consecutive it is
// their changes alone, as a backport of several picks would carry them.
// Objects go to a temporary directory; the cache is only read. A diff that
// does not apply after the earlier ones wraps ErrNoCombine.
func Combine(ctx context.Context, c *upstream.Cache, commits []string) (diff []byte, parent string, err error) {
	if len(commits) == 0 {
		return nil, "", fmt.Errorf("combining: no commits")
	}
	for _, id := range commits {
		if !fullID.MatchString(id) {
			return nil, "", fmt.Errorf("combining %q: not a full commit id", id)
		}
	}
	first, err := ReadCommit(c, commits[0])
	if err != nil {
		return nil, "", err
	}
	parent = first.Parent()
	base := parent
	if base == "" {
		base = emptyTree
	}
	tmp, err := os.MkdirTemp("", "patchkit-combine-")
	if err != nil {
		return nil, "", fmt.Errorf("combining: %w", err)
	}
	defer os.RemoveAll(tmp)
	objects := filepath.Join(tmp, "objects")
	if err := os.Mkdir(objects, 0o700); err != nil {
		return nil, "", fmt.Errorf("combining: %w", err)
	}
	g := scratchGit{cache: c, env: []string{
		"GIT_INDEX_FILE=" + filepath.Join(tmp, "index"),
		"GIT_OBJECT_DIRECTORY=" + objects,
		"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + filepath.Join(c.Path(), "objects")}}
	if _, err := g.run(ctx, nil, "read-tree", base); err != nil {
		return nil, "", err
	}
	for i, id := range commits {
		d, err := Show(ctx, c, id)
		if err != nil {
			return nil, "", err
		}
		if len(bytes.TrimSpace(d)) == 0 {
			continue // an empty commit changes nothing
		}
		if _, err := g.run(ctx, d, "apply", "--cached", "--binary", "--whitespace=nowarn"); err != nil {
			if ctx.Err() != nil {
				return nil, "", ctx.Err()
			}
			return nil, "", fmt.Errorf("commit %d of %d, %s, does not apply after the ones before it: %w: %v", i+1, len(commits), id, ErrNoCombine, err)
		}
	}
	tree, err := g.run(ctx, nil, "write-tree")
	if err != nil {
		return nil, "", err
	}
	diff, err = g.run(ctx, nil, "diff-tree", "-p", "--binary", "-M", "--no-color", "--no-ext-diff", "--no-textconv",
		base, strings.TrimSpace(string(tree)))
	if err != nil {
		return nil, "", err
	}
	return diff, parent, nil
}

// scratchGit runs git on a bare cache (through its one runner) with a
// scratch index and object store.
type scratchGit struct {
	cache *upstream.Cache
	env   []string
}

func (g scratchGit) run(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	return g.cache.Git(ctx, upstream.GitRun{Args: args, Stdin: stdin, Env: g.env})
}
