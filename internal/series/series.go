// Package series reads an image's ordered patch series: each patch parsed once,
// with its DEP-3 header and its git patch-id.
package series

import (
	"bytes"
	"path/filepath"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// Patch is one patch file of a series, parsed.
type Patch struct {
	// Name is the file's base name (0001-fix.diff); series order is byte-wise by Name.
	Name string
	// Path is the file's path as messages name it (relative to the repository root).
	Path string
	// raw is the file's bytes (Bytes). They never change: the lines and
	// names of Files share their memory.
	raw []byte
	// Header is the metadata parsed from the text before the first diff.
	Header Header
	// Files are the file diffs, as go-gitdiff parsed them.
	Files []*gitdiff.File
	// HunkLine gives, for each text fragment, the 1-based line of Bytes that holds
	// its "@@ -a,b +c,d @@" header. Line k of the fragment (0-based) is on line
	// HunkLine+1+k, plus one for each earlier fragment line that lacks its
	// newline (a "\ No newline at end of file" marker follows such a line).
	HunkLine map[*gitdiff.TextFragment]int
	// FileLine gives, for each file diff, the 1-based line of Bytes where its
	// header starts: "diff --git", or the "---" of a traditional diff.
	FileLine map[*gitdiff.File]int
	// PatchID is `git patch-id --stable` of the diff (see PatchID), in hex;
	// "" for a traditional diff without "diff --git" lines, for which git
	// prints no id either. For a reference file it is the pinned Patch-Id
	// until the file is materialized.
	PatchID string
	// Reference is set for a reference file (see reference.go): the upstream
	// commit it stands for and its pinned patch-id. Until Materialize fills
	// in the commit's diff, Files and HunkLine are empty.
	Reference *Reference
	// NamesFinal is set when the names of Files are tree paths already
	// rewritten for a strip level or a directory (Options): the applier then
	// strips nothing, not even from traditional diffs.
	NamesFinal bool
	// Mailbox is set when the patch is one mail of a mailbox file of
	// several (Options.Mail): the file's path as messages name it; Path is
	// then Mailbox + "#N".
	Mailbox string

	options Options
}

// Header is a patch's metadata: the DEP-3 fields and the other dialects that
// DESIGN.md lists.
type Header struct {
	// Subject is the one-line summary: the Subject field without its
	// "[PATCH ...]" tags, else the first line of Description.
	Subject string
	// Description is the Description field (its first line included) and
	// the free text of the header (a mail's message), paragraphs joined by
	// blank lines.
	Description string
	// Origin is where the change comes from: the first Origin field, or the
	// dialect that named the upstream change.
	Origin Origin
	// Origins are the upstream changes (commits or PRs) the patch is a
	// backport of, in the order they apply: every Origin field that names
	// one, else Origin when it names one; nil when none does. Origins[0]
	// is Origin.
	Origins []Origin
	// Bug lists bug URLs (Bug:, Bug-<vendor>:).
	Bug []string
	// Forwarded is no, not-needed, or a URL; "" when absent.
	Forwarded string
	// AppliedUpstream is the first upstream release that carries the change.
	AppliedUpstream string
	// Tests are the tests or subtests this patch owns (Test:).
	Tests []string
	// Author is the Author (DEP-3) or From (mail) field.
	Author string
	// LastUpdate is the Last-Update field.
	LastUpdate string
	// Fields are every "Key: value" field in order, with their lines, for checks
	// that need the raw text.
	Fields []Field
	// Lines is the number of header lines (text before the first diff).
	Lines int
}

// Origin says where a patch comes from.
type Origin struct {
	// Kind is upstream, backport, vendor, other, or "" when no field says.
	Kind string
	// URL is the commit URL when one was given.
	URL string
	// Commit is the upstream commit id when one was given (full or abbreviated hex).
	Commit string
	// PR is the number of the upstream pull request (GitHub) or merge
	// request (GitLab) when the origin names one rather than a commit; URL
	// is then its URL, or "" for a bare "#N" (a PR of the spec's upstream).
	// A PR is not a commit: verify --online resolves its merge commit.
	PR int
	// Source names the field or dialect the commit came from: Origin,
	// Backport-of, cherry-picked, commit-upstream, Upstream-Status, and the
	// prose forms: "Backport of", "Upstream PR", "Cherry-picked from",
	// "upstream PR #N", "commit URL".
	Source string
	// Line is the header line where the commit was found.
	Line int
}

// Field is one "Key: value" header field.
type Field struct {
	// Key is the field name as written (its case kept).
	Key string
	// Value is the text after "Key:", with continuation lines joined by
	// newlines, each without its first blank.
	Value string
	// Line is the 1-based line of "Key:".
	Line int
}

// MaxPatchSize is the largest patch file, in bytes, that Parse and Load
// accept; a larger file is rejected before it is parsed.
var MaxPatchSize int64 = 64 << 20

// Bytes returns the patch's text: the file's bytes (a materialized
// reference's with the commit's diff appended, a recounted patch's with its
// "@@" lines recounted). The slice shares the Patch's memory, has no spare
// capacity (an append copies) and must not be modified: the strings of
// Files are views into it.
func (p *Patch) Bytes() []byte {
	return p.raw[:len(p.raw):len(p.raw)]
}

// FileBytes returns what the patch file holds on disk: Bytes, less the
// commit's diff that Materialize appended to a reference file. Like Bytes,
// it must not be modified.
func (p *Patch) FileBytes() []byte {
	if ref := p.Reference; ref != nil && ref.FileSize > 0 && ref.FileSize <= len(p.raw) {
		return p.raw[:ref.FileSize:ref.FileSize]
	}
	return p.Bytes()
}

// Unchecked returns a Patch of raw and the file diffs go-gitdiff parsed from
// it, without any of Parse's checks and with empty HunkLine and FileLine maps
// for the caller to fill. It is for tests of the later stages that must see
// patches Parse refuses (a path outside the tree, a hunk at odds with its
// header); everything else reads patches with Parse or Load. raw is kept, as
// Parse keeps it.
func Unchecked(path string, raw []byte, files []*gitdiff.File) *Patch {
	return &Patch{Name: filepath.Base(path), Path: path, raw: raw, Files: files,
		HunkLine: map[*gitdiff.TextFragment]int{}, FileLine: map[*gitdiff.File]int{}}
}

// Paths lists the tree paths p's file diffs change (the new name, or the old
// one of a deletion), in patch order, each once, leaving out the file diffs
// skip (when not nil) says to.
func (p *Patch) Paths(skip func(*gitdiff.File) bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range p.Files {
		if skip != nil && skip(f) {
			continue
		}
		if name := ChangedPath(f); !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// ChangedPath is the tree path file diff f changes: its new name, or the old
// one when it deletes the file.
func ChangedPath(f *gitdiff.File) string {
	if f.IsDelete {
		return f.OldName
	}
	return f.NewName
}

// Diff returns the diff part of Bytes: the bytes after the header. The slice
// shares the Patch's memory, has no spare capacity and must not be modified.
func (p *Patch) Diff() []byte {
	return p.raw[lineOffset(p.raw, p.Header.Lines):len(p.raw):len(p.raw)]
}

// lineOffset returns the offset of the start of line n+1 (0-based n) of b,
// or len(b) when b has fewer lines.
func lineOffset(b []byte, n int) int {
	off := 0
	for i := 0; i < n; i++ {
		j := bytes.IndexByte(b[off:], '\n')
		if j < 0 {
			return len(b)
		}
		off += j + 1
	}
	return off
}
