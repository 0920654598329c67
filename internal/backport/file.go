package backport

import (
	"bytes"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/patchkit/patchkit/internal/lazyre"
	"github.com/patchkit/patchkit/internal/series"
)

// Forge is a web front end of a git host whose URLs patchkit can build.
type Forge struct {
	// Kind is "github" or "gitlab".
	Kind string
	// Base is the repository's web URL, https://host/owner/repo, without
	// credentials, ".git" or a trailing slash.
	Base string
	// Host, Owner and Repo split it (Owner may hold GitLab subgroups).
	Host, Owner, Repo string
}

// ParseForge reads a GitHub- or GitLab-style repository URL: an https or
// http URL, or an scp-like or ssh address (git@github.com:owner/repo.git),
// on a host whose name contains "github" or "gitlab". ok is false for any
// other URL (file://, a plain git server); patchkit then names commits by id.
func ParseForge(raw string) (f Forge, ok bool) {
	raw = strings.TrimSpace(raw)
	var host, p string
	switch {
	case strings.Contains(raw, "://"):
		u, err := url.Parse(raw)
		if err != nil {
			return f, false
		}
		switch strings.ToLower(u.Scheme) {
		case "https", "http", "ssh", "git+ssh", "ssh+git", "git":
		default:
			return f, false
		}
		host, p = u.Hostname(), u.Path
	case strings.Contains(raw, "@") && strings.Contains(raw, ":"):
		// scp-like: git@github.com:owner/repo.git
		at := strings.LastIndex(raw[:strings.Index(raw, ":")], "@")
		host, p, _ = strings.Cut(raw[at+1:], ":")
	default:
		return f, false
	}
	host = strings.ToLower(host)
	switch {
	case strings.Contains(host, "github"):
		f.Kind = "github"
	case strings.Contains(host, "gitlab"):
		f.Kind = "gitlab"
	default:
		return f, false
	}
	p = strings.TrimSuffix(strings.Trim(p, "/"), ".git")
	parts := strings.Split(p, "/")
	if len(parts) < 2 || f.Kind == "github" && len(parts) != 2 {
		return Forge{}, false
	}
	for _, s := range parts {
		if s == "" || s == "." || s == ".." {
			return Forge{}, false
		}
	}
	f.Host = host
	f.Owner = strings.Join(parts[:len(parts)-1], "/")
	f.Repo = parts[len(parts)-1]
	f.Base = "https://" + host + "/" + p
	return f, true
}

// CommitURL is the web URL of commit id.
func (f Forge) CommitURL(id string) string {
	if f.Kind == "gitlab" {
		return f.Base + "/-/commit/" + id
	}
	return f.Base + "/commit/" + id
}

// IssueURL is the web URL of issue n of owner/repo on the same host; an
// empty ownerRepo means this repository.
func (f Forge) IssueURL(ownerRepo string, n int) string {
	base := f.Base
	if ownerRepo != "" {
		base = "https://" + f.Host + "/" + ownerRepo
	}
	if f.Kind == "gitlab" {
		return fmt.Sprintf("%s/-/issues/%d", base, n)
	}
	return fmt.Sprintf("%s/issues/%d", base, n)
}

var (
	// issueURLRe is a full issue URL on any host.
	issueURLRe = lazyre.New(`https?://[^\s<>()\[\]"']+/issues/[0-9]+`)
	// keywordRe starts a reference list: "Fixes #1", "Closes: #2, #3",
	// "Refs owner/repo#4".
	keywordRe = lazyre.New(`(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?|refs?|references?|see|bug|issue)\b:?[ \t]+`)
	// issueRefRe is one reference of such a list.
	issueRefRe = lazyre.New(`^(?:([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+))?#([0-9]+)\b`)
	listSepRe  = lazyre.New(`^(?:[ \t]*,[ \t]*|[ \t]+and[ \t]+|[ \t]+)`)
)

