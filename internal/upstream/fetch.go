package upstream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"golang.org/x/sys/unix"
)

// tagsRefSpec keeps every tag, annotated tags as tag objects.
const tagsRefSpec = config.RefSpec("+refs/tags/*:refs/tags/*")

// pinPrefix holds commits fetched by id because no tag or branch reaches them.
const pinPrefix = "refs/patchkit/commits/"

// Fetch refreshes the cache: every tag, the configured branches and the
// default branch (which the cache's HEAD follows). It does nothing offline.
func (c *Cache) Fetch(ctx context.Context) error {
	if c.opts.offline {
		return nil
	}
	lk, err := lockFile(ctx, c.lockPath(), unix.LOCK_EX)
	if err != nil {
		return c.errorf("fetching %s: %w", c.redacted, err)
	}
	defer lk.unlock()
	if err := c.refresh(ctx, fetchReq{}); err != nil {
		return c.errorf("fetching %s: %w", c.redacted, err)
	}
	return nil
}

// fetchReq is what one fetch brings into the cache.
type fetchReq struct {
	// branches are branches to keep besides the default and configured ones.
	branches []string
	// commits are fetched by id into refs/patchkit/commits/.
	commits []plumbing.Hash
	// depth > 0 fetches the refs with that depth into a partial cache. 0
	// fetches their whole history, and completes a partial cache.
	depth int
	// narrow fetches only refs (and commits), not every tag and branch: a
	// partial cache gets just what a run asks for (see WithShallow).
	narrow bool
	// refs are the names a narrow fetch brings: a tag or branch name, a full
	// refname, or HEAD (the default branch). A name the upstream does not
	// advertise is left out.
	refs []string
}

// refresh fetches into the cache under the exclusive lock, with the marker
// file present for the duration so that a killed run is detected.
func (c *Cache) refresh(ctx context.Context, req fetchReq) error {
	return c.withStore(func(s *store) error {
		marker := c.markerPath()
		stamp := fmt.Sprintf("pid %d at %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339))
		if err := os.WriteFile(marker, []byte(stamp), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", marker, err)
		}
		// Another process may have fetched since this one last read the store.
		s.reindexIfChanged()
		err := c.fetchInto(ctx, s, req)
		if errors.Is(err, errRefGone) {
			// A ref the listing named moved or was deleted upstream
			// before git fetch asked for it (see exactSpecs): list
			// again, once.
			c.lastAdv = nil
			err = c.fetchInto(ctx, s, req)
		}
		s.reindexIfChanged()
		// A fetch that failed without being killed leaves a usable cache if
		// the check passes; otherwise the marker stays and Open repairs it.
		if err == nil || s.check() == nil {
			if rerr := os.Remove(marker); rerr != nil && err == nil {
				err = fmt.Errorf("removing %s: %w", marker, rerr)
			}
		}
		return err
	})
}

// advertiseFor is the advertisement for a fetch of req. A narrow fetch (see
// fetchReq) reuses the one this Cache last read, when it names every ref
// asked for: the refs it reads there are checked again by git fetch, which
// fetches what they point at now, and a cold run saves a round trip (one
// that lists an upstream's thousands of refs) per fetch.
func (c *Cache) advertiseFor(ctx context.Context, req fetchReq) (*packp.AdvRefs, error) {
	if ar := c.lastAdv; ar != nil && req.narrow && advertises(ar, req.refs) {
		return ar, nil
	}
	ar, err := c.advertise(ctx)
	if err == nil {
		c.lastAdv = ar
	}
	return ar, err
}

// advertises reports whether ar names each of refs (see namedSpecs).
func advertises(ar *packp.AdvRefs, refs []string) bool {
	for _, r := range refs {
		found := false
		for _, n := range []string{r, "refs/tags/" + r, "refs/heads/" + r} {
			_, ok := ar.References[n]
			found = found || ok
		}
		if !found && r != "HEAD" {
			return false
		}
	}
	return true
}

// advertise asks the upstream for its refs, capabilities and shallow commits.
func (c *Cache) advertise(ctx context.Context) (*packp.AdvRefs, error) {
	connect, idle := c.opts.timeouts()
	actx, cancel := context.WithTimeout(ctx, connect+idle)
	defer cancel()
	ar, err := c.listRefs(actx, c.fetchURL, connect)
	var ne net.Error
	if err != nil && ctx.Err() == nil && (actx.Err() != nil || errors.As(err, &ne) && ne.Timeout()) {
		return nil, &TimeoutError{URL: c.redacted, After: connect + idle, Err: err}
	}
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return nil, fmt.Errorf("the upstream %s has no branches or tags", c.redacted)
	}
	if errors.Is(err, transport.ErrAuthenticationRequired) || errors.Is(err, transport.ErrAuthorizationFailed) ||
		err != nil && isSSH(c.fetchURL) && strings.Contains(err.Error(), "Permission denied") {
		return nil, fmt.Errorf("%w; %s", err, credentialsHint)
	}
	if err != nil {
		return nil, err
	}
	return ar, nil
}

