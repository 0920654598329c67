package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/patchkit/patchkit/internal/forward"
)

// Forward is `patchkit forward`'s result: the prepared submission and the
// files written, or the header recorded.
type Forward struct {
	*forward.Result
	// Files are the files written (the format-patch mail, the PR body).
	Files []string `json:"files,omitempty"`
	// Forwarded is the URL recorded in the header (--pr).
	Forwarded string `json:"forwarded,omitempty"`
	Changed   bool   `json:"changed,omitempty"`
}

// RenderForward renders a forward result.
func RenderForward(w io.Writer, f Format, r Forward) error {
	if f == JSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(r)
	}
	var b strings.Builder
	if r.Forwarded != "" {
		verb := "already says"
		if r.Changed {
			verb = "now says"
		}
		fmt.Fprintf(&b, "%s %s Forwarded: %s\n", r.Patch, verb, r.Forwarded)
		_, err := io.WriteString(w, Redact(b.String()))
		return err
	}
	fmt.Fprintf(&b, "%s carried to %s (%s): %s: %s\n", r.Patch, r.To, short(r.ToCommit), r.Fate, r.Evidence)
	for _, c := range r.Conflicts {
		fmt.Fprintf(&b, "  %s", c.Path)
		if c.Hunk != "" {
			fmt.Fprintf(&b, " %s", c.Hunk)
		}
		fmt.Fprintf(&b, ": %s\n", c.Message)
	}
	for _, file := range r.Files {
		fmt.Fprintf(&b, "wrote %s\n", file)
	}
	if len(r.Files) > 0 {
		fmt.Fprintf(&b, "open the pull request with that body, then record it: patchkit forward %s --pr URL\n", r.Patch)
	}
	_, err := io.WriteString(w, Redact(b.String()))
	return err
}
