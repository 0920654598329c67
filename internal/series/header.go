package series

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/lazyre"
)

// Origin kinds, as DEP-3 names them.
const (
	KindUpstream = "upstream"
	KindBackport = "backport"
	KindVendor   = "vendor"
	KindOther    = "other"
)

// Origin sources: the field or dialect an Origin's commit came from.
const (
	SourceOrigin         = "Origin"
	SourceBackportOf     = "Backport-of"
	SourceCherryPicked   = "cherry-picked"
	SourceCommitUpstream = "commit-upstream"
	SourceUpstreamStatus = "Upstream-Status"
	// Prose forms that real carries use (see proseRes).
	SourceBackportProse = "Backport of"
	SourceUpstreamPR    = "Upstream PR"
	SourceCherryFrom    = "Cherry-picked from"
	SourceFixesPR       = "upstream PR #N"
	SourceCommitURL     = "commit URL"
)

var (
	// fieldRe is a "Key: value" line; the value may be empty.
	fieldRe = lazyre.New(`^([A-Za-z][A-Za-z0-9_-]*):(?:[ \t]+(.*)|[ \t]*)$`)
	// mboxFromRe is the first line of a git format-patch mail.
	mboxFromRe = lazyre.New(`^From [0-9a-fA-F]{7,64} `)
	// hexIDRe is an abbreviated or full commit id.
	hexIDRe = lazyre.New(`^[0-9a-fA-F]{7,40}$`)
	// keywordRe is a word that can only be an Origin kind, never a reference.
	keywordRe = lazyre.New(`^[A-Za-z][A-Za-z_-]*$`)
	// cherryPickedRe is the line `git cherry-pick -x` adds.
	cherryPickedRe = lazyre.New(`(?i)\(cherry[ -]picked from commit ([0-9a-f]{7,40})\)`)
	// commitUpstreamRe is the Linux stable style: "commit <id> upstream." at
	// the start of a line, or "[ Upstream commit <id> ]".
	commitUpstreamRe = lazyre.New(`(?i)^(?:commit ([0-9a-f]{7,40}) upstream\b|\[ *upstream commit ([0-9a-f]{7,40}) *\])`)
	// upstreamStatusRe is the Yocto "Upstream-Status: Backport [<ref>]".
	upstreamStatusRe = lazyre.New(`(?i)^backport\b\s*(?:\[([^\]]*)\])?`)
	// commitURLRes find the commit id in the URLs of the usual forges:
	// GitHub .../commit/<id> and .../pull/N/commits/<id>, GitLab
	// .../-/commit/<id>, Bitbucket .../commits/<id>, cgit ?id=<id>, gitweb
	// ;h=<id>, Gerrit/Gitiles .../+/<id>.
	commitURLRes = []*lazyre.Regexp{
		lazyre.New(`/commits?/([0-9a-fA-F]{7,40})(?:[/?#.]|$)`),
		lazyre.New(`[?&;](?:id|h)=([0-9a-fA-F]{7,40})(?:[&;#]|$)`),
		lazyre.New(`/\+/([0-9a-fA-F]{7,40})(?:[/?#^]|$)`),
	}
	// prURLRe is a pull request (GitHub) or merge request (GitLab) URL:
	// the repository URL and the number.
	prURLRe = lazyre.New(`^(https?://[^/\s]+/[^\s]+?)/(?:pull|-/merge_requests)/([0-9]+)(?:[/?#]|$)`)
	// shortPRRe is GitHub's "owner/repo#N" shorthand.
	shortPRRe = lazyre.New(`^([A-Za-z0-9][A-Za-z0-9-]*)/([A-Za-z0-9._-]+)#([0-9]+)$`)
	// hashPRRe is a bare "#N".
	hashPRRe = lazyre.New(`^#([0-9]+)$`)
	// proseRes are the prose lines that name the upstream change, each
	// with the source it fills Origin.Source with; a "# " comment prefix
	// (shell-style headers) is allowed. The reference is read by splitRef.
	proseRes = []struct {
		re     *lazyre.Regexp
		source string
	}{
		{lazyre.New(`(?i)^(?:#\s*)?backport(?:ed)?\s+(?:of|from)\s*:?\s+(.+)$`), SourceBackportProse},
		{lazyre.New(`(?i)^(?:#\s*)?upstream\s+(?:pr|pull request|merge request|commit)s?\s*:?\s+(.+)$`), SourceUpstreamPR},
		{lazyre.New(`(?i)^(?:#\s*)?cherry[ -]picked\s+from\s*:?\s+(.+)$`), SourceCherryFrom},
	}
	// fixesPRRe is "Fixes upstream PR #N" or "Ref upstream PR #N" anywhere in a line.
	fixesPRRe = lazyre.New(`(?i)\b(?:fix(?:es|ed)?|refs?|see|backports?)\s+upstream\s+(?:pr|pull request)\s+#([0-9]+)\b`)
	// patchTagRe is the "[PATCH v2 1/3]" or "[RFC]" tags git format-patch
	// puts before a subject.
	patchTagRe = lazyre.New(`^(?:\s*\[(?i:PATCH|RFC)[^\]]*\])+\s*`)
)

