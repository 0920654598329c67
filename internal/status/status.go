package status

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/patchkit/patchkit/internal/ghapi"
	"github.com/patchkit/patchkit/internal/obsolete"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/upstream"
)

// The kinds of a patch's upstream link (Upstream.Kind).
const (
	KindCommit = "commit" // a backport: Origin names an upstream commit
	KindPR     = "pr"     // a pull request: Origin names one, or Forwarded: is its URL
	KindIssue  = "issue"  // an issue: a Bug: URL on GitHub, no PR
	KindNone   = "none"   // no upstream commit, PR or issue
)

// The upstream states (Upstream.State) besides GitHub's open, closed and
// merged.
const (
	StateReleased   = "released"   // the commit is in a release (Upstream.Release)
	StateUnreleased = "unreleased" // the commit is upstream, in no release yet
	StateUnknown    = "unknown"    // not looked up (offline) or the lookup failed (Upstream.Note)
	StateNotNeeded  = "not-needed" // Forwarded: not-needed
	StateNotFiled   = "not-filed"  // an original change nobody told upstream about
)

// The findings on a patch (Patch.Findings).
const (
	// FindingDroppable: the newest release carries the change.
	FindingDroppable = "droppable"
	// FindingNoUpstream: an original change with no upstream PR or issue.
	FindingNoUpstream = "no-upstream"
	// FindingNoPR: an original change with an upstream issue but no PR.
	FindingNoPR = "no-pr"
	// FindingClosedUnmerged: its upstream PR was closed without merging.
	FindingClosedUnmerged = "pr-closed-unmerged"
	// FindingConflict: it no longer applies at the newest release.
	FindingConflict = "conflict"
	// FindingRemoved: upstream deleted every file it modifies by the newest
	// release (Patch.Removed): drop it or rewrite it for what replaced them.
	FindingRemoved = "target-removed"
)

// Upstream is a patch's link upstream and its state.
type Upstream struct {
	Kind  string `json:"kind"`
	URL   string `json:"url,omitempty"`
	State string `json:"state"`
	// Release is the first release (matching upstream.releases) that has the
	// commit, or the PR's merge commit.
	Release string `json:"release,omitempty"`
	// Commit is the backport's commit, or the PR's merge commit.
	Commit string `json:"commit,omitempty"`
	// Title and User are the PR's or issue's, as GitHub gave them (server
	// text: renderers pass them through untrusted).
	Title string `json:"title,omitempty"`
	User  string `json:"user,omitempty"`
	// Issue is the Bug: URL beside a PR or commit, for the record.
	Issue string `json:"issue,omitempty"`
	// Note says why the state is unknown, or what else is known.
	Note string `json:"note,omitempty"`
}

// Patch is one patch's status.
type Patch struct {
	File    string `json:"file"`
	Subject string `json:"subject,omitempty"`
	// Original says it is not a backport: no upstream commit or PR is its
	// origin.
	Original bool `json:"original"`
	// Added is when the downstream repository last added the file (its git
	// history, first parents), nil when unknown (no history, or not
	// committed yet); AddedCommit is that commit.
	Added       *time.Time `json:"added"`
	AddedCommit string     `json:"addedCommit,omitempty"`
	// Pins is how many pin changes of its unit it has survived since.
	Pins int `json:"pins"`
	// Verdict is obsolete-check's status at the newest release (at the pin
	// when the pin is the newest).
	Verdict string `json:"verdict"`
	// Evidence is obsolete-check's evidence for Verdict.
	Evidence string `json:"evidence,omitempty"`
	// Removed names the files upstream deleted when every file the patch
	// modifies is gone at the newest release (Verdict is conflict; the
	// tables say removed).
	Removed *obsolete.Removed `json:"removed,omitempty"`
	// ObsoletedBy is the first release that carries the change; Commit the
	// upstream commit that did.
	ObsoletedBy string   `json:"obsoletedBy"`
	Commit      string   `json:"commit"`
	Upstream    Upstream `json:"upstream"`
	// Findings name what needs doing (the Finding* constants).
	Findings []string `json:"findings"`
}

