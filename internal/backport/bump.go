package backport

import (
	"bytes"
	"context"
	"fmt"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/gomod"
	"github.com/patchkit/patchkit/internal/series"
)

// RaiseBump re-expresses a plan whose patch is a dependency bump (package
// gomod) that does not apply on src after the existing series: the commit's
// raised modules that src (with the series) does not already cover, raised
// with the go command (gomod.Go.Reexpress), under the commit's header. It
// returns what it raised, or "" and the plan unchanged when the patch is
// not a bump, is a reference, or leaves nothing to raise.
func (p *Plan) RaiseBump(ctx context.Context, g gomod.Go, src gomod.WalkSource, existing []*series.Patch) (string, error) {
	if p.Patch == nil || p.Patch.Reference != nil {
		return "", nil
	}
	s := gomod.SplitPatch(p.Patch)
	if s == nil {
		return "", nil
	}
	st := apply.New(src)
	for _, e := range existing {
		st.Apply(e) // a patch that fails is the series' finding, not this one's
	}
	if err := s.Orient(st); err != nil {
		return "", err
	}
	r, err := g.Reexpress(ctx, src, st, p.Patch, s)
	if err != nil || r == nil || r.Text == nil {
		return "", err
	}
	np, err := series.Parse(p.Path, r.Text)
	if err != nil {
		return "", fmt.Errorf("the re-expressed bump does not parse: %w", err)
	}
	var b bytes.Buffer
	b.WriteString("raised ")
	for i, c := range r.Raised {
		if i > 0 {
			b.WriteString(", ")
		}
		if c.Hold {
			fmt.Fprintf(&b, "held %s at %s (pin: %s)", c.Path, c.Version, orNone(c.Upstream))
			continue
		}
		fmt.Fprintf(&b, "%s to %s (pin: %s)", c.Path, c.Version, orNone(c.Upstream))
	}
	for i, c := range r.Covered {
		if i == 0 {
			b.WriteString("; the pin already covers ")
		} else {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s (pin: %s)", c.Path, c.Version, orNone(c.Upstream))
	}
	p.Content, p.Patch = r.Text, np
	return b.String(), nil
}

func orNone(v string) string {
	if v == "" {
		return "none"
	}
	return v
}