// Bugs finds the bug references of a commit message, in order and without
// repeats: full issue URLs as written, and "#N" or "owner/repo#N" after a
// keyword (Fixes, Closes, Resolves, Refs, See, Bug, Issue), made into URLs of
// forge f. Without a forge (ok false), only full URLs are found. A bare
// "(#N)", as GitHub puts after a squashed pull request's subject, names the
// pull request, not a bug, and is left out.
func Bugs(message string, f Forge, ok bool) []string {
	var out []string
	seen := map[string]bool{}
	add := func(u string) {
		u = strings.TrimRight(u, ".,;:")
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	type hit struct {
		at  int
		url string
	}
	var hits []hit
	for _, m := range issueURLRe.FindAllStringIndex(message, -1) {
		hits = append(hits, hit{m[0], message[m[0]:m[1]]})
	}
	if ok {
		for _, m := range keywordRe.FindAllStringIndex(message, -1) {
			rest, at := message[m[1]:], m[1]
			for {
				r := issueRefRe.FindStringSubmatchIndex(rest)
				if r == nil {
					break
				}
				n, err := strconv.Atoi(rest[r[4]:r[5]])
				if err == nil && n > 0 {
					repo := ""
					if r[2] >= 0 {
						repo = rest[r[2]:r[3]]
					}
					hits = append(hits, hit{at, f.IssueURL(repo, n)})
				}
				rest, at = rest[r[1]:], at+r[1]
				sep := listSepRe.FindString(rest)
				if sep == "" || !issueRefRe.MatchString(rest[len(sep):]) {
					break
				}
				rest, at = rest[len(sep):], at+len(sep)
			}
		}
	}
	// In the order they appear in the message.
	slices.SortStableFunc(hits, func(a, b hit) int { return a.at - b.at })
	for _, h := range hits {
		add(h.url)
	}
	return out
}

// Header is the DEP-3 header of a backport, made from its upstream commit.
type Header struct {
	Subject string
	// Origin is the value of the Origin field: "upstream, <commit URL>", or
	// "upstream, <id>" when the upstream is not a forge patchkit knows.
	Origin string
	Bugs   []string
	Author string
	// Body is the commit message after the subject.
	Body string
}

// NewHeader makes the header of a backport of cm from the upstream at
// repoURL (the spec's upstream.url).
func NewHeader(cm *Commit, repoURL string) Header {
	f, ok := ParseForge(repoURL)
	h := Header{Subject: cm.Subject, Author: cm.Author, Body: cm.Body}
	if h.Subject == "" {
		h.Subject = "upstream commit " + cm.ID[:12]
	}
	h.Origin = "upstream, " + cm.ID
	if ok {
		h.Origin = "upstream, " + f.CommitURL(cm.ID)
	}
	h.Bugs = Bugs(cm.Subject+"\n\n"+cm.Body, f, ok)
	return h
}

// Fields returns the header's fields as "Key: value" lines, without newlines.
func (h Header) Fields() []string {
	out := []string{"Subject: " + oneLine(h.Subject), "Origin: " + h.Origin}
	for _, b := range h.Bugs {
		out = append(out, "Bug: "+b)
	}
	if h.Author != "" {
		out = append(out, "Author: "+oneLine(h.Author))
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Format returns a backport file: the header's fields, the commit message's
// body indented by four spaces as `git log` shows it (so that no line of it
// reads as a header field, a "---" or the start of a diff), a blank line,
// and the commit's diff. It checks that the file parses back with Origin
// naming the commit.
func Format(h Header, commit string, diff []byte) ([]byte, error) {
	var b bytes.Buffer
	for _, f := range h.Fields() {
		b.WriteString(f + "\n")
	}
	if body := strings.TrimSpace(h.Body); body != "" {
		b.WriteString("\n")
		for _, l := range strings.Split(body, "\n") {
			l = strings.TrimRight(l, " \t\r")
			if l != "" {
				l = "    " + l
			}
			b.WriteString(l + "\n")
		}
	}
	b.WriteString("\n")
	b.Write(diff)
	out := b.Bytes()
	p, err := series.Parse("backport", out)
	if err != nil {
		return nil, fmt.Errorf("the backport of %s would not parse: %w", commit, err)
	}
	if p.Header.Origin.Commit != commit {
		return nil, fmt.Errorf("the backport of %s would name commit %q in its Origin", commit, p.Header.Origin.Commit)
	}
	return out, nil
}

// FormatReference returns a reference file for commit, whose diff has the
// patch-id patchID: the header's fields, and the Reference and Patch-Id
// fields (see series.FormatReference).
func FormatReference(h Header, commit, patchID string) ([]byte, error) {
	return series.FormatReference(series.ReferenceHeader{Fields: h.Fields(), Commit: commit, PatchID: patchID})
}

var (
	slugRe    = lazyre.New(`[^a-z0-9]+`)
	numberRe  = lazyre.New(`^([0-9]+)-`)
	validSlug = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// MaxSlug is the longest slug Slug makes.
const MaxSlug = 52

// Slug makes a file name part from a subject: lower case, runs of other
// characters made one "-", at most MaxSlug characters, cut at a "-".
func Slug(subject string) string {
	s := strings.Trim(slugRe.ReplaceAllString(strings.ToLower(subject), "-"), "-")
	if len(s) > MaxSlug {
		s = s[:MaxSlug]
		if i := strings.LastIndexByte(s, '-'); i > MaxSlug/2 {
			s = s[:i]
		}
		s = strings.Trim(s, "-")
	}
	return s
}

// NextName returns the file name of a new patch that takes the last place
// in the byte-wise order of the series whose file names are existing: the
// next number after the highest "NNNN-" prefix (at least four digits, as
// wide as the widest prefix), "-", slug, and ".diff" (".ref.diff" for a
// reference). slug may end in .diff or .patch, which is dropped. It is an
// error when slug is not a plain file name, or when the name would not sort
// last (a series whose last names are not numbered, or a number that grows
// a digit): the message says which name it would sort before.
func NextName(existing []string, slug string, reference bool) (string, error) {
	slug = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(slug, ".diff"), ".patch"), ".ref")
	if !validSlug.MatchString(slug) || path.Base(slug) != slug {
		return "", fmt.Errorf("--name %q: want a file name part of letters, digits, '.', '_' and '-'", slug)
	}
	suffix := ".diff"
	if reference {
		suffix = series.ReferenceSuffix
	}
	next, width := 1, 4
	for _, n := range existing {
		m := numberRe.FindStringSubmatch(n)
		if m == nil {
			continue
		}
		v, err := strconv.Atoi(m[1])
		if err != nil {
			continue
		}
		next = max(next, v+1)
		width = max(width, len(m[1]))
	}
	name := fmt.Sprintf("%0*d-%s%s", width, next, slug, suffix)
	for _, n := range existing {
		if n == name {
			return "", fmt.Errorf("%s already exists", name)
		}
		if n > name {
			return "", fmt.Errorf("%s would sort before %s, so it would not be the last patch of the series; rename the series' files with numbered prefixes (NNNN-name.diff)", name, n)
		}
	}
	return name, nil
}