// originCandidate is a commit or pull request found by a dialect other than
// the Origin field.
type originCandidate struct {
	url, commit, source string
	pr                  int
	line                int
}

// ParseHeader parses a patch header: the text before the first diff. file
// names the patch in errors; line numbers count from the start of text.
//
// Fields follow DEP-3: "Key: value" lines, with continuation lines (starting
// with a space or tab) appended to the field before them, in any paragraph; a
// line "---" ends the fields. A git format-patch mail ("From <id> <date>",
// "From:", "Date:", "Subject: [PATCH] ...", then the message) parses too:
// Subject loses its "[PATCH ...]" tags and the message becomes Description.
// Text that is not a field is the long description. Every dialect DESIGN.md
// names fills Origin; see Origin.Source.
//
// ParseHeader is lenient where a later check decides (an upstream Origin
// without a commit is verify's finding) and strict where the text is
// malformed: a NUL byte, invalid UTF-8, an Origin of unknown kind, an empty or
// repeated Origin, an empty Applied-Upstream or Test field are
// *diag.InputError naming file and line.
func ParseHeader(text []byte, file string) (Header, error) {
	var h Header
	if i := bytes.IndexByte(text, 0); i >= 0 {
		return h, diag.Inputf(file, 1+bytes.Count(text[:i], []byte("\n")), "NUL byte in the patch header")
	}
	lines := headerLines(text)
	h.Lines = len(lines)
	for i, l := range lines {
		if !utf8.ValidString(l) {
			return h, diag.Inputf(file, i+1, "invalid UTF-8 in the patch header")
		}
	}
	p := headerParser{file: file, h: &h}
	if err := p.parse(lines); err != nil {
		return h, err
	}
	return h, nil
}

