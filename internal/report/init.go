package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/patchkit/patchkit/internal/adopt"
)

// RenderInit writes what `patchkit init` found and wrote in format f. JSON
// is always an array (DESIGN.md: [{"dir","spec","upstream":{"url","ref"},"patches"}]).
func RenderInit(w io.Writer, f Format, units []adopt.Unit) error {
	for i := range units {
		units[i].Upstream.URL = Redact(units[i].Upstream.URL)
	}
	switch f {
	case JSON:
		return writeJSON(w, units, false)
	case Markdown:
		return initMarkdown(w, units)
	case GitHub:
		return initGitHub(w, units)
	default:
		return initText(w, units)
	}
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

func initText(w io.Writer, units []adopt.Unit) error {
	var b strings.Builder
	if len(units) == 0 {
		b.WriteString("no Dockerfile that fetches an upstream and applies a patch directory found\n")
	}
	bad := 0
	for _, u := range units {
		if u.Status == adopt.StatusUnreadable {
			bad++
			fmt.Fprintf(&b, "%s: could not read: %s\n", u.Dockerfile, u.Problem)
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
	_, err := io.WriteString(w, b.String())
	return err
}

func initMarkdown(w io.Writer, units []adopt.Unit) error {
	var b strings.Builder
	b.WriteString("### patchkit init\n\n| unit | status | upstream | pin | from |\n|---|---|---|---|---|\n")
	for _, u := range units {
		if u.Status == adopt.StatusUnreadable {
			fmt.Fprintf(&b, "| `%s` | could not read | | | %s |\n", mdCell(u.Dir), mdCell(u.Problem))
			continue
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | `%s` | %s |\n", mdCell(u.Dir), initVerb(u), mdCell(u.Upstream.URL), mdCell(u.Upstream.Ref), mdCell(u.Upstream.From))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func initGitHub(w io.Writer, units []adopt.Unit) error {
	var b strings.Builder
	for _, u := range units {
		if u.Status == adopt.StatusUnreadable {
			fmt.Fprintf(&b, "::warning file=%s,title=%s::%s\n", ghProp(u.Dockerfile), ghProp("patchkit init"), ghEscape(u.Problem))
			continue
		}
		fmt.Fprintf(&b, "::notice file=%s,title=%s::%s %s: %s at %s\n", ghProp(u.Dockerfile), ghProp("patchkit init"), initVerb(u), ghEscape(u.Spec), ghEscape(u.Upstream.URL), ghEscape(u.Upstream.Ref))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
