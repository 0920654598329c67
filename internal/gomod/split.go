package gomod

import (
	"fmt"
	"path"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"golang.org/x/mod/modfile"

	"github.com/patchkit/patchkit/internal/lazyre"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/tree"
)

// Directive names in Want.Path for the go.mod directives that are versions.
const (
	DirectiveGo        = "go"
	DirectiveToolchain = "toolchain"
)

// Want is one requirement a bump patch raises: in the go.mod at File, module
// Path (or the go or toolchain directive) at Version or higher.
type Want struct {
	// File is the go.mod's path in the tree ("go.mod", "api/go.mod").
	File string `json:"file"`
	// Path is the module path, or "go" or "toolchain" for a directive.
	Path string `json:"module"`
	// From is the version the patch's removed line had, "" when it adds the
	// requirement.
	From string `json:"from,omitempty"`
	// Version is the version the patch requires.
	Version string `json:"version"`
	// Replace is the replacement module path when the patch's line is a
	// replace directive (Path => Path Version); "" for a require. A replace
	// by another module (a fork) or by a directory is code, not a version.
	Replace string `json:"replace,omitempty"`
	// Hold says the line holds the module down: it lowers the version the
	// line had (From), or it sets a version below the one the tree the
	// patch applies to requires (see Split.Orient). Upstream going higher
	// never covers a hold; upstream requiring the module at Version or
	// lower, or dropping it, does.
	Hold bool `json:"holds,omitempty"`
}

// Key names the requirement: file, module and, for a replace, its target.
func (w Want) Key() string { return w.File + "\x00" + w.Path + "\x00" + w.Replace }

// Hunk is one hunk (or whole file diff) of a patch and its part.
type Hunk struct {
	Path string
	// Header is the "@@ ... @@" line, "" for a whole file diff.
	Header string
	// Line is the hunk's line in the patch file.
	Line int
	// Bump says the hunk only changes version lines.
	Bump bool
}

// Split is a patch cut into its bump part and its code part.
type Split struct {
	// Bump holds the hunks that only change version lines; nil when none.
	Bump *series.Patch
	// Code holds the other hunks; nil when none.
	Code *series.Patch
	// Wants are the requirements the bump part raises, in patch order.
	Wants []Want
	// Hunks are every hunk with its part, in patch order.
	Hunks []Hunk
}

// IsBump reports whether the whole patch is a bump.
func (s *Split) IsBump() bool { return s != nil && s.Bump != nil && s.Code == nil }

// IsMixed reports whether the patch has both parts.
func (s *Split) IsMixed() bool { return s != nil && s.Bump != nil && s.Code != nil }

// IsGoMod reports whether name is a go.mod file.
func IsGoMod(name string) bool { return path.Base(name) == "go.mod" }

// IsGoSum reports whether name is a go.sum file.
func IsGoSum(name string) bool { return path.Base(name) == "go.sum" }

// IsModulesTxt reports whether name is a vendor/modules.txt.
func IsModulesTxt(name string) bool {
	return name == "vendor/modules.txt" || strings.HasSuffix(name, "/vendor/modules.txt")
}