// headerLines splits text into lines without their "\n" or "\r\n".
func headerLines(text []byte) []string {
	if len(text) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(text), "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

type headerParser struct {
	file string
	h    *Header

	subject     *Field
	description *Field
	origin      *Field
	origins     []Origin // every Origin field that names a commit or a PR
	author      bool
	forwarded   bool
	lastUpdate  bool
	applied     bool
	candidates  []originCandidate
	freeText    []string // paragraphs of text that are not fields
}

// knownKeys are the fields recognised even inside a paragraph of free text.
var knownKeys = map[string]bool{
	"subject": true, "description": true, "origin": true, "bug": true,
	"forwarded": true, "author": true, "from": true, "last-update": true,
	"applied-upstream": true, "test": true, "backport-of": true,
	"upstream-status": true,
}

func isKnownKey(key string) bool {
	k := strings.ToLower(key)
	return knownKeys[k] || strings.HasPrefix(k, "bug-")
}

func (p *headerParser) parse(lines []string) error {
	// Dialects that may appear on any line, fields or not.
	for i, l := range lines {
		if m := cherryPickedRe.FindStringSubmatch(l); m != nil {
			p.candidates = append(p.candidates, originCandidate{commit: strings.ToLower(m[1]), source: SourceCherryPicked, line: i + 1})
		}
		if m := commitUpstreamRe.FindStringSubmatch(l); m != nil {
			id := m[1]
			if id == "" {
				id = m[2]
			}
			p.candidates = append(p.candidates, originCandidate{commit: strings.ToLower(id), source: SourceCommitUpstream, line: i + 1})
		}
		if c, ok := proseCandidate(l); ok {
			c.line = i + 1
			p.candidates = append(p.candidates, c)
		}
	}

	start := 0
	for start < len(lines) && strings.TrimSpace(lines[start]) == "" {
		start++
	}
	if start < len(lines) && mboxFromRe.MatchString(lines[start]) {
		start++ // the mbox separator; the mail header follows
	}

	// A field and its lines; continuation lines are joined at the end, so
	// that a long field costs linear time.
	type rawField struct {
		f     Field
		parts []string
	}
	var fields []*rawField
	var cur *rawField // the field continuation lines extend
	var para []string // the free text of the current paragraph
	inFields := false // the paragraph started with a field
	endPara := func() {
		if len(para) > 0 {
			p.freeText = append(p.freeText, strings.Join(para, "\n"))
		}
		para, cur, inFields = nil, nil, false
	}
	for i := start; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimRight(l, " \t") == "---" {
			break
		}
		if strings.TrimSpace(l) == "" {
			endPara()
			continue
		}
		first := len(para) == 0 && cur == nil
		if cur != nil && (l[0] == ' ' || l[0] == '\t') {
			cont := l[1:]
			if strings.EqualFold(cur.f.Key, "description") && strings.TrimSpace(cont) == "." {
				cont = ""
			}
			cur.parts = append(cur.parts, strings.TrimRight(cont, " \t"))
			continue
		}
		if m := fieldRe.FindStringSubmatch(l); m != nil && (inFields || first || isKnownKey(m[1])) {
			if first {
				inFields = true
			}
			cur = &rawField{f: Field{Key: m[1], Line: i + 1}, parts: []string{strings.TrimRight(m[2], " \t")}}
			fields = append(fields, cur)
			continue
		}
		cur = nil
		para = append(para, strings.TrimRight(l, " \t"))
	}
	endPara()

	for _, f := range fields {
		f.f.Value = strings.Join(f.parts, "\n")
		p.h.Fields = append(p.h.Fields, f.f)
	}
	for i := range p.h.Fields {
		if err := p.field(&p.h.Fields[i]); err != nil {
			return err
		}
	}
	p.finish()
	return nil
}

// unfold joins a field's continuation lines with single spaces.
func unfold(v string) string {
	parts := strings.Split(v, "\n")
	for i, s := range parts {
		parts[i] = strings.TrimSpace(s)
	}
	return strings.TrimSpace(strings.Join(parts, " "))
}

