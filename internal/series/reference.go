package series

// Reference files.
//
// A reference file stands in a series for an upstream commit, without its
// diff text. It is a patch file (named *.diff or *.patch, so that it keeps its
// place in the glob order; `patchkit backport --reference` names it
// NNNN-<slug>.ref.diff) whose header has the two fields
//
//	Reference: <the full 40-hex id of the upstream commit>
//	Patch-Id: <its `git patch-id --stable`>
//
// beside the usual DEP-3 fields (Subject, Origin: upstream, <commit URL>,
// Bug), and no diff. The series engine materializes it at apply time: the
// diff is the commit's `git show --format= --binary`, and it is used only if
// its patch-id is still Patch-Id (see Materialize), so a reference pins the
// change exactly as a full patch file does.
//
// A file with both the fields and a diff is a materialized reference: an
// ordinary patch whose diff is checked against Patch-Id when it is parsed.
// That is what a user gets by appending the commit's diff to the file.
//
// `git apply` of a glob that holds a reference fails ("No valid patches in
// input"), so a series with references never half-applies by mistake.
// Without patchkit, apply the files in glob order, each reference as the
// diff of its commit, in a checkout of the upstream that has the commits:
//
//	for p in $(LC_ALL=C ls patches/NAME | grep -E '\.(diff|patch)$'); do
//	  id=$(sed -n 's/^Reference: *\([0-9a-f]\{40\}\) *$/\1/p' "patches/NAME/$p")
//	  if [ -n "$id" ]; then git show --format= --binary "$id"; else cat "patches/NAME/$p"; fi |
//	    git apply --whitespace=error || exit 1
//	done
//
// (`patchkit apply IMAGE --out DIR` writes the same tree without a checkout.)

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/lazyre"
)

// The header fields of a reference file.
const (
	// ReferenceKey names the upstream commit a reference file stands for.
	ReferenceKey = "Reference"
	// PatchIDKey is the `git patch-id --stable` that the commit's diff must have.
	PatchIDKey = "Patch-Id"
)

// ReferenceSuffix is the name ending `patchkit backport --reference` gives a
// reference file. It is a convention for people and scripts; the Reference
// field, not the name, makes a file a reference.
const ReferenceSuffix = ".ref.diff"

// Reference is what a reference file pins: an upstream commit and the
// patch-id its diff must have.
type Reference struct {
	// Commit is the full commit id, lower case.
	Commit string
	// PatchID is the expected `git patch-id --stable` of the commit's diff.
	PatchID string
	// Line is the 1-based line of the Reference field; PatchIDLine that of
	// the Patch-Id field.
	Line        int
	PatchIDLine int
	// FileSize is, on a patch that Materialize made, the size of the
	// reference file itself: Bytes()[:FileSize] (FileBytes) is what is on
	// disk, and the commit's diff follows. 0 on a file as read.
	FileSize int
}

var fullIDRe = lazyre.New(`^[0-9a-fA-F]{40}$`)

// parseReference reads the Reference and Patch-Id fields of a header;
// hasDiff says whether the file has a diff after it. It returns nil, nil
// when the header has no Reference field, and when a file with a diff has a
// Reference field that is not a commit id (a DEP-3 header may use the name
// for a link). A header-only file whose Reference is not a full commit id, a
// missing or malformed Patch-Id, or either field given twice is a
// *diag.InputError.
func parseReference(path string, h Header, hasDiff bool) (*Reference, error) {
	var ref, pid *Field
	for i := range h.Fields {
		f := &h.Fields[i]
		switch {
		case strings.EqualFold(f.Key, ReferenceKey):
			if ref != nil {
				return nil, diag.Inputf(path, f.Line, "%s given twice (first on line %d)", ReferenceKey, ref.Line)
			}
			ref = f
		case strings.EqualFold(f.Key, PatchIDKey):
			if pid != nil {
				return nil, diag.Inputf(path, f.Line, "%s given twice (first on line %d)", PatchIDKey, pid.Line)
			}
			pid = f
		}
	}
	if ref == nil {
		return nil, nil
	}
	id := unfold(ref.Value)
	if hasDiff && !fullIDRe.MatchString(id) {
		return nil, nil
	}
	if !fullIDRe.MatchString(id) {
		return nil, diag.Inputf(path, ref.Line, "%s: %q is not a full 40-character commit id; a reference file names the upstream commit it stands for", ReferenceKey, id)
	}
	if pid == nil {
		return nil, diag.Inputf(path, ref.Line, "a reference file needs a %s field: the `git patch-id --stable` of commit %s", PatchIDKey, id)
	}
	want := unfold(pid.Value)
	if !fullIDRe.MatchString(want) {
		return nil, diag.Inputf(path, pid.Line, "%s: %q is not a 40-character hex patch-id", PatchIDKey, want)
	}
	return &Reference{Commit: strings.ToLower(id), PatchID: strings.ToLower(want), Line: ref.Line, PatchIDLine: pid.Line}, nil
}

