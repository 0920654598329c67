package report

import (
	"fmt"
	"strings"

	"github.com/patchkit/patchkit/internal/adopt"
)

// InitRun is what `patchkit init` found and wrote, a unit per Dockerfile.
// Its JSON is always an array (DESIGN.md:
// [{"dir","spec","upstream":{"url","ref"},"patches"}]).
type InitRun []adopt.Unit

// Command implements Result.
func (InitRun) Command() string { return "init" }

// JSON implements JSONer.
func (units InitRun) JSON() any { return jsonItems([]adopt.Unit(units), false) }

func (units InitRun) clean() Result {
	for i := range units {
		units[i].Upstream.URL = Redact(units[i].Upstream.URL)
	}
	return units
}

func initVerb(u adopt.Unit) string {
	switch u.Status {
	case adopt.StatusWritten:
		return "wrote"
	case adopt.StatusExists:
		return "kept"
	case adopt.StatusNew:
		return "would write"
	}
	return "could not read"
}

// Text implements Texter.
func (units InitRun) Text() string {
	var b strings.Builder
	if len(units) == 0 {
		b.WriteString("no Dockerfile, nor Makefile release branch, that fetches an upstream and applies a patch directory found\n")
	}
	bad := 0
	for _, u := range units {
		if u.Status == adopt.StatusUnreadable {
			bad++
			fmt.Fprintf(&b, "%s: could not read: %s\n", initWhere(u), u.Problem)
			continue
		}
		fmt.Fprintf(&b, "%s %s: %s at %s, pin from %s, patches %s\n", initVerb(u), u.Spec, u.Upstream.URL, u.Upstream.Ref, u.Upstream.From, u.Patches)
		if u.Status == adopt.StatusExists {
			fmt.Fprintf(&b, "  %s exists: left alone (--force replaces it)\n", u.Spec)
		}
		for _, n := range u.Notes {
			fmt.Fprintf(&b, "  note: %s\n", n)
		}
	}
	if bad > 0 {
		fmt.Fprintf(&b, "%d of %d units could not be read\n", bad, len(units))
	}
	return b.String()
}

// Markdown implements Markdowner.
func (units InitRun) Markdown() string {
	var b strings.Builder
	b.WriteString("### patchkit init\n\n| unit | status | upstream | pin | from |\n|---|---|---|---|---|\n")
	for _, u := range units {
		if u.Status == adopt.StatusUnreadable {
			fmt.Fprintf(&b, "| `%s` | could not read | | | %s |\n", mdCell(u.Dir), mdCell(u.Problem))
			continue
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | `%s` | %s |\n", mdCell(u.Dir), initVerb(u), mdCell(u.Upstream.URL), mdCell(u.Upstream.Ref), mdCell(u.Upstream.From))
	}
	return b.String()
}

// GitHub implements GitHubber.
func (units InitRun) GitHub() string {
	var b strings.Builder
	for _, u := range units {
		if u.Status == adopt.StatusUnreadable {
			annotate(&b, "warning", u.Source(), 0, "patchkit init", ghEscape(u.Problem))
			continue
		}
		annotate(&b, "notice", u.Source(), 0, "patchkit init", fmt.Sprintf("%s %s: %s at %s", initVerb(u), ghEscape(u.Spec), ghEscape(u.Upstream.URL), ghEscape(u.Upstream.Ref)))
	}
	return b.String()
}

// initWhere names a unit that could not be read: its Dockerfile, or the
// release branch's directory of a Makefile unit (its name repeats in every
// project: 1-33).
func initWhere(u adopt.Unit) string {
	if u.Recipe != "" {
		return u.Dir
	}
	return u.Dockerfile
}
