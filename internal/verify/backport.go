package verify

import (
	"context"
	"errors"
	"fmt"

	"github.com/patchkit/patchkit/internal/backport"
	"github.com/patchkit/patchkit/internal/ghapi"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/tree"
	"github.com/patchkit/patchkit/internal/upstream"
)

// CommitDiffer gives the diff of an upstream commit from its forge, as
// GitHub's .diff does. *ghapi.Client is one.
type CommitDiffer interface {
	CommitDiff(ctx context.Context, owner, repo, sha string) (string, error)
}

var _ CommitDiffer = (*ghapi.Client)(nil)

// checkBackports runs the backport check on every patch that names an
// upstream commit.
func (v *verifier) checkBackports(ctx context.Context) error {
	for _, e := range v.entries {
		if e.patch == nil {
			continue
		}
		c, err := v.checkBackport(ctx, e.patch)
		if err != nil {
			return err
		}
		c.Check = CheckBackport
		e.set(c)
	}
	return nil
}

// checkBackport grades one patch against the commit it names. Identical and
// equivalent pass. Differs fails for Origin: upstream (taken as is, so it
// must match) and warns for a backport (adapted on purpose; the interdiff
// shows how). A commit that upstream does not have fails.
func (v *verifier) checkBackport(ctx context.Context, p *series.Patch) (Check, error) {
	o := p.Header.Origin
	id := o.Commit
	if p.Reference != nil {
		id = p.Reference.Commit
	}
	switch {
	case id == "":
		return Check{Status: StatusSkip, Message: "names no upstream commit"}, nil
	case p.Reference == nil && o.Kind != series.KindUpstream && o.Kind != series.KindBackport:
		return Check{Status: StatusSkip, Message: fmt.Sprintf("Origin: %s: not compared with upstream", o.Kind)}, nil
	}
	line := o.Line
	if p.Reference != nil {
		line = p.Reference.Line
	}
	failDiffers := o.Kind != series.KindBackport || p.Reference != nil
	cache := v.im.Cache

	var diff []byte
	var note string
	if v.opts.github != nil {
		owner, repo, ok := v.githubRepo(o)
		switch {
		case !ok:
			note = "not a GitHub repository, so compared with the cached upstream"
		default:
			text, err := v.opts.github.CommitDiff(ctx, owner, repo, id)
			switch {
			case err == nil:
				diff = []byte(text)
			case errors.Is(err, ghapi.ErrNotFound) || errors.Is(err, ghapi.ErrUnprocessable):
				return Check{Status: StatusFail, Line: line, Message: fmt.Sprintf("differs: upstream does not have commit %s: %v", id, err)}, nil
			case ctx.Err() != nil:
				return Check{}, ctx.Err()
			default:
				note = fmt.Sprintf("GitHub: %v; compared with the cached upstream", err)
			}
		}
	}

	full, err := backport.ResolveCommit(ctx, cache, id)
	switch {
	case err == nil:
	case errors.Is(err, backport.ErrUnknownCommit) && diff == nil:
		return Check{Status: StatusFail, Line: line, Message: fmt.Sprintf("differs: upstream %s does not have commit %s", cache.URL(), id)}, nil
	case errors.Is(err, upstream.ErrOffline) && diff == nil:
		return Check{Status: StatusFail, Line: line, Message: fmt.Sprintf("differs: not checked: %v", err)}, nil
	case diff == nil:
		return Check{}, fmt.Errorf("%s: %w", p.Path, err)
	default:
		// GitHub gave the diff; the cache cannot give the trees.
		note = joinNote(note, fmt.Sprintf("the cache lacks the commit (%v)", err))
	}

	var trees *backport.Trees
	subject := ""
	if full != "" {
		if diff == nil {
			if diff, err = backport.Show(ctx, cache, full); err != nil {
				return Check{}, err
			}
		}
		cm, err := backport.ReadCommit(cache, full)
		if err != nil {
			return Check{}, err
		}
		subject = cm.Subject
		if trees, err = commitTrees(cache, cm); err != nil {
			return Check{}, err
		}
		id = full
	}
	verdict, err := backport.Compare(p, diff, trees)
	if err != nil {
		return Check{Status: StatusFail, Line: line, Message: fmt.Sprintf("differs: cannot compare with upstream %s: %v", short(id), err)}, nil
	}
	what := "upstream " + short(id)
	if subject != "" {
		what += fmt.Sprintf(" (%s)", subject)
	}
	if note != "" {
		what += " [" + note + "]"
	}
	c := Check{Line: line}
	switch verdict.Grade {
	case backport.Identical:
		c.Status, c.Message = StatusPass, "identical to "+what
	case backport.Equivalent:
		c.Status, c.Message = StatusPass, fmt.Sprintf("equivalent to %s: %s", what, verdict.Reason)
	default:
		c.Status = StatusWarn
		if failDiffers {
			c.Status = StatusFail
		}
		np, nu := verdict.Count()
		c.Message = fmt.Sprintf("differs from %s: %s; %d changed %s only in the patch, %d only upstream",
			what, verdict.Reason, np, plural(np, "line", "lines"), nu)
		if c.Status == StatusFail && o.Kind == series.KindUpstream && p.Reference == nil {
			c.Message += " (Origin: upstream says it is the commit as is; say Origin: backport if it was adapted)"
		}
	}
	if inter := verdict.Interdiff(); inter != "" && verdict.Grade == backport.Differs {
		c.Message += "\n" + inter
	}
	return c, nil
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// githubRepo finds the GitHub repository of the upstream: the spec's
// upstream.url, else the patch's Origin URL.
func (v *verifier) githubRepo(o series.Origin) (owner, repo string, ok bool) {
	if owner, repo, ok = ghapi.ParseRepo(v.im.Spec.Upstream.URL, v.opts.githubHost); ok {
		return owner, repo, true
	}
	if o.URL != "" {
		return ghapi.ParseRepo(o.URL, v.opts.githubHost)
	}
	return "", "", false
}

// commitTrees returns the commit's first parent (an empty tree for a root
// commit) and the commit.
func commitTrees(c *upstream.Cache, cm *backport.Commit) (*backport.Trees, error) {
	commit, err := c.Source(cm.ID)
	if err != nil {
		return nil, err
	}
	var parent tree.Source = tree.Map{}
	if p := cm.Parent(); p != "" {
		if parent, err = c.Source(p); err != nil {
			return nil, err
		}
	}
	return &backport.Trees{Parent: parent, Commit: commit}, nil
}
