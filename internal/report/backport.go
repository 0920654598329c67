package report

import (
	"fmt"
	"strings"

	"github.com/patchkit/patchkit/internal/apply"
)

// Backport is the result of `patchkit backport`.
type Backport struct {
	Image string `json:"image"`
	// Commit is the upstream commit's full id, Subject its subject.
	Commit  string `json:"commit"`
	Subject string `json:"subject"`
	// File is the patch file written (or refused), relative to the root.
	File string `json:"file"`
	// Reference is true for a reference file.
	Reference bool `json:"reference"`
	// PatchID is the commit's `git patch-id --stable`.
	PatchID string `json:"patchId"`
	// Written says whether File was written.
	Written bool `json:"written"`
	// Ref is the pin, Applies whether the series with the new patch applies
	// to it, and Errors the new patch's problems when it does not.
	Ref     string          `json:"ref"`
	Applies bool            `json:"applies"`
	Errors  []apply.Problem `json:"errors"`
	// SeriesFails is set when the series did not apply even without the new
	// patch.
	SeriesFails bool `json:"seriesFails,omitempty"`
	// Raised says, for a dependency bump re-expressed at the pin, which
	// modules the patch raises and which the pin already covers.
	Raised string `json:"raised,omitempty"`
}

// Command implements Result.
func (Backport) Command() string { return "backport" }

func (r Backport) clean() Result {
	if r.Errors == nil {
		r.Errors = []apply.Problem{}
	}
	for i := range r.Errors {
		r.Errors[i].Message = Redact(r.Errors[i].Message)
	}
	return r
}

// summary is the head line ("wrote backport F of upstream C (S)") and the
// verdict ("applies to REF").
func (r Backport) summary() (head, verdict string) {
	kind := "backport"
	if r.Reference {
		kind = "reference"
	}
	verb := "wrote"
	if !r.Written {
		verb = "did not write"
	}
	head = fmt.Sprintf("%s %s %s of upstream %s (%s)", verb, kind, r.File, short(r.Commit), r.Subject)
	verdict = "applies to " + r.Ref
	if !r.Applies {
		verdict = "does not apply to " + r.Ref
	}
	if r.SeriesFails {
		verdict += " (the series does not apply without it either)"
	}
	if r.Raised != "" {
		verdict += "; a dependency bump re-expressed at the pin: " + r.Raised
	}
	return head, verdict
}

// GitHub implements GitHubber.
func (r Backport) GitHub() string {
	head, verdict := r.summary()
	var b strings.Builder
	level := "notice"
	if !r.Applies {
		level = "error"
	}
	annotate(&b, level, r.File, 0, "patchkit backport", ghEscape(head)+"; "+ghEscape(verdict))
	for _, e := range r.Errors {
		annotate(&b, "error", e.File, max(e.Line, 1), "patchkit backport "+e.Kind, ghEscape(e.Message))
	}
	return b.String()
}

// Markdown implements Markdowner.
func (r Backport) Markdown() string {
	head, verdict := r.summary()
	icon := "✅"
	if !r.Applies {
		icon = "❌"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### %s patchkit backport `%s`\n\n%s: `%s`, %s.\n", icon, r.Image, strings.ToUpper(head[:1])+head[1:], r.PatchID, verdict)
	for _, e := range r.Errors {
		fmt.Fprintf(&b, "- `%s:%d` %s\n", e.File, e.Line, mdText(e.Message))
	}
	return b.String() + "\n"
}

// Text implements Texter.
func (r Backport) Text() string {
	head, verdict := r.summary()
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n  patch-id %s; %s\n", r.Image, head, r.PatchID, verdict)
	for _, e := range r.Errors {
		writeProblem(&b, "    ", e)
	}
	return b.String()
}