// credentialsHint says where a private upstream's credentials go: never in
// patchkit.yaml (docs/ci.md).
const credentialsHint = "a private upstream takes its credentials from git's url.<base>.insteadOf (the global git configuration, or GIT_CONFIG_COUNT), or GIT_SSH_COMMAND over ssh (docs/ci.md)"

// afterListing, when set, runs between the listing of the refs and the
// fetch; a test seam (an upstream that changes meanwhile).
var afterListing func()

// fetchInto brings s up to date with the upstream: all tags, the default
// branch, the configured branches and req's, and the commits by id, with
// req's depth (see fetchReq). It skips the transfer when
// every wanted ref is already current (and the cache is complete, or the
// request has a depth), records the shallow boundary, points HEAD at the
// default branch, and marks the cache complete after a full fetch.
func (c *Cache) fetchInto(ctx context.Context, s *store, req fetchReq) error {
	ar, err := c.advertiseFor(ctx, req)
	if err != nil {
		return fmt.Errorf("listing refs: %w", err)
	}
	if afterListing != nil {
		afterListing()
	}
	remoteRefs, err := ar.AllReferences()
	if err != nil {
		return fmt.Errorf("listing refs: %w", err)
	}
	var headTarget plumbing.ReferenceName
	if head, err := remoteRefs.Reference(plumbing.HEAD); err == nil && head.Type() == plumbing.SymbolicReference && head.Target().IsBranch() {
		headTarget = head.Target()
	}
	want := map[plumbing.ReferenceName]plumbing.Hash{}
	var specs []config.RefSpec
	if req.narrow {
		specs = namedSpecs(ar, headTarget, req.refs, want)
	} else {
		specs = c.allSpecs(ar, headTarget, req.branches, want)
	}
	var byID []plumbing.Hash
	for _, h := range req.commits {
		// A narrow fetch takes a commit that a tag or branch points at
		// through that ref: no upstream refuses it.
		if n, ok := tipRef(ar, h); ok && req.narrow {
			specs = append(specs, config.RefSpec("+"+n+":"+n))
			want[plumbing.ReferenceName(n)] = ar.References[n]
			continue
		}
		byID = append(byID, h)
	}
	if len(byID) > 0 {
		caps := ar.Capabilities
		if !caps.Supports(capability.AllowReachableSHA1InWant) && !caps.Supports(capability.AllowTipSHA1InWant) {
			return fmt.Errorf("the upstream does not allow fetching commits by id")
		}
		for _, h := range byID {
			name := plumbing.ReferenceName(pinPrefix + h.String())
			specs = append(specs, config.RefSpec("+"+h.String()+":"+name.String()))
			want[name] = h
		}
	}
	partial := isPartial(s.path)
	deepen := req.depth == 0 && !req.narrow && partial
	if deepen {
		specs = append(specs, keptSpecs(s, ar, want)...)
	}
	have := cacheRefs(s)
	stale := staleRefs(s, have, want)
	if len(specs) > 0 && (deepen || len(stale) > 0) {
		if req.depth > 0 && !partial {
			if err := markPartial(s.path); err != nil {
				return err
			}
		}
		if !deepen && !req.narrow && len(stale) < len(want) && len(stale) <= maxExactSpecs {
			// Fetch just the stale refs, by the ids the listing above gave
			// (see exactSpecs): it is the one listing of the run.
			specs = exactSpecs(stale, want)
		}
		if err := c.gitFetch(ctx, s.path, specs, fetchDepth{depth: req.depth, unshallow: deepen && hasShallow(s)}); err != nil {
			return err
		}
		if err := packRefsIfMany(ctx, s.path); err != nil {
			return err
		}
		// git fetch wrote the commit-graph (see gitFetch); a fetch into a
		// cache that had none, or whose graph the integrity check removed,
		// writes it whole.
		if err := ensureCommitGraph(ctx, s); err != nil {
			return err
		}
		s.reindexIfChanged()
	}
	if err := pruneGone(ctx, s, have, ar); err != nil {
		return err
	}
	if err := setHead(s, ar, headTarget); err != nil {
		return err
	}
	if err := updateShallow(s, ar.Shallows); err != nil {
		return fmt.Errorf("recording the shallow boundary: %w", err)
	}
	if deepen {
		if own := ownBoundaries(s, ar.Shallows); len(own) > 0 {
			return fmt.Errorf("the history behind commit %s did not come; the cache stays partial", own[0])
		}
		return completeAfter(s)
	}
	return nil
}

