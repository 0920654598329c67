package verify

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/patchkit/patchkit/internal/obsolete"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/upstream"
)

// ReleaseScanner tells which upstream refs carry the changes of a series.
type ReleaseScanner interface {
	// Scan returns, for each patch of im.Patches (in order), a Carry for
	// each of refs (in the order given). The whole series is scanned so
	// that each patch is judged on top of the ones before it.
	Scan(ctx context.Context, im *pipeline.Image, refs []string) ([][]Carry, error)
}

// Carry is whether one ref carries one patch's change.
type Carry struct {
	// Carried is true when the ref has the change: the obsolete-check
	// statuses present and superseded.
	Carried bool
	// Status is the engine's status at the ref (applies, present, partial,
	// superseded, conflict).
	Status string
	// Commit is the upstream commit that brought the change, when known.
	Commit string
	// Evidence says in a sentence why.
	Evidence string
}

// ObsoleteScanner is the ReleaseScanner of patchkit obsolete-check: the
// obsolete package's engine, run on exactly the refs asked for.
type ObsoleteScanner struct{}

var _ ReleaseScanner = ObsoleteScanner{}

// Scan implements ReleaseScanner with obsolete.Check.
func (ObsoleteScanner) Scan(ctx context.Context, im *pipeline.Image, refs []string) ([][]Carry, error) {
	rep, err := obsolete.Check(ctx, obsolete.Input{Cache: im.Cache, Spec: im.Spec, PinCommit: im.Commit, Patches: im.Patches, Refs: refs})
	if err != nil {
		return nil, err
	}
	out := make([][]Carry, len(im.Patches))
	for i := range out {
		out[i] = make([]Carry, len(refs))
		if i >= len(rep.Patches) {
			continue
		}
		byRef := map[string]obsolete.Result{}
		for _, r := range rep.Patches[i].Results {
			byRef[r.Ref] = r
		}
		for k, ref := range refs {
			r, ok := byRef[ref]
			if !ok {
				continue
			}
			out[i][k] = Carry{
				Carried:  r.Status == obsolete.StatusPresent || r.Status == obsolete.StatusSuperseded,
				Status:   r.Status,
				Commit:   r.Commit,
				Evidence: r.Evidence,
			}
		}
	}
	return out, nil
}

// checkAppliedUpstream runs the applied-upstream check: a removal note
// "Applied-Upstream: vX" holds when release vX carries the change and the
// release before it, in semver order among the tags matching
// upstream.releases (all semver tags when unset), does not. When it does not
// hold, the message names the first release that carries the change.
func (v *verifier) checkAppliedUpstream(ctx context.Context) error {
	var noted []*entry
	for _, e := range v.entries {
		if e.patch == nil {
			continue
		}
		if e.patch.Header.AppliedUpstream == "" {
			e.set(Check{Check: CheckAppliedUpstream, Status: StatusSkip, Message: "no Applied-Upstream note"})
			continue
		}
		noted = append(noted, e)
	}
	if len(noted) == 0 {
		return nil
	}
	tags, err := v.im.Cache.Tags()
	if err != nil {
		return err
	}
	pattern := v.im.Spec.Upstream.Releases
	if pattern == "" {
		pattern = "*"
	}
	releases, err := upstream.Releases(tags, pattern)
	if err != nil {
		return err
	}
	names := make([]string, len(releases))
	for i, r := range releases {
		names[i] = r.Name
	}
	tagged := map[string]bool{}
	for _, t := range tags {
		tagged[t.Name] = true
	}

	// The refs to scan: every release after the pin, to name the first that
	// carries a change, and each note with the release before it.
	want := map[string]bool{}
	pin := v.im.Spec.Upstream.Ref
	for _, n := range names {
		if cmp, ok := upstream.CompareVersions(n, pin); !ok || cmp > 0 {
			want[n] = true
		}
	}
	type note struct {
		e         *entry
		tag, prev string
		line      int
	}
	var notes []note
	for _, e := range noted {
		tag := e.patch.Header.AppliedUpstream
		line := fieldLine(e.patch.Header, "applied-upstream")
		i := slices.Index(names, tag)
		if i < 0 {
			msg := fmt.Sprintf("Applied-Upstream: %s: upstream has no release %s", tag, tag)
			if tagged[tag] {
				msg = fmt.Sprintf("Applied-Upstream: %s is a tag, but not a release: not a semantic version matching upstream.releases %q", tag, pattern)
			}
			e.set(Check{Check: CheckAppliedUpstream, Status: StatusFail, Message: msg, Line: line})
			continue
		}
		n := note{e: e, tag: tag, line: line}
		if i > 0 {
			n.prev = names[i-1]
			want[n.prev] = true
		}
		want[tag] = true
		notes = append(notes, n)
	}
	if len(notes) == 0 {
		return nil
	}
	var refs []string
	for _, n := range names {
		if want[n] {
			refs = append(refs, n)
		}
	}
	carries, err := v.opts.scanner.Scan(ctx, v.im, refs)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for _, n := range notes {
			n.e.set(Check{Check: CheckAppliedUpstream, Status: StatusFail, Line: n.line,
				Message: fmt.Sprintf("Applied-Upstream: %s not checked: scanning the releases: %v", n.tag, err)})
		}
		return nil
	}
	for _, n := range notes {
		row := carries[n.e.index]
		at := func(ref string) Carry { return row[slices.Index(refs, ref)] }
		first := ""
		for k, ref := range refs {
			if row[k].Carried {
				first = ref
				break
			}
		}
		here := at(n.tag)
		c := Check{Check: CheckAppliedUpstream, Line: n.line}
		switch {
		case here.Carried && (n.prev == "" || !at(n.prev).Carried):
			c.Status = StatusPass
			c.Message = fmt.Sprintf("%s carries the change (%s)", n.tag, describe(here))
			if n.prev != "" {
				c.Message += fmt.Sprintf(" and %s, the release before it, does not (%s)", n.prev, at(n.prev).Status)
			} else {
				c.Message += "; it is the first release"
			}
		case here.Carried:
			c.Status = StatusFail
			c.Message = fmt.Sprintf("Applied-Upstream: %s is wrong: %s, the release before it, already carries the change (%s)%s",
				n.tag, n.prev, describe(at(n.prev)), firstRelease(first, n.tag))
		default:
			c.Status = StatusFail
			c.Message = fmt.Sprintf("Applied-Upstream: %s is wrong: %s does not carry the change (%s)%s",
				n.tag, n.tag, describe(here), firstRelease(first, n.tag))
		}
		n.e.set(c)
	}
	return nil
}

func firstRelease(first, noted string) string {
	switch {
	case first == "":
		return "; no release after the pin carries it"
	case first == noted:
		return ""
	}
	return fmt.Sprintf("; the first release that carries it is %s", first)
}

// describe renders a Carry for a message: "present: <evidence>".
func describe(c Carry) string {
	var parts []string
	if c.Status != "" && !strings.HasPrefix(c.Evidence, c.Status) {
		parts = append(parts, c.Status)
	}
	if c.Evidence != "" {
		parts = append(parts, c.Evidence)
	}
	if c.Commit != "" && !strings.Contains(c.Evidence, short(c.Commit)) {
		parts = append(parts, "commit "+short(c.Commit))
	}
	if len(parts) == 0 {
		return "not scanned"
	}
	return strings.Join(parts, ": ")
}