func (p *headerParser) field(f *Field) error {
	key := strings.ToLower(f.Key)
	v := unfold(f.Value)
	switch {
	case key == "subject":
		if p.subject == nil {
			p.subject = f
		}
	case key == "description":
		if p.description == nil {
			p.description = f
		}
	case key == "origin":
		return p.addOrigin(f, v)
	case key == "bug" || strings.HasPrefix(key, "bug-"):
		if v != "" {
			p.h.Bug = append(p.h.Bug, v)
		}
	case key == "forwarded":
		if !p.forwarded {
			p.h.Forwarded, p.forwarded = v, true
		}
	case key == "author" || key == "from":
		if !p.author {
			p.h.Author, p.author = v, true
		}
	case key == "last-update":
		if !p.lastUpdate {
			p.h.LastUpdate, p.lastUpdate = v, true
		}
	case key == "applied-upstream":
		if v == "" {
			return diag.Inputf(p.file, f.Line, "Applied-Upstream is empty; want the first upstream release that carries the change")
		}
		if p.applied {
			return diag.Inputf(p.file, f.Line, "Applied-Upstream given twice")
		}
		p.h.AppliedUpstream, p.applied = v, true
	case key == "test":
		names := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
		if len(names) == 0 {
			return diag.Inputf(p.file, f.Line, "Test names no test")
		}
		p.h.Tests = append(p.h.Tests, names...)
	case key == "backport-of":
		url, commit := splitRef(v)
		p.candidates = append(p.candidates, originCandidate{url: url, commit: commit, source: SourceBackportOf, line: f.Line})
	case key == "upstream-status":
		if m := upstreamStatusRe.FindStringSubmatch(v); m != nil {
			url, commit := splitRef(m[1])
			p.candidates = append(p.candidates, originCandidate{url: url, commit: commit, source: SourceUpstreamStatus, line: f.Line})
		}
	}
	return nil
}

// addOrigin reads one Origin field. Several are allowed when each names a
// commit or a PR and all have the same kind, upstream or backport: a backport
// of several upstream changes, applied in the order of the lines.
func (p *headerParser) addOrigin(f *Field, v string) error {
	o, err := p.parseOrigin(f, v)
	if err != nil {
		return err
	}
	if p.origin == nil {
		p.origin = f
		p.h.Origin = o
		if o.names() {
			p.origins = append(p.origins, o)
		}
		return nil
	}
	first := p.h.Origin
	switch {
	case !first.names() || !o.names():
		return diag.Inputf(p.file, f.Line, "Origin given twice (first on line %d); several Origin lines must each name an upstream commit or PR", p.origin.Line)
	case o.Kind != first.Kind:
		return diag.Inputf(p.file, f.Line, "Origin kind %q differs from %q on line %d; the Origin lines of one patch share their kind", o.Kind, first.Kind, p.origin.Line)
	case first.Kind == KindVendor || first.Kind == KindOther:
		return diag.Inputf(p.file, f.Line, "Origin given twice (first on line %d); only upstream and backport origins name several commits", p.origin.Line)
	}
	for _, prev := range p.origins {
		if prev.Commit == o.Commit && prev.PR == o.PR && prev.URL == o.URL {
			return diag.Inputf(p.file, f.Line, "Origin repeats line %d", prev.Line)
		}
	}
	p.origins = append(p.origins, o)
	return nil
}

// parseOrigin reads "Origin: [<kind>, ]<URL or commit id>" or "Origin: <kind>".
func (p *headerParser) parseOrigin(f *Field, v string) (Origin, error) {
	if v == "" {
		return Origin{}, diag.Inputf(p.file, f.Line, "Origin is empty; want upstream, backport, vendor or other, then a comma and a URL or commit id")
	}
	kind, rest := "", v
	isKeyword := func(w string) bool { return keywordRe.MatchString(w) && !hexIDRe.MatchString(w) }
	if i := strings.IndexByte(v, ','); i >= 0 && isKeyword(strings.TrimSpace(v[:i])) {
		kind, rest = strings.TrimSpace(v[:i]), strings.TrimSpace(v[i+1:])
	} else if word, tail, _ := strings.Cut(v, " "); isKeyword(word) {
		kind, rest = word, strings.TrimSpace(tail)
	}
	if kind != "" {
		switch k := strings.ToLower(kind); k {
		case KindUpstream, KindBackport, KindVendor, KindOther:
			kind = k
		default:
			return Origin{}, diag.Inputf(p.file, f.Line, "unknown Origin kind %q; want upstream, backport, vendor or other", kind)
		}
	}
	r := readRef(rest)
	return Origin{Kind: kind, URL: r.url, Commit: r.commit, PR: r.pr, Source: SourceOrigin, Line: f.Line}, nil
}