// keptSpecs are refspecs for the refs a partial cache holds beyond a full
// fetch's: other branches the upstream still has, and commits fetched by id
// (when the upstream allows fetching by id). Deepening fetches their history
// too. It adds each to want.
func keptSpecs(s *store, ar *packp.AdvRefs, want map[plumbing.ReferenceName]plumbing.Hash) []config.RefSpec {
	byID := ar.Capabilities.Supports(capability.AllowReachableSHA1InWant) || ar.Capabilities.Supports(capability.AllowTipSHA1InWant)
	refs, err := s.st.IterReferences()
	if err != nil {
		return nil
	}
	var specs []config.RefSpec
	refs.ForEach(func(r *plumbing.Reference) error {
		name := r.Name()
		if _, dup := want[name]; dup || r.Type() != plumbing.HashReference {
			return nil
		}
		switch n := name.String(); {
		case name.IsBranch():
			if h, ok := ar.References[n]; ok {
				specs = append(specs, config.RefSpec("+"+n+":"+n))
				want[name] = h
			}
		case strings.HasPrefix(n, pinPrefix) && byID:
			specs = append(specs, config.RefSpec("+"+r.Hash().String()+":"+n))
			want[name] = r.Hash()
		}
		return nil
	})
	return specs
}

// ownBoundaries are the shallow boundaries of s that the upstream does not
// advertise as its own.
func ownBoundaries(s *store, upstream []plumbing.Hash) []plumbing.Hash {
	list, err := s.st.Shallow()
	if err != nil {
		return nil
	}
	theirs := map[plumbing.Hash]bool{}
	for _, h := range upstream {
		theirs[h] = true
	}
	var own []plumbing.Hash
	for _, h := range list {
		if !theirs[h] {
			own = append(own, h)
		}
	}
	return own
}

// namedSpecs are the refspecs of a narrow fetch: each of refs as the
// upstream advertises it (a tag before a branch of the same name, as resolve
// reads them; HEAD as the default branch). It adds each to want.
func namedSpecs(ar *packp.AdvRefs, headTarget plumbing.ReferenceName, refs []string, want map[plumbing.ReferenceName]plumbing.Hash) []config.RefSpec {
	var specs []config.RefSpec
	for _, r := range refs {
		var names []string
		switch {
		case r == "HEAD":
			names = []string{headTarget.String()}
		case strings.HasPrefix(r, "refs/"):
			names = []string{r}
		default:
			names = []string{"refs/tags/" + r, "refs/heads/" + r}
		}
		for _, n := range names {
			h, ok := ar.References[n]
			if !ok {
				continue
			}
			if _, dup := want[plumbing.ReferenceName(n)]; !dup {
				specs = append(specs, config.RefSpec("+"+n+":"+n))
				want[plumbing.ReferenceName(n)] = h
			}
			break
		}
	}
	return specs
}