// Unit is one image unit's status.
type Unit struct {
	Name string `json:"name"`
	Dir  string `json:"dir"`
	URL  string `json:"url"`
	Pin  string `json:"pin"`
	// Newest is the newest final release matching upstream.releases that
	// is newer than the pin; the pin itself when none is.
	Newest string `json:"newest"`
	// Behind is how many final releases newer than the pin match.
	Behind int `json:"behind"`
	// Releases are those releases, oldest first.
	Releases []string `json:"releases"`
	// LineNewest is the newest final release of the pin's minor line
	// (v1.14.7 for a pin v1.14.3: the same major and minor, matching
	// upstream.releases), from the upstream cache's tags; the pin itself
	// when none is newer, "" when the pin is no semantic version.
	// LineBehind is how many releases of the line are newer than the pin.
	LineNewest string `json:"lineNewest"`
	LineBehind int    `json:"lineBehind"`
	// Series identifies the series: units with the same Series at the same
	// pin of the same upstream carry byte-identical patches (Report.Shared).
	Series string `json:"series"`
	// PinCommit is the pin resolved.
	PinCommit string  `json:"pinCommit"`
	Patches   []Patch `json:"patches"`
	// History is the unit's patch count over the repository's history.
	History []Point `json:"history"`
	// Error says why the unit could not be reported on (its upstream
	// unreachable, a bad spec); the other fields are then empty.
	Error string `json:"error,omitempty"`
}

// Point is the number of patches carried after one commit of the
// downstream repository.
type Point struct {
	Time   time.Time `json:"time"`
	Commit string    `json:"commit"`
	Count  int       `json:"count"`
}

// Report is the status of the units asked for.
type Report struct {
	Units []Unit `json:"units"`
	// Shared are the groups of units (two or more) whose series are
	// byte-identical at the same pin (Share): release branches that carry
	// one series, which status shows once.
	Shared []Shared `json:"shared"`
	// History is the total over the units.
	History []Point `json:"history"`
}

// Items looks up GitHub pull requests and issues; *ghapi.Client is one.
type Items interface {
	Item(ctx context.Context, owner, repo string, number int, pr bool) (ghapi.Item, error)
}

var _ Items = (*ghapi.Client)(nil)

// UnitInput is one unit to report on.
type UnitInput struct {
	// Cache is the upstream cache, refreshed as the caller wants.
	Cache *upstream.Cache
	Spec  *spec.Spec
	// PinCommit is upstream.ref resolved.
	PinCommit string
	// Patches is the series, references materialized.
	Patches []*series.Patch
}

// Options are what Unit needs besides the unit.
type Options struct {
	// Root is the downstream repository (its git history gives ages).
	Root string
	// GitHub looks up PRs and issues; nil means offline: their states are
	// unknown.
	GitHub Items
	// GitHubHost is a web host to read PR and issue URLs on besides
	// github.com (ghapi.ParseRepo).
	GitHubHost string
}

// Collect reports on the units, in order, and the repository's history.
func Collect(ctx context.Context, units []UnitInput, o Options) (*Report, error) {
	rep := &Report{Units: []Unit{}}
	for _, in := range units {
		u, err := CollectUnit(ctx, in, o)
		if err != nil {
			return nil, err
		}
		rep.Units = append(rep.Units, *u)
	}
	rep.History = Total(rep.Units)
	rep.Shared = Share(rep.Units)
	return rep, nil
}

// Shared is a group of units that carry the same series at the same pin.
type Shared struct {
	// Units are the units' directories, in the report's order.
	Units   []string `json:"units"`
	Pin     string   `json:"pin"`
	Patches int      `json:"patches"`
	Series  string   `json:"series"`
}

// Share groups the units (those reported on) whose series are
// byte-identical (the same patch files, names and bytes, in the same order)
// at the same pin commit of the same upstream, judged against the same
// releases: their verdicts are the same. Only groups of two or more, in
// the order of their first unit.
func Share(units []Unit) []Shared {
	out := []Shared{}
	at := map[string]int{}
	for _, u := range units {
		if u.Error != "" || u.Series == "" {
			continue
		}
		key := strings.Join([]string{u.URL, u.PinCommit, u.Newest, strings.Join(u.Releases, ","), u.Series}, "\x00")
		if i, ok := at[key]; ok {
			out[i].Units = append(out[i].Units, u.Dir)
			continue
		}
		at[key] = len(out)
		out = append(out, Shared{Units: []string{u.Dir}, Pin: u.Pin, Patches: len(u.Patches), Series: u.Series})
	}
	groups := out[:0]
	for _, g := range out {
		if len(g.Units) > 1 {
			groups = append(groups, g)
		}
	}
	return groups
}

// SharedOf returns the group the unit in dir belongs to, if any.
func (r *Report) SharedOf(dir string) (Shared, bool) {
	for _, g := range r.Shared {
		if slices.Contains(g.Units, dir) {
			return g, true
		}
	}
	return Shared{}, false
}