// names reports whether o names an upstream change: a commit or a PR.
func (o Origin) names() bool { return o.Commit != "" || o.PR != 0 }

// ref is what a reference names: a URL, and the commit or pull request in it.
type ref struct {
	url, commit string
	pr          int
}

// readRef reads a reference as splitRef does, and also pull requests: a
// GitHub pull request or GitLab merge request URL, "owner/repo#N" (a GitHub
// URL is made of it) or "#N" (a PR of the upstream). The first commit or PR
// in the text wins; a URL that names neither is kept when nothing follows.
func readRef(text string) ref {
	var out ref
	for _, tok := range strings.Fields(text) {
		t := strings.TrimSuffix(strings.Trim(tok, "<>()[],;\"'"), ".")
		t = strings.TrimSuffix(strings.TrimSuffix(t, ":"), ",")
		if m := prURLRe.FindStringSubmatch(t); m != nil && commitFromURL(t) == "" {
			n, _ := strconv.Atoi(m[2])
			return ref{url: t, pr: n}
		}
		if m := shortPRRe.FindStringSubmatch(t); m != nil {
			n, _ := strconv.Atoi(m[3])
			return ref{url: fmt.Sprintf("https://github.com/%s/%s/pull/%d", m[1], m[2], n), pr: n}
		}
		if m := hashPRRe.FindStringSubmatch(t); m != nil {
			n, _ := strconv.Atoi(m[1])
			return ref{pr: n}
		}
		if url, commit := splitRef(tok); commit != "" {
			return ref{url: url, commit: commit}
		} else if url != "" && out.url == "" {
			out.url = url
		}
	}
	return out
}

// proseCandidate reads the prose forms of one header line: "Backport of
// <ref>", "Upstream PR: <ref>", "Cherry-picked from <ref>", "Fixes upstream
// PR #N", and a commit URL alone on its line.
func proseCandidate(l string) (originCandidate, bool) {
	t := strings.TrimSpace(l)
	for _, pr := range proseRes {
		if m := pr.re.FindStringSubmatch(t); m != nil {
			if r := readRef(m[1]); r.commit != "" || r.pr != 0 {
				return originCandidate{url: r.url, commit: r.commit, pr: r.pr, source: pr.source}, true
			}
		}
	}
	if m := fixesPRRe.FindStringSubmatch(t); m != nil {
		n, _ := strconv.Atoi(m[1])
		return originCandidate{pr: n, source: SourceFixesPR}, true
	}
	t = strings.TrimSpace(strings.TrimPrefix(t, "#"))
	if !strings.ContainsAny(t, " \t") && strings.Contains(t, "://") {
		if id := commitFromURL(t); id != "" {
			return originCandidate{url: t, commit: id, source: SourceCommitURL}, true
		}
	}
	return originCandidate{}, false
}