// tipRef is a tag or branch the upstream advertises at commit h (an
// annotated tag by its peeled commit); the first by name when several are.
func tipRef(ar *packp.AdvRefs, h plumbing.Hash) (string, bool) {
	var names []string
	for n, t := range ar.References {
		if (strings.HasPrefix(n, "refs/tags/") || strings.HasPrefix(n, "refs/heads/")) && !strings.HasSuffix(n, "^{}") {
			if p, ok := ar.Peeled[n]; ok {
				t = p
			}
			if t == h {
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 {
		return "", false
	}
	sort.Strings(names)
	return names[0], true
}

// allSpecs are the refspecs of a full fetch: every tag, the default branch,
// the configured branches and extra. It adds each to want.
func (c *Cache) allSpecs(ar *packp.AdvRefs, headTarget plumbing.ReferenceName, extra []string, want map[plumbing.ReferenceName]plumbing.Hash) []config.RefSpec {
	for name, h := range ar.References {
		if strings.HasPrefix(name, "refs/tags/") && !strings.HasSuffix(name, "^{}") {
			want[plumbing.ReferenceName(name)] = h
		}
	}
	specs := []config.RefSpec{tagsRefSpec}
	branches := append([]string{headTarget.Short()}, c.opts.branches...)
	branches = append(branches, extra...)
	seen := map[string]bool{}
	for _, b := range branches {
		name := "refs/heads/" + b
		if b == "" || seen[name] {
			continue
		}
		seen[name] = true
		if h, ok := ar.References[name]; ok {
			specs = append(specs, config.RefSpec("+"+name+":"+name))
			want[plumbing.ReferenceName(name)] = h
		}
	}
	return specs
}

// pruneGone deletes the tags and branches of s that the upstream no longer
// lists (ar is its whole listing): a release tag it withdrew, a branch it
// deleted or renamed, as git fetch --prune --prune-tags does. A warm cache
// then holds what a fresh one would, and a run scans no ref a cold run
// would not have. Commits fetched by id (pinPrefix) stay, and so do the
// objects: only the names go. have are the cache's refs as the fetch
// found them (cacheRefs): git fetch writes only refs the listing names, so
// those it does not name are as they were. It is one git update-ref
// transaction, all or nothing, checked against those ids; a killed one
// leaves a lock that the next Open clears (removeGitLocks).
func pruneGone(ctx context.Context, s *store, have map[plumbing.ReferenceName]plumbing.Hash, ar *packp.AdvRefs) error {
	var gone []string
	for name, h := range have {
		n := name.String()
		if !strings.HasPrefix(n, "refs/tags/") && !strings.HasPrefix(n, "refs/heads/") {
			continue
		}
		if _, ok := ar.References[n]; !ok {
			gone = append(gone, "delete "+n+" "+h.String()+"\n")
		}
	}
	if len(gone) == 0 {
		return nil
	}
	sort.Strings(gone)
	if err := maintainIn(ctx, s.path, []byte(strings.Join(gone, "")), "core.logAllRefUpdates=false", "update-ref", "--stdin"); err != nil {
		return fmt.Errorf("dropping the refs upstream no longer lists: %w", err)
	}
	return nil
}

// setHead points the cache's HEAD at the upstream's default branch, or at a
// detached upstream HEAD's commit when the cache has it.
func setHead(s *store, ar *packp.AdvRefs, headTarget plumbing.ReferenceName) error {
	if headTarget != "" {
		cur, err := s.st.Reference(plumbing.HEAD)
		if err != nil || cur.Type() != plumbing.SymbolicReference || cur.Target() != headTarget {
			if err := s.st.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, headTarget)); err != nil {
				return fmt.Errorf("setting HEAD: %w", err)
			}
		}
	} else if ar.Head != nil && s.st.HasEncodedObject(*ar.Head) == nil {
		// A detached upstream HEAD: follow its commit.
		if err := s.st.SetReference(plumbing.NewHashReference(plumbing.HEAD, *ar.Head)); err != nil {
			return fmt.Errorf("setting HEAD: %w", err)
		}
	}
	return nil
}

// hasShallow reports whether s has shallow boundaries.
func hasShallow(s *store) bool {
	list, err := s.st.Shallow()
	return err == nil && len(list) > 0
}

// staleRefs are the wanted refs that the cache, whose refs are have
// (cacheRefs), does not hold at their hash, or whose object is missing
// (store.presence), sorted.
func staleRefs(s *store, have, want map[plumbing.ReferenceName]plumbing.Hash) []plumbing.ReferenceName {
	present, done := s.presence()
	defer done()
	var stale []plumbing.ReferenceName
	for name, h := range want {
		if cur, ok := have[name]; !ok || cur != h || present(h) != nil {
			stale = append(stale, name)
		}
	}
	sort.Slice(stale, func(i, j int) bool { return stale[i] < stale[j] })
	return stale
}

// cacheRefs are the hash refs of s, read once (packed-refs and the loose
// ones): reading them one by one rereads packed-refs for each, an
// upstream's hundreds of tags squared. An unreadable list is empty.
func cacheRefs(s *store) map[plumbing.ReferenceName]plumbing.Hash {
	have := map[plumbing.ReferenceName]plumbing.Hash{}
	if refs, err := s.st.IterReferences(); err == nil {
		refs.ForEach(func(r *plumbing.Reference) error {
			if r.Type() == plumbing.HashReference {
				have[r.Name()] = r.Hash()
			}
			return nil
		})
	}
	return have
}

// errRefGone is wrapped by the error of a git fetch that asked for a ref
// the upstream no longer has, or for an object no ref of its points at
// any more (see exactSpecs).
var errRefGone = errors.New("a ref the listing named is gone upstream")

// maxExactSpecs is the most stale refs a fetch names one by one (see
// exactSpecs); beyond it, a fetch names the wildcard and the branches, as a
// first fetch does.
const maxExactSpecs = 64

// exactSpecs are refspecs for the stale refs alone, each by the id the
// listing gave it: "+<id>:<name>". git fetch then asks the upstream for
// those objects straight away (protocol v2, with --no-tags: no second
// listing, which costs a round trip; v2 wants may name any object) and
// writes each ref to what the listing said, so the run sees the upstream
// as that one listing did. A server that speaks only protocol v0 accepts
// an id only while a ref points at it; one that moved or was deleted after
// the listing fails git fetch ("not our ref", errRefGone), before it
// fetched anything, and refresh then lists the refs again and fetches once
// more.
func exactSpecs(stale []plumbing.ReferenceName, want map[plumbing.ReferenceName]plumbing.Hash) []config.RefSpec {
	specs := make([]config.RefSpec, 0, len(stale))
	for _, name := range stale {
		specs = append(specs, config.RefSpec("+"+want[name].String()+":"+name.String()))
	}
	return specs
}

// updateShallow records the shallow boundary. go-git writes the shallow file
// only for fetches with a depth, but a shallow upstream sends commits whose
// parents it does not have. The boundary is every commit, known shallow here
// or advertised shallow by the upstream, that is present with a parent missing.
func updateShallow(s *store, advertised []plumbing.Hash) error {
	cur, err := s.st.Shallow()
	if err != nil {
		return err
	}
	cand := map[plumbing.Hash]bool{}
	for _, h := range cur {
		cand[h] = true
	}
	for _, h := range advertised {
		cand[h] = true
	}
	var keep []plumbing.Hash
	for h := range cand {
		commit, err := object.GetCommit(s.st, h)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		for _, p := range commit.ParentHashes {
			if s.st.HasEncodedObject(p) != nil {
				keep = append(keep, h)
				break
			}
		}
	}
	sort.Slice(keep, func(i, j int) bool { return keep[i].String() < keep[j].String() })
	if sameHashes(cur, keep) {
		return nil
	}
	return s.st.SetShallow(keep)
}

func sameHashes(a, b []plumbing.Hash) bool {
	if len(a) != len(b) {
		return false
	}
	set := map[plumbing.Hash]bool{}
	for _, h := range a {
		set[h] = true
	}
	for _, h := range b {
		if !set[h] {
			return false
		}
	}
	return true
}

// Ensure makes sure every ref resolves, fetching once, and only if one does
// not. This is what commands call, so that a second run needs no network. A
// full commit id that no tag or branch reaches is fetched by id when the
// upstream allows it.
func (c *Cache) Ensure(ctx context.Context, refs ...string) error {
	missing, err := c.missing(ctx, true, refs)
	if err != nil || len(missing) == 0 {
		return err
	}
	if c.opts.offline {
		return c.errorf("%w: %s not in the cache of %s; run once without --offline to fetch %s",
			ErrOffline, quoteList(missing), c.redacted, pronoun(missing))
	}
	lk, err := lockFile(ctx, c.lockPath(), unix.LOCK_EX)
	if err != nil {
		return c.errorf("fetching %s: %w", c.redacted, err)
	}
	defer lk.unlock()
	// Another run may have fetched them while this one waited for the lock.
	c.withStore(func(s *store) error { s.st.Reindex(); return nil })
	if missing, err = c.missing(ctx, false, missing); err != nil || len(missing) == 0 {
		return err
	}
	// A partial cache (see WithShallow) gets only the refs asked for, at
	// depth 1, and commits by id at depth 2, whose diff needs the parent.
	depth := 0
	if c.opts.shallow && c.Partial() {
		depth = 1
	}
	if req := namesReq(missing, depth); !req.narrow || len(req.refs) > 0 {
		if err := c.refresh(ctx, req); err != nil {
			return c.errorf("fetching %s: %w", c.redacted, err)
		}
		if missing, err = c.missing(ctx, false, missing); err != nil || len(missing) == 0 {
			return err
		}
	}
	if hasAbbreviated(missing) && depth > 0 {
		// No fetch brings an abbreviated id by name: look for it in the
		// whole history of every tag and branch.
		depth = 0
		if err := c.refresh(ctx, fetchReq{}); err != nil {
			return c.errorf("fetching %s: %w", c.redacted, err)
		}
		if missing, err = c.missing(ctx, false, missing); err != nil || len(missing) == 0 {
			return err
		}
	}
	var byID error
	for {
		var ids []plumbing.Hash
		for _, r := range missing {
			if isFullID(r) {
				ids = append(ids, plumbing.NewHash(strings.ToLower(r)))
			}
		}
		if len(ids) == 0 {
			break
		}
		byID = c.refresh(ctx, fetchReq{commits: ids, depth: 2 * depth, narrow: depth > 0})
		if missing, err = c.missing(ctx, false, missing); err != nil || len(missing) == 0 {
			return err
		}
		if depth == 0 {
			break
		}
		// The history a partial cache lacks may reach them.
		depth = 0
		if err := c.refresh(ctx, fetchReq{}); err != nil {
			return c.errorf("fetching %s: %w", c.redacted, err)
		}
		if missing, err = c.missing(ctx, false, missing); err != nil || len(missing) == 0 {
			return err
		}
	}
	return c.notFound(missing, byID)
}

// namesReq is the fetch Ensure starts with for the missing refs. A partial
// cache (depth > 0) fetches only the names among them, nothing when they are
// all commit ids. A complete cache fetches every tag and the kept branches,
// as Fetch does, and the branches among the names.
func namesReq(missing []string, depth int) fetchReq {
	var names, branches []string
	for _, r := range missing {
		if isFullID(r) || isAbbreviated(r) {
			continue
		}
		names = append(names, r)
		if r != "HEAD" {
			branches = append(branches, strings.TrimPrefix(r, "refs/heads/"))
		}
	}
	if depth > 0 {
		return fetchReq{narrow: true, refs: names, depth: depth}
	}
	return fetchReq{branches: branches}
}

func hasAbbreviated(refs []string) bool {
	for _, r := range refs {
		if isAbbreviated(r) {
			return true
		}
	}
	return false
}

// notFound is the error for refs that are not in the cache after fetching;
// byID is why fetching commits by id failed.
func (c *Cache) notFound(missing []string, byID error) error {
	var errs []error
	for _, r := range missing {
		_, err := c.resolve(r)
		if byID != nil && isFullID(r) {
			err = fmt.Errorf("%w (fetching it by id: %v)", err, byID)
		}
		errs = append(errs, err)
	}
	return c.errorf("%w", errors.Join(errs...))
}

// missing returns the refs that do not resolve in the cache; it fails on any
// other error. lock takes the shared lock while reading refs.
func (c *Cache) missing(ctx context.Context, lock bool, refs []string) ([]string, error) {
	if lock {
		lk, err := lockFile(ctx, c.lockPath(), unix.LOCK_SH)
		if err != nil {
			return nil, c.errorf("reading the cache of %s: %w", c.redacted, err)
		}
		defer lk.unlock()
	}
	var out []string
	for _, r := range refs {
		_, err := c.resolve(r)
		switch {
		case err == nil:
		case errors.Is(err, ErrRefNotFound), errors.Is(err, ErrAbbreviatedID):
			out = append(out, r)
		default:
			return nil, c.errorf("%w", err)
		}
	}
	return out, nil
}

func quoteList(refs []string) string {
	q := make([]string, len(refs))
	for i, r := range refs {
		q[i] = fmt.Sprintf("%q", r)
	}
	if len(q) == 1 {
		return q[0] + " is"
	}
	return strings.Join(q, ", ") + " are"
}

func pronoun(refs []string) string {
	if len(refs) == 1 {
		return "it"
	}
	return "them"
}
