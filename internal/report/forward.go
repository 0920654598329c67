package report

import (
	"fmt"
	"strings"

	"github.com/patchkit/patchkit/internal/forward"
	"github.com/patchkit/patchkit/internal/upgrade"
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

// Command implements Result.
func (Forward) Command() string { return "forward" }

// recorded says what the header says now (--pr).
func (r Forward) recorded() string {
	verb := "already says"
	if r.Changed {
		verb = "now says"
	}
	return fmt.Sprintf("%s %s Forwarded: %s", r.Patch, verb, r.Forwarded)
}

// carried says where the patch was carried, and how.
func (r Forward) carried() string {
	return fmt.Sprintf("%s carried to %s (%s): %s: %s", r.Patch, r.To, short(r.ToCommit), r.Fate, r.Evidence)
}

// conflictLine is one conflict: path, hunk and message.
func conflictLine(c upgrade.Conflict) string {
	s := c.Path
	if c.Hunk != "" {
		s += " " + c.Hunk
	}
	return s + ": " + c.Message
}

// recordHint is how to record the pull request once it is open.
func (r Forward) recordHint() string {
	return fmt.Sprintf("open the pull request with that body, then record it: patchkit forward %s --pr URL", r.Patch)
}

// Text implements Texter.
func (r Forward) Text() string {
	if r.Forwarded != "" {
		return Redact(r.recorded() + "\n")
	}
	var b strings.Builder
	b.WriteString(r.carried() + "\n")
	for _, c := range r.Conflicts {
		b.WriteString("  " + conflictLine(c) + "\n")
	}
	for _, file := range r.Files {
		fmt.Fprintf(&b, "wrote %s\n", file)
	}
	if len(r.Files) > 0 {
		b.WriteString(r.recordHint() + "\n")
	}
	return Redact(b.String())
}

// Markdown implements Markdowner: a heading, the carry and its conflicts,
// the files written.
func (r Forward) Markdown() string {
	var b strings.Builder
	if r.Forwarded != "" {
		verb := "already says"
		if r.Changed {
			verb = "now says"
		}
		fmt.Fprintf(&b, "### patchkit forward `%s`\n\nThe patch %s `Forwarded: %s`.\n", mdCell(r.Patch), verb, mdCell(r.Forwarded))
		return b.String()
	}
	icon := "✅"
	if r.Fate == upgrade.FateConflict {
		icon = "❌"
	}
	fmt.Fprintf(&b, "### %s patchkit forward `%s`\n\nCarried to `%s` (`%s`): **%s**: %s\n", icon, mdCell(r.Patch), mdCell(r.To), short(r.ToCommit), r.Fate, upCell(r.Evidence))
	if len(r.Conflicts) > 0 {
		b.WriteString("\n")
	}
	for _, c := range r.Conflicts {
		fmt.Fprintf(&b, "- `%s`", mdCell(c.Path))
		if c.Hunk != "" {
			fmt.Fprintf(&b, " `%s`", mdCell(c.Hunk))
		}
		fmt.Fprintf(&b, ": %s\n", upCell(c.Message))
	}
	if len(r.Files) > 0 {
		b.WriteString("\n")
		for _, file := range r.Files {
			fmt.Fprintf(&b, "- wrote `%s`\n", mdCell(file))
		}
		fmt.Fprintf(&b, "\nOpen the pull request with that body, then record it: `patchkit forward %s --pr URL`.\n", mdCell(r.Patch))
	}
	return b.String()
}

// GitHub implements GitHubber: an ::error annotation on the patch for each
// conflict, and a notice (an error when it conflicts) of the carry.
func (r Forward) GitHub() string {
	var b strings.Builder
	if r.Forwarded != "" {
		annotate(&b, "notice", r.Patch, 0, "patchkit forward", ghEscape(r.recorded()))
		return b.String()
	}
	for _, c := range r.Conflicts {
		annotate(&b, "error", r.Patch, 0, "patchkit forward conflict", ghEscape(conflictLine(c)))
	}
	level := "notice"
	if r.Fate == upgrade.FateConflict {
		level = "error"
	}
	msg := r.carried()
	if len(r.Files) > 0 {
		msg += "; wrote " + strings.Join(r.Files, ", ") + "; " + r.recordHint()
	}
	annotate(&b, level, r.Patch, 0, "patchkit forward", ghEscape(msg))
	return b.String()
}