// checkReference is Parse's last step for a file with a Reference field and
// a diff: the diff's patch-id must be the pinned one.
func checkReference(p *Patch) error {
	if p.PatchID == p.Reference.PatchID {
		return nil
	}
	got := p.PatchID
	if got == "" {
		got = "none (no \"diff --git\" line)"
	}
	return diag.Inputf(p.Path, p.Reference.PatchIDLine,
		"the diff's patch-id is %s, not %s: it is no longer the diff of upstream commit %s (refresh the file with `patchkit backport`, or drop the %s and %s fields)",
		got, p.Reference.PatchID, p.Reference.Commit, ReferenceKey, PatchIDKey)
}

// IsReference reports whether p is a reference file not yet materialized:
// it has a Reference field and no diff.
func (p *Patch) IsReference() bool { return p.Reference != nil && len(p.Files) == 0 }

// Materialize returns the patch that a reference file stands for: its header
// followed by diff, the diff of the referenced commit as
// `git show --format= --binary <commit>` prints it. The result is parsed as
// any patch file is, so its hunk lines count from the top of the file, as if
// the diff had been appended to it. It is a *diag.InputError, naming p's file
// and its Patch-Id line, when diff's patch-id is not Patch-Id (upstream
// rewrote the commit, or the file was edited), and when diff holds no diff.
// A patch that is not a reference is returned as it is.
func Materialize(p *Patch, diff []byte) (*Patch, error) {
	if !p.IsReference() {
		return p, nil
	}
	raw := make([]byte, 0, len(p.raw)+1+len(diff))
	raw = append(raw, p.raw...)
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		raw = append(raw, '\n')
	}
	raw = append(raw, diff...)
	q, err := Parse(p.Path, raw)
	if err != nil {
		if diag.IsInput(err) {
			return nil, err // it names the file, the line and the commit
		}
		return nil, fmt.Errorf("materializing reference to %s: %w", p.Reference.Commit, err)
	}
	if len(q.Files) == 0 {
		return nil, diag.Inputf(p.Path, p.Reference.Line, "upstream commit %s has no diff to apply", p.Reference.Commit)
	}
	q.Name = p.Name
	if q.Reference != nil {
		q.Reference.FileSize = len(p.raw)
	}
	return q, nil
}

// ReferenceHeader is what FormatReference writes.
type ReferenceHeader struct {
	// Fields are the DEP-3 fields to write first, in order (Subject, Origin,
	// Bug, ...), as "Key: value" with no newline.
	Fields []string
	// Commit is the full commit id; PatchID its `git patch-id --stable`.
	Commit  string
	PatchID string
}

// FormatReference returns the content of a reference file: the fields, the
// Reference and Patch-Id fields, and a short paragraph that tells a reader
// how to apply it without patchkit. It parses back (Parse) to a Patch whose
// Reference is Commit and PatchID.
func FormatReference(h ReferenceHeader) ([]byte, error) {
	if !fullIDRe.MatchString(h.Commit) {
		return nil, fmt.Errorf("reference: %q is not a full commit id", h.Commit)
	}
	if !fullIDRe.MatchString(h.PatchID) {
		return nil, fmt.Errorf("reference: %q is not a patch-id", h.PatchID)
	}
	var b bytes.Buffer
	for _, f := range h.Fields {
		if strings.ContainsAny(f, "\r\n") {
			return nil, fmt.Errorf("reference: field %q spans lines", f)
		}
		b.WriteString(f + "\n")
	}
	fmt.Fprintf(&b, "%s: %s\n%s: %s\n\n", ReferenceKey, strings.ToLower(h.Commit), PatchIDKey, strings.ToLower(h.PatchID))
	fmt.Fprintf(&b, "This file is a reference: it carries no diff. patchkit applies the diff\n"+
		"of upstream commit %s here, once its\n"+
		"`git patch-id --stable` is %s.\n"+
		"Without patchkit, apply the output of\n"+
		"`git show --format= --binary %s`\n"+
		"at this place of the series.\n",
		h.Commit, h.PatchID, h.Commit)
	return b.Bytes(), nil
}
