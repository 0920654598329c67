package verify

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/patchkit/patchkit/internal/apply"
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

// PullResolver finds the commit that merged a pull request. *ghapi.Client
// is one; verify uses it, when the online client has it, for Origins that
// name a PR rather than a commit.
type PullResolver interface {
	PullMergeCommit(ctx context.Context, owner, repo string, number int) (string, error)
}

var _ PullResolver = (*ghapi.Client)(nil)

// checkBackport grades one patch against the commit it names, or the
// commits, combined (gradeCombined). Identical and equivalent pass. Differs
// fails for Origin: upstream (taken as is, so it must match) and warns for a
// backport (adapted on purpose; the interdiff shows how). A commit that
// upstream does not have fails. A PR is graded as its merge commit, which
// only --online can find; offline it is skipped, saying so.
func (v *verifier) checkBackport(ctx context.Context, p *series.Patch) (Check, error) {
	o := p.Header.Origin
	if p.Reference != nil {
		return v.gradeOne(ctx, p, p.Reference.Commit, p.Reference.Line, "")
	}
	switch {
	case o.Commit == "" && o.PR == 0:
		return Check{Status: StatusSkip, Message: "names no upstream commit"}, nil
	case o.Kind != series.KindUpstream && o.Kind != series.KindBackport:
		return Check{Status: StatusSkip, Message: fmt.Sprintf("Origin: %s: not compared with upstream", o.Kind)}, nil
	}
	origins := p.Header.Origins
	if len(origins) == 0 {
		origins = []series.Origin{o}
	}
	ids, notes, c, ok, err := v.originCommits(ctx, origins)
	if err != nil || !ok {
		return c, err
	}
	if len(ids) == 1 {
		return v.gradeOne(ctx, p, ids[0], o.Line, strings.Join(notes, "; "))
	}
	return v.gradeCombined(ctx, p, ids, o.Line, strings.Join(notes, "; "))
}

// originCommits returns the commit of each origin, in order: its commit,
// or for a PR the merge commit the GitHub API gives (with a note saying
// so). When a PR cannot be resolved, ok is false and c is the check to
// report: skip offline, warn for a PR not merged or an API error, fail for a
// PR GitHub does not have.
func (v *verifier) originCommits(ctx context.Context, origins []series.Origin) (ids, notes []string, c Check, ok bool, err error) {
	for _, o := range origins {
		if o.Commit != "" {
			ids = append(ids, o.Commit)
			continue
		}
		what := o.URL
		if what == "" {
			what = fmt.Sprintf("#%d", o.PR)
		}
		pulls, online := v.opts.github.(PullResolver)
		if !online {
			return nil, nil, Check{Status: StatusSkip, Line: o.Line, Message: fmt.Sprintf(
				"not compared: Origin names pull request %s, not a commit; verify --online resolves its merge commit through the GitHub API (or name the commit)", what)}, false, nil
		}
		owner, repo, found := ghapi.ParseRepo(o.URL, v.opts.githubHost)
		if !found {
			owner, repo, found = ghapi.ParseRepo(v.im.Spec.Upstream.URL, v.opts.githubHost)
		}
		if !found {
			return nil, nil, Check{Status: StatusSkip, Line: o.Line, Message: fmt.Sprintf(
				"not compared: pull request %s is not on GitHub, so its merge commit is unknown; name the commit", what)}, false, nil
		}
		id, err := pulls.PullMergeCommit(ctx, owner, repo, o.PR)
		switch {
		case err == nil:
			ids = append(ids, id)
			notes = append(notes, fmt.Sprintf("PR %s/%s#%d merged as %s", owner, repo, o.PR, short(id)))
		case ctx.Err() != nil:
			return nil, nil, Check{}, false, ctx.Err()
		case errors.Is(err, ghapi.ErrNotFound):
			return nil, nil, Check{Status: StatusFail, Line: o.Line, Message: fmt.Sprintf("differs: upstream has no pull request %s: %v", what, err)}, false, nil
		case errors.Is(err, ghapi.ErrNotMerged):
			return nil, nil, Check{Status: StatusWarn, Line: o.Line, Message: fmt.Sprintf("not compared: %v; name the commit, or wait for the merge", err)}, false, nil
		default:
			return nil, nil, Check{Status: StatusWarn, Line: o.Line, Message: fmt.Sprintf("not compared: resolving pull request %s: %v", what, err)}, false, nil
		}
	}
	return ids, notes, Check{}, true, nil
}