// SplitPatch cuts p hunk by hunk into its bump part and its code part. It
// returns nil when p has no bump hunk that raises a requirement (a patch that
// only touches go.sum is left to the line rules), or when p cannot be cut
// (a reference not materialized, a part that does not parse).
func SplitPatch(p *series.Patch) *Split {
	if p == nil || len(p.Files) == 0 {
		return nil
	}
	lines := series.SplitKeep(string(p.Bytes()))
	head := series.SplitKeep(string(p.HeaderBytes()))
	var bump, code []string
	s := &Split{}
	for k, f := range p.Files {
		start := p.FileLine[f] - 1
		end := len(lines)
		if k+1 < len(p.Files) {
			end = p.FileLine[p.Files[k+1]] - 1
		}
		if start < 0 || start >= end || end > len(lines) {
			return nil
		}
		name := f.NewName
		if name == "" {
			name = f.OldName
		}
		whole := f.IsNew || f.IsDelete || f.IsRename || f.IsCopy || f.IsBinary || len(f.TextFragments) == 0 ||
			(f.OldMode != 0 && f.NewMode != 0 && f.OldMode != f.NewMode)
		if whole {
			isBump := !f.IsRename && !f.IsCopy && !f.IsBinary && (IsGoSum(name) || IsModulesTxt(name))
			s.Hunks = append(s.Hunks, Hunk{Path: name, Line: start + 1, Bump: isBump})
			if isBump {
				bump = append(bump, lines[start:end]...)
			} else {
				code = append(code, lines[start:end]...)
			}
			continue
		}
		first := p.HunkLine[f.TextFragments[0]] - 1
		if first <= start || first > end {
			return nil
		}
		fileHead := lines[start:first]
		var bumpFrags, codeFrags []string
		for _, tf := range f.TextFragments {
			h := p.HunkLine[tf]
			if h <= 0 || h > end {
				return nil
			}
			fe := series.HunkEnd(lines, h, tf)
			frag := lines[h-1 : fe]
			isBump, wants := classify(name, tf)
			s.Hunks = append(s.Hunks, Hunk{Path: name, Header: strings.TrimRight(lines[h-1], "\r\n"), Line: h, Bump: isBump})
			if isBump {
				bumpFrags = append(bumpFrags, frag...)
				s.Wants = append(s.Wants, wants...)
			} else {
				codeFrags = append(codeFrags, frag...)
			}
		}
		if len(bumpFrags) > 0 {
			bump = append(append(bump, fileHead...), bumpFrags...)
		}
		if len(codeFrags) > 0 {
			code = append(append(code, fileHead...), codeFrags...)
		}
	}
	if len(s.Wants) == 0 {
		return nil
	}
	if len(code) == 0 {
		s.Bump = p
		return s
	}
	var err error
	if s.Bump, err = series.Parse(p.Path, []byte(strings.Join(append(append([]string(nil), head...), bump...), ""))); err != nil {
		return nil
	}
	if s.Code, err = series.Parse(p.Path, []byte(strings.Join(append(append([]string(nil), head...), code...), ""))); err != nil {
		return nil
	}
	return s
}

// classify says whether a hunk of file name changes only version lines, and
// the requirements its added go.mod lines raise.
func classify(name string, tf *gitdiff.TextFragment) (bool, []Want) {
	switch {
	case IsGoSum(name), IsModulesTxt(name):
		return true, nil
	case !IsGoMod(name):
		return false, nil
	}
	removed := map[string]string{} // module or directive -> version
	var added []Want
	block := ""
	for _, l := range tf.Lines {
		text := strings.TrimRight(l.Line, "\r\n")
		if l.Op == gitdiff.OpContext {
			block = blockAfter(block, text)
			continue
		}
		ln, ok := parseLine(block, text)
		block = blockAfter(block, text)
		if !ok {
			return false, nil
		}
		if ln.path == "" {
			continue // structure: "require (", ")", a comment, a blank line
		}
		if l.Op == gitdiff.OpDelete {
			removed[ln.path] = ln.version
			continue
		}
		added = append(added, Want{File: name, Path: ln.path, Version: ln.version, Replace: ln.replace})
	}
	for i := range added {
		w := &added[i]
		w.From = removed[w.Path]
		w.Hold = w.From != "" && Compare(w.Path, w.Version, w.From) < 0
	}
	return true, added
}

// Orient marks as holds the wants of s that set a version below the one
// base requires: base is the tree the patch applies to (the pin, with the
// patches before it), read for each go.mod the wants name. A want whose
// line lowered the version it had (From) is a hold already (SplitPatch);
// this finds the lines that add a replace, or a require, below the tree's
// requirement. A go.mod that base lacks or that does not parse orients
// nothing.
func (s *Split) Orient(base tree.Source) error {
	if s == nil {
		return nil
	}
	mods := map[string]*modfile.File{}
	for i := range s.Wants {
		w := &s.Wants[i]
		if w.Hold || w.From != "" || w.Path == DirectiveGo || w.Path == DirectiveToolchain {
			continue
		}
		f, ok := mods[w.File]
		if !ok {
			data, found, err := base.Read(w.File)
			if err != nil {
				return fmt.Errorf("reading %s: %w", w.File, err)
			}
			if found {
				f, _ = modfile.Parse(w.File, data.Data, nil)
			}
			mods[w.File] = f
		}
		if f == nil {
			continue
		}
		if v := required(f, w.Path); v != "" && Compare(w.Path, w.Version, v) < 0 {
			w.Hold = true
		}
	}
	return nil
}

