package backport

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/patchkit/patchkit/internal/lazyre"
	"github.com/patchkit/patchkit/internal/upstream"
)

// ErrUnknownCommit is wrapped by errors for a commit that the upstream does
// not have (after fetching, unless offline).
var ErrUnknownCommit = errors.New("upstream does not have the commit")

// git runs git on the bare repository of c (upstream's Cache.Git) and
// returns its stdout. An error carries git's stderr; one that says the cache
// is damaged is the cache's *upstream.CacheFaultError.
func git(ctx context.Context, c *upstream.Cache, args ...string) ([]byte, error) {
	out, err := c.Git(ctx, upstream.GitRun{Args: args})
	if errors.Is(err, upstream.ErrNoGit) {
		return nil, fmt.Errorf("the diff of an upstream commit needs the git CLI: %w", err)
	}
	return out, err
}

// Show returns the diff of commit (a full id) in the upstream cache as
// `git show --format= --binary` prints it, which is also the text of
// GitHub's .diff and what `git patch-id --stable` reads: no commit message,
// abbreviated index lines, renames detected, binary files with their data.
// A merge shows its diff against its first parent, as GitHub does.
func Show(ctx context.Context, c *upstream.Cache, commit string) ([]byte, error) {
	if !fullID.MatchString(commit) {
		return nil, fmt.Errorf("showing %q: not a full commit id", commit)
	}
	out, err := git(ctx, c, "show", "--format=", "--binary", "--no-color", "--no-ext-diff",
		"--no-textconv", "--diff-merges=first-parent", commit)
	if err != nil {
		return nil, fmt.Errorf("showing commit %s of %s: %w", commit, c.URL(), err)
	}
	return out, nil
}

var (
	fullID = lazyre.New(`^[0-9a-f]{40}$`)
	// revRe is what ResolveCommit accepts: ids, tags and branch names.
	revRe = lazyre.New(`^[0-9A-Za-z_][0-9A-Za-z._/+-]*$`)
	hexRe = lazyre.New(`^[0-9a-fA-F]{4,40}$`)
)

// ResolveCommit returns the full id of rev in the upstream cache: a full or
// abbreviated commit id, a tag or a branch. When the cache lacks it and is
// not offline, it fetches first: a full id by id, anything else by
// refreshing the cache. A commit the upstream does not have wraps
// ErrUnknownCommit; offline, a commit the cache lacks wraps
// upstream.ErrOffline.
func ResolveCommit(ctx context.Context, c *upstream.Cache, rev string) (string, error) {
	if !revRe.MatchString(rev) || strings.Contains(rev, "..") {
		return "", fmt.Errorf("%q is not a commit id, tag or branch name", rev)
	}
	id, err := lookup(ctx, c, rev)
	if err == nil || !errors.Is(err, ErrUnknownCommit) {
		return id, err
	}
	if c.Offline() {
		return "", fmt.Errorf("%w: commit %s is not in the cache of %s; run once without --offline to fetch it", upstream.ErrOffline, rev, c.URL())
	}
	if fullID.MatchString(strings.ToLower(rev)) {
		err = c.Ensure(ctx, strings.ToLower(rev))
		if err != nil && !errors.Is(err, upstream.ErrRefNotFound) {
			return "", err
		}
	} else if err := c.Fetch(ctx); err != nil {
		return "", err
	}
	return lookup(ctx, c, rev)
}

// lookup resolves rev in the cache without fetching.
func lookup(ctx context.Context, c *upstream.Cache, rev string) (string, error) {
	if id, err := c.Resolve(rev); err == nil {
		return commitOf(ctx, c, id, rev)
	}
	if !hexRe.MatchString(rev) {
		return "", fmt.Errorf("%w: %s has no commit, tag or branch %q", ErrUnknownCommit, c.URL(), rev)
	}
	return commitOf(ctx, c, strings.ToLower(rev), rev)
}

// commitOf peels rev (an id, or an abbreviation) to a full commit id with
// git rev-parse, which also knows abbreviated ids.
func commitOf(ctx context.Context, c *upstream.Cache, rev, shown string) (string, error) {
	out, err := git(ctx, c, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if errors.Is(err, upstream.ErrCacheDamaged) {
			return "", err
		}
		return "", fmt.Errorf("%w: %s has no commit %s", ErrUnknownCommit, c.URL(), shown)
	}
	return strings.TrimSpace(string(out)), nil
}

// Commit is an upstream commit's metadata.
type Commit struct {
	// ID is the full commit id.
	ID string
	// Parents are the full ids of its parents; the first is the one Show
	// diffs against.
	Parents []string
	// Subject is the first paragraph of the message on one line; Body the
	// rest, trimmed.
	Subject string
	Body    string
	// Author is "Name <email>".
	Author string
	// AuthorDate is when it was written.
	AuthorDate time.Time
}

// Parent is the first parent, "" for a root commit.
func (c *Commit) Parent() string {
	if len(c.Parents) == 0 {
		return ""
	}
	return c.Parents[0]
}

// ReadCommit reads commit id (a full id) from the upstream cache.
func ReadCommit(c *upstream.Cache, id string) (*Commit, error) {
	cm, err := c.Commit(id)
	if err != nil {
		return nil, fmt.Errorf("reading commit %s of %s: %w", id, c.URL(), err)
	}
	out := &Commit{ID: cm.Hash.String(), Author: fmt.Sprintf("%s <%s>", cm.Author.Name, cm.Author.Email), AuthorDate: cm.Author.When}
	for _, p := range cm.ParentHashes {
		out.Parents = append(out.Parents, p.String())
	}
	out.Subject, out.Body = splitMessage(cm.Message)
	return out, nil
}

// splitMessage splits a commit message as git does: the subject is the
// first paragraph, its lines joined by spaces.
func splitMessage(msg string) (subject, body string) {
	msg = strings.ReplaceAll(msg, "\r\n", "\n")
	msg = strings.TrimLeft(msg, "\n")
	head, rest, _ := strings.Cut(msg, "\n\n")
	subject = strings.Join(strings.Fields(head), " ")
	return subject, strings.Trim(rest, "\n")
}

// IsAncestor reports whether commit a is an ancestor of (or is) commit b in
// the upstream cache; both are full ids.
func IsAncestor(ctx context.Context, c *upstream.Cache, a, b string) (bool, error) {
	_, err := c.Git(ctx, upstream.GitRun{Args: []string{"merge-base", "--is-ancestor", a, b}})
	var ge *upstream.GitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ge) && ge.Code == 1:
		return false, nil
	}
	return false, err
}