// gradeOne grades p against upstream commit id (full or abbreviated);
// line is where the header names it, note what the message adds in brackets.
func (v *verifier) gradeOne(ctx context.Context, p *series.Patch, id string, line int, note string) (Check, error) {
	o := p.Header.Origin
	cache := v.im.Cache
	var diff []byte
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
	return grade(p, verdict, what, line), nil
}

// grade renders a verdict as the backport check: identical and equivalent
// pass; differs fails for Origin: upstream and reference files, and warns
// for Origin: backport.
func grade(p *series.Patch, verdict backport.Verdict, what string, line int) Check {
	o := p.Header.Origin
	failDiffers := o.Kind != series.KindBackport || p.Reference != nil
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
	return c
}

// gradeCombined grades p against several upstream commits applied in order
// (backport.Combine): the combined diff for identity, and the first commit's
// parent with that diff applied for equivalence. The commits come from the
// upstream cache (fetched when missing), also with --online.
func (v *verifier) gradeCombined(ctx context.Context, p *series.Patch, ids []string, line int, note string) (Check, error) {
	cache := v.im.Cache
	full := make([]string, len(ids))
	shorts := make([]string, len(ids))
	for i, id := range ids {
		f, err := backport.ResolveCommit(ctx, cache, id)
		switch {
		case err == nil:
		case errors.Is(err, backport.ErrUnknownCommit):
			return Check{Status: StatusFail, Line: line, Message: fmt.Sprintf("differs: upstream %s does not have commit %s (%d of %d)", cache.URL(), id, i+1, len(ids))}, nil
		case errors.Is(err, upstream.ErrOffline):
			return Check{Status: StatusFail, Line: line, Message: fmt.Sprintf("differs: not checked: %v", err)}, nil
		default:
			return Check{}, fmt.Errorf("%s: %w", p.Path, err)
		}
		full[i], shorts[i] = f, short(f)
	}
	what := fmt.Sprintf("upstream %s combined (%d commits, in order)", strings.Join(shorts, "+"), len(ids))
	if note != "" {
		what += " [" + note + "]"
	}
	diff, parent, err := backport.Combine(ctx, cache, full)
	switch {
	case errors.Is(err, backport.ErrNoCombine):
		return Check{Status: StatusFail, Line: line, Message: fmt.Sprintf("differs: cannot compare with %s: %v", what, err)}, nil
	case err != nil:
		return Check{}, fmt.Errorf("%s: %w", p.Path, err)
	}
	trees, err := combinedTrees(cache, parent, diff)
	if err != nil {
		return Check{}, fmt.Errorf("%s: %w", p.Path, err)
	}
	verdict, err := backport.Compare(p, diff, trees)
	if err != nil {
		return Check{Status: StatusFail, Line: line, Message: fmt.Sprintf("differs: cannot compare with %s: %v", what, err)}, nil
	}
	return grade(p, verdict, what, line), nil
}

// combinedTrees are the first commit's parent and that parent with the
// combined diff applied, in memory.
func combinedTrees(c *upstream.Cache, parent string, diff []byte) (*backport.Trees, error) {
	var base tree.Source = tree.Map{}
	if parent != "" {
		var err error
		if base, err = c.Source(parent); err != nil {
			return nil, err
		}
	}
	up, err := series.Parse("combined upstream diff", diff)
	if err != nil {
		return nil, fmt.Errorf("parsing the combined upstream diff: %w", err)
	}
	a := apply.New(base, apply.WithoutWhitespaceCheck())
	if r := a.Apply(up); r.Status != apply.StatusApplied {
		return nil, fmt.Errorf("the combined upstream diff does not apply to its parent: %+v", r.Errors)
	}
	return &backport.Trees{Parent: base, Commit: a}, nil
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