// splitRef finds a URL and a commit id in a reference: a URL (the commit id
// taken from it when it names one), "commit:<id>", "commit <id>" or a bare
// 7 to 40 digit hex id. Words that are neither are skipped.
func splitRef(ref string) (url, commit string) {
	toks := strings.Fields(ref)
	for i := 0; i < len(toks); i++ {
		t := strings.Trim(toks[i], "<>()[],;\"'")
		t = strings.TrimSuffix(t, ".")
		if rest, ok := cutPrefixFold(t, "commit:"); ok {
			t = rest
			if t == "" && i+1 < len(toks) {
				i++
				t = strings.Trim(toks[i], "<>()[],;.\"'")
			}
		} else if strings.EqualFold(t, "commit") {
			continue
		}
		if strings.Contains(t, "://") {
			if url == "" {
				url = t
				commit = commitFromURL(t)
			}
			if commit != "" {
				return url, commit
			}
			continue
		}
		if hexIDRe.MatchString(t) {
			return url, strings.ToLower(t)
		}
	}
	return url, ""
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// commitFromURL returns the commit id a forge URL names, or "".
func commitFromURL(u string) string {
	for _, re := range commitURLRes {
		if m := re.FindStringSubmatch(u); m != nil {
			return strings.ToLower(m[1])
		}
	}
	return ""
}

// finish settles Subject, Description and Origin once every field is read.
func (p *headerParser) finish() {
	h := p.h
	var desc []string
	if p.description != nil {
		d := strings.TrimSpace(p.description.Value)
		if d != "" {
			desc = append(desc, d)
		}
	}
	desc = append(desc, p.freeText...)
	h.Description = strings.TrimSpace(strings.Join(desc, "\n\n"))

	switch {
	case p.subject != nil:
		h.Subject = strings.TrimSpace(patchTagRe.ReplaceAllString(unfold(p.subject.Value), ""))
	case p.description != nil:
		first, _, _ := strings.Cut(strings.TrimSpace(p.description.Value), "\n")
		h.Subject = strings.TrimSpace(first)
	}

	p.settleOrigin()
}

// settleOrigin fills Origin from the other dialects when no Origin field
// names a change, and Origins from the Origin fields or else from Origin.
func (p *headerParser) settleOrigin() {
	h := p.h
	defer func() {
		if len(p.origins) > 0 {
			h.Origins = p.origins
		} else if h.Origin.names() {
			h.Origins = []Origin{h.Origin}
		}
	}()
	cands := p.sortedCandidates()
	if len(cands) == 0 {
		return
	}
	// The first dialect in the text that names a commit wins; failing that,
	// the first that names a PR; failing that, the first one.
	best := cands[0]
	if i := slices.IndexFunc(cands, func(c originCandidate) bool { return c.commit != "" }); i >= 0 {
		best = cands[i]
	} else if i := slices.IndexFunc(cands, func(c originCandidate) bool { return c.pr != 0 }); i >= 0 {
		best = cands[i]
	}
	o := &h.Origin
	switch {
	case p.origin == nil:
		*o = Origin{Kind: KindBackport, URL: best.url, Commit: best.commit, PR: best.pr, Source: best.source, Line: best.line}
	case len(p.origins) > 1 || o.Commit != "" || !(o.Kind == "" || o.Kind == KindUpstream || o.Kind == KindBackport):
	case best.commit != "" || (best.pr != 0 && o.PR == 0):
		// The Origin field names no commit (at most a PR); another
		// dialect does.
		if o.Kind == "" {
			o.Kind = KindBackport
		}
		if best.url != "" {
			o.URL = best.url
		}
		o.Commit, o.PR, o.Source, o.Line = best.commit, best.pr, best.source, best.line
		p.origins = nil
	}
}

// sortedCandidates returns the candidates in line order.
func (p *headerParser) sortedCandidates() []originCandidate {
	out := slices.Clone(p.candidates)
	slices.SortStableFunc(out, func(a, b originCandidate) int { return a.line - b.line })
	return out
}

// String renders an Origin for messages: "backport a229dec (Origin, line 2)".
func (o Origin) String() string {
	if o.Kind == "" && o.Commit == "" && o.URL == "" {
		return "no origin"
	}
	var b strings.Builder
	b.WriteString(o.Kind)
	if b.Len() == 0 {
		b.WriteString("origin")
	}
	switch {
	case o.Commit != "":
		fmt.Fprintf(&b, " %s", o.Commit)
	case o.PR != 0 && o.URL != "":
		fmt.Fprintf(&b, " PR %s", o.URL)
	case o.PR != 0:
		fmt.Fprintf(&b, " PR #%d", o.PR)
	case o.URL != "":
		fmt.Fprintf(&b, " %s", o.URL)
	}
	if o.Source != "" {
		fmt.Fprintf(&b, " (%s, line %d)", o.Source, o.Line)
	}
	return b.String()
}