// seriesID is the digest of a series: each patch's file name and bytes.
func seriesID(patches []*series.Patch) string {
	h := sha256.New()
	for _, p := range patches {
		fmt.Fprintf(h, "%s\x00%d\x00", p.Name, len(p.FileBytes()))
		h.Write(p.FileBytes())
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// minorLine returns the newest final release of pin's minor line among
// the tags matching releases, and how many of them are newer than pin;
// ("", 0) when pin is no semantic version.
func minorLine(c *upstream.Cache, s *spec.Spec) (string, int, error) {
	pin := s.Upstream.Ref
	line, ok := upstream.MinorLine(pin)
	if !ok {
		return "", 0, nil
	}
	tags, err := c.Tags()
	if err != nil {
		return "", 0, err
	}
	glob := s.Upstream.Releases
	if glob == "" {
		glob = "*"
	}
	rel, err := upstream.Releases(tags, glob)
	if err != nil {
		return "", 0, err
	}
	newest, behind := pin, 0
	for _, t := range rel {
		if l, _ := upstream.MinorLine(t.Name); l != line || obsolete.IsPrerelease(t.Name, s.Upstream.Releases, pin) {
			continue
		}
		if cmp, _ := upstream.CompareVersions(t.Name, pin); cmp > 0 {
			newest, behind = t.Name, behind+1
		}
	}
	return newest, behind, nil
}

// CollectUnit reports on one unit.
func CollectUnit(ctx context.Context, in UnitInput, o Options) (*Unit, error) {
	s := in.Spec
	u := &Unit{Name: s.Name, Dir: s.Dir, URL: in.Cache.URL(), Pin: s.Upstream.Ref, PinCommit: in.PinCommit, Releases: []string{}, Patches: []Patch{}, Series: seriesID(in.Patches)}
	var err error
	if u.LineNewest, u.LineBehind, err = minorLine(in.Cache, s); err != nil {
		return nil, err
	}
	// obsolete-check's scan over the releases only: the branches are no
	// releases, and the newest release is what status judges at.
	releasesOnly := *s
	releasesOnly.Upstream.Branches = nil
	oin := obsolete.Input{Cache: in.Cache, Spec: &releasesOnly, PinCommit: in.PinCommit, Patches: in.Patches}
	rep, err := obsolete.Check(ctx, oin)
	if err != nil {
		return nil, err
	}
	for _, r := range rep.Refs {
		if r.IsRelease() && !r.NonSemver && !obsolete.IsPrerelease(r.Name, s.Upstream.Releases, s.Upstream.Ref) {
			u.Releases = append(u.Releases, r.Name)
		}
	}
	u.Behind = len(u.Releases)
	u.Newest = u.Pin
	if u.Behind > 0 {
		u.Newest = u.Releases[u.Behind-1]
	} else {
		// Judge at the pin itself: a patch present there is dead weight.
		oin.Refs = []string{u.Pin}
		if rep, err = obsolete.Check(ctx, oin); err != nil {
			return nil, err
		}
	}
	hist, err := unitHistory(ctx, o.Root, s)
	if err != nil {
		return nil, err
	}
	u.History = hist.points
	prefetch(ctx, in, o, in.Patches)
	for i, p := range in.Patches {
		pr := rep.Patches[i]
		st := Patch{File: p.Path, Subject: p.Header.Subject, Verdict: pr.Results[0].Status, ObsoletedBy: pr.ObsoletedBy, Commit: pr.Commit, Findings: []string{}}
		for k, ref := range rep.Refs {
			if ref.Name == u.Newest {
				st.Verdict, st.Evidence = pr.Results[k].Status, pr.Results[k].Evidence
				if pr.Results[k].TargetRemoved() {
					st.Removed = pr.Results[k].Removed
				}
			}
		}
		if a, ok := hist.added[p.Name]; ok {
			t := a.time
			st.Added, st.AddedCommit, st.Pins = &t, a.commit, a.pins
		}
		st.Upstream, st.Original = link(ctx, in, o, p, &pr)
		st.Findings = findings(st)
		u.Patches = append(u.Patches, st)
	}
	return u, nil
}

func findings(p Patch) []string {
	out := []string{}
	switch p.Verdict {
	case obsolete.StatusPresent, obsolete.StatusSuperseded:
		out = append(out, FindingDroppable)
	case obsolete.StatusConflict:
		if p.Removed != nil {
			out = append(out, FindingRemoved)
		} else {
			out = append(out, FindingConflict)
		}
	}
	if p.Original {
		switch {
		case p.Upstream.Kind == KindNone && p.Upstream.State != StateNotNeeded:
			out = append(out, FindingNoUpstream)
		case p.Upstream.Kind == KindIssue:
			out = append(out, FindingNoPR)
		}
	}
	if p.Upstream.Kind == KindPR && p.Upstream.State == "closed" {
		out = append(out, FindingClosedUnmerged)
	}
	return out
}

// Total sums the units' histories: after each commit of any unit, the sum
// of every unit's count then.
func Total(units []Unit) []Point {
	type ev struct {
		p    Point
		unit int
	}
	var evs []ev
	for i, u := range units {
		for _, p := range u.History {
			evs = append(evs, ev{p, i})
		}
	}
	sort.SliceStable(evs, func(a, b int) bool { return evs[a].p.Time.Before(evs[b].p.Time) })
	cur := make([]int, len(units))
	out := []Point{}
	for _, e := range evs {
		cur[e.unit] = e.p.Count
		sum := 0
		for _, c := range cur {
			sum += c
		}
		if n := len(out); n > 0 && out[n-1].Commit == e.p.Commit {
			out[n-1].Count = sum
			continue
		}
		out = append(out, Point{Time: e.p.Time, Commit: e.p.Commit, Count: sum})
	}
	return out
}

// Findings reports whether any patch has a finding.
func (r *Report) Findings() bool {
	for _, u := range r.Units {
		for _, p := range u.Patches {
			if len(p.Findings) > 0 {
				return true
			}
		}
	}
	return false
}

// MarshalJSON writes obsoletedBy and commit as null when none, as
// obsolete-check does.
func (p Patch) MarshalJSON() ([]byte, error) {
	type plain Patch
	return json.Marshal(struct {
		plain
		ObsoletedBy *string `json:"obsoletedBy"`
		Commit      *string `json:"commit"`
	}{plain(p), nullable(p.ObsoletedBy), nullable(p.Commit)})
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// memoItems asks GitHub once per item in a run: units that link the same PR
// or issue share the answer. It is safe for concurrent use; callers asking
// for an item in flight wait for its answer.
type memoItems struct {
	Items
	mu   sync.Mutex
	seen map[string]*memoItem
}

type memoItem struct {
	done chan struct{} // closed once item and err are set
	item ghapi.Item
	err  error
}

// Memo wraps items so that each PR or issue is asked for once.
func Memo(items Items) Items {
	if items == nil {
		return nil
	}
	return &memoItems{Items: items, seen: map[string]*memoItem{}}
}

func (m *memoItems) Item(ctx context.Context, owner, repo string, number int, pr bool) (ghapi.Item, error) {
	key := fmt.Sprintf("%s/%s#%d/%v", owner, repo, number, pr)
	m.mu.Lock()
	r, ok := m.seen[key]
	if !ok {
		r = &memoItem{done: make(chan struct{})}
		m.seen[key] = r
	}
	m.mu.Unlock()
	if ok {
		select {
		case <-r.done:
			return r.item, r.err
		case <-ctx.Done():
			return ghapi.Item{}, ctx.Err()
		}
	}
	r.item, r.err = m.Items.Item(ctx, owner, repo, number, pr)
	close(r.done)
	return r.item, r.err
}

// MaxLookups is how many GitHub lookups of one unit's links run at once.
const MaxLookups = 8

// prefetch asks items (a Memo) for every PR and issue the patches link,
// at most MaxLookups at a time, so that the links read them from the memo:
// a unit's time is its slowest lookups', not the sum of them all (each is
// bounded by --fetch-timeout).
func prefetch(ctx context.Context, in UnitInput, o Options, patches []*series.Patch) {
	m, ok := o.GitHub.(*memoItems)
	if !ok {
		return
	}
	type want struct {
		owner, repo string
		n           int
		pr          bool
	}
	var wants []want
	seen := map[want]bool{}
	add := func(url string, pr bool) {
		owner, repo, n, isPR, ok := ghapi.ParseItem(url, o.GitHubHost)
		if !ok {
			return
		}
		w := want{owner, repo, n, pr || isPR}
		if !seen[w] {
			seen[w] = true
			wants = append(wants, w)
		}
	}
	for _, p := range patches {
		h := p.Header
		if h.Origin.PR > 0 {
			add(prURL(in, h.Origin), true)
			continue
		}
		if h.Origin.Commit != "" {
			continue
		}
		if strings.Contains(h.Forwarded, "://") {
			add(h.Forwarded, false)
			continue
		}
		for _, b := range h.Bug {
			if _, _, _, _, ok := ghapi.ParseItem(b, o.GitHubHost); ok {
				add(b, false)
				break
			}
		}
	}
	sem := make(chan struct{}, MaxLookups)
	var wg sync.WaitGroup
	for _, w := range wants {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			m.Item(ctx, w.owner, w.repo, w.n, w.pr) // the links read the answer, or the error, from the memo
		}()
	}
	wg.Wait()
}