// required is the version of module path that f builds: its replace by the
// same module at a version, else its require; "" when f does not require it.
func required(f *modfile.File, path string) string {
	req := ""
	for _, r := range f.Require {
		if r.Mod.Path == path {
			req = r.Mod.Version
		}
	}
	for _, r := range f.Replace {
		if r.Old.Path == path && (r.Old.Version == "" || r.Old.Version == req) && r.New.Path == path && r.New.Version != "" {
			return r.New.Version
		}
	}
	return req
}

// blockAfter returns the block ("require", "replace", "exclude", ...) that
// the line opens or closes, or the one it stays in.
func blockAfter(block, text string) string {
	t := strings.TrimSpace(stripComment(text))
	if strings.HasSuffix(t, "(") {
		return strings.TrimSpace(strings.TrimSuffix(t, "("))
	}
	if t == ")" {
		return ""
	}
	return block
}

func stripComment(s string) string {
	if i := strings.Index(s, "//"); i >= 0 {
		return s[:i]
	}
	return s
}

type modLine struct {
	path, version, replace string
}

// parseLine reads one changed go.mod line inside block. ok is false for a
// line that is not a version line (module, retract, godebug, a replace to a
// directory, anything unknown).
func parseLine(block, text string) (modLine, bool) {
	t := strings.TrimSpace(stripComment(text))
	if t == "" || t == ")" {
		return modLine{}, true
	}
	f := strings.Fields(t)
	if len(f) == 2 && f[1] == "(" && (f[0] == "require" || f[0] == "replace" || f[0] == "exclude") {
		return modLine{}, true
	}
	kind := block
	if block == "" {
		switch f[0] {
		case DirectiveGo, DirectiveToolchain, "require", "replace", "exclude":
			kind, f = f[0], f[1:]
		default:
			// A hunk that starts inside a block: its lines say which.
			kind = "require"
			if indexOf(f, "=>") > 0 {
				kind = "replace"
			}
			block = kind
		}
	}
	switch kind {
	case DirectiveGo, DirectiveToolchain:
		if len(f) == 1 {
			return modLine{path: kind, version: f[0]}, true
		}
	case "require":
		if len(f) == 2 && validVersion(f[1]) {
			return modLine{path: unquote(f[0]), version: f[1]}, true
		}
	case "exclude":
		// Excluding a version is a version line, but raises nothing.
		if len(f) == 2 && validVersion(f[1]) {
			return modLine{}, true
		}
	case "replace":
		// old [v] => old v. A replacement by a directory, or by another
		// module (a fork), is code: what it builds is not a version of
		// the module.
		i := indexOf(f, "=>")
		if i < 1 || len(f)-i != 3 || !validVersion(f[len(f)-1]) || unquote(f[i+1]) != unquote(f[0]) {
			return modLine{}, false
		}
		return modLine{path: unquote(f[0]), version: f[len(f)-1], replace: unquote(f[i+1])}, true
	}
	return modLine{}, false
}

func indexOf(f []string, s string) int {
	for i, x := range f {
		if x == s {
			return i
		}
	}
	return -1
}

func unquote(s string) string { return strings.Trim(s, "\"`") }

// advisoryRe finds advisory ids: CVE-YYYY-NNNN and the Go vulnerability
// database's GO-YYYY-NNNN.
var advisoryRe = lazyre.New(`\b(?:CVE|GO)-[0-9]{4}-[0-9]{4,}\b`)

// AdvisoryIDs returns the advisory ids (CVE-, GO-) in text, each once, in order.
func AdvisoryIDs(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, id := range advisoryRe.FindAllString(text, -1) {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// Advisories returns the advisories a patch header names in its fields
// (Advisory:, and any other field but Subject and Description, such as a
// Bug URL that names the id), each once, in order.
func Advisories(h series.Header) []string {
	var b strings.Builder
	for _, f := range h.Fields {
		k := strings.ToLower(f.Key)
		if k == "subject" || k == "description" {
			continue
		}
		b.WriteString(f.Value + "\n")
	}
	return AdvisoryIDs(b.String())
}

// MissingAdvisories returns the advisory ids that the subject or the
// description of h mention and that no other field names.
func MissingAdvisories(h series.Header) []string {
	named := map[string]bool{}
	for _, id := range Advisories(h) {
		named[id] = true
	}
	var out []string
	for _, id := range AdvisoryIDs(h.Subject + "\n" + h.Description) {
		if !named[id] {
			out = append(out, id)
		}
	}
	return out
}
