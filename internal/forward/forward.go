// Package forward prepares the upstream submission of an original change:
// the patch carried to the upstream's default branch (upgrade's three-way
// logic), `git format-patch` output made by the git CLI, and a pull request
// body from the patch's DEP-3 header.
package forward

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/upgrade"
	"github.com/patchkit/patchkit/internal/upstream"
)

// Input is what Prepare forwards.
type Input struct {
	Cache *upstream.Cache
	Spec  *spec.Spec
	// PinCommit is upstream.ref resolved.
	PinCommit string
	// Patches is the series; Index names the patch to forward.
	Patches []*series.Patch
	Index   int
	// To is the upstream ref to carry it to (the default branch) and
	// ToCommit that resolved.
	To, ToCommit string
	// Author is "Name <email>": the header's Author (From) when empty.
	Author string
	// Date is the commit's date; zero means now.
	Date time.Time
	// WithTest adds the spec's injected test files (test.inject, read from
	// Root) to the commit at their places in the tree, so the regression
	// test goes upstream with the change.
	WithTest bool
	Root     string
}

// Result is the prepared submission.
type Result struct {
	Patch    string `json:"patch"`
	To       string `json:"to"`
	ToCommit string `json:"toCommit"`
	// Fate is how it was carried: kept, refreshed, merged or conflict
	// (upgrade's fates).
	Fate      string            `json:"fate"`
	Evidence  string            `json:"evidence"`
	Conflicts upgrade.Conflicts `json:"conflicts,omitempty"`
	// Name is the format-patch file name (0001-<subject>.patch); Mail is its
	// content, nil on a conflict.
	Name string `json:"name,omitempty"`
	Mail []byte `json:"-"`
	// Body is the pull request's body (markdown).
	Body string `json:"-"`
	// Tests are the test files the commit adds or replaces (WithTest).
	Tests []string `json:"tests,omitempty"`
}

// testFile is an injected test file: its place in the tree and content.
type testFile struct {
	path string
	data []byte
}

// injected reads the spec's test.inject files.
func injected(root string, s *spec.Spec) ([]testFile, error) {
	if s.Test == nil || len(s.Test.Inject) == 0 {
		return nil, &diag.InputError{File: s.File, Key: "test.inject", Msg: "--with-test: the unit injects no test file"}
	}
	var out []testFile
	for i, in := range s.Test.Inject {
		key := fmt.Sprintf("test.inject[%d].from", i)
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(in.From)))
		if err != nil {
			return nil, &diag.InputError{File: s.File, Line: s.Line(key), Key: key, Msg: "reading the test file", Err: err}
		}
		out = append(out, testFile{path: in.To, data: data})
	}
	return out, nil
}

// Prepare carries Patches[Index] from the pin (with the patches before it
// applied) to ToCommit, and makes its format-patch mail and PR body. A
// backport (its Origin names an upstream commit or PR) is bad input: it is
// upstream already.
func Prepare(ctx context.Context, in Input) (*Result, error) {
	p := in.Patches[in.Index]
	if o := p.Header.Origin; o.Commit != "" || o.PR > 0 || p.Reference != nil {
		return nil, &diag.InputError{File: p.Path, Line: o.Line, Msg: "a backport of an upstream change: there is nothing to forward"}
	}
	author := in.Author
	if author == "" {
		author = p.Header.Author
	}
	name, email, ok := parseIdent(author)
	if !ok {
		return nil, &diag.InputError{File: p.Path, Msg: fmt.Sprintf("no author to forward it as (%q): add an Author: Name <email> header field, or pass --author", author)}
	}
	pinSrc, err := in.Cache.Source(in.PinCommit)
	if err != nil {
		return nil, err
	}
	toSrc, err := in.Cache.Source(in.ToCommit)
	if err != nil {
		return nil, err
	}
	tool := apply.ForTool(in.Spec.Apply.Whitespace, in.Spec.Apply.Fuzz, in.Spec.Apply.Loose)
	old := apply.New(pinSrc, tool...)
	for _, q := range in.Patches[:in.Index] {
		if r := old.Apply(q); r.Status != apply.StatusApplied {
			return nil, fmt.Errorf("%s does not apply at the pin: run patchkit apply first", q.Path)
		}
	}
	fate, text, err := upgrade.Carry(old, apply.New(toSrc, tool...), p)
	if err != nil {
		return nil, err
	}
	res := &Result{Patch: p.Path, To: in.To, ToCommit: in.ToCommit, Fate: fate.Fate, Evidence: fate.Evidence, Conflicts: fate.Conflicts}
	res.Body = Body(p, in.Spec, res)
	if text == nil {
		return res, nil
	}
	date := in.Date
	if date.IsZero() {
		date = time.Now()
	}
	np, err := series.Parse(p.Path, text)
	if err != nil {
		return nil, fmt.Errorf("%s: the carried patch does not parse: %w", p.Path, err)
	}
	var tests []testFile
	if in.WithTest {
		if tests, err = injected(in.Root, in.Spec); err != nil {
			return nil, err
		}
		for _, f := range tests {
			res.Tests = append(res.Tests, f.path)
		}
		res.Body = Body(p, in.Spec, res)
	}
	res.Name, res.Mail, err = formatPatch(ctx, in.Cache, in.ToCommit, np.Diff(), tests, message(p), name, email, date)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// message is the commit message: the Subject, then the Description without
// a first line that repeats it.
func message(p *series.Patch) string {
	h := p.Header
	desc := strings.TrimSpace(h.Description)
	if first, rest, _ := strings.Cut(desc, "\n"); strings.TrimSpace(first) == h.Subject {
		desc = strings.TrimSpace(rest)
	}
	msg := h.Subject
	if desc != "" {
		msg += "\n\n" + desc
	}
	return msg + "\n"
}

// Body is the pull request body: the description, the bugs, and the
// regression test the patch owns.
func Body(p *series.Patch, s *spec.Spec, r *Result) string {
	h := p.Header
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", h.Subject)
	if d := strings.TrimSpace(h.Description); d != "" {
		b.WriteString(d + "\n\n")
	}
	if len(h.Bug) > 0 {
		b.WriteString("### Bug\n\n")
		for _, u := range h.Bug {
			fmt.Fprintf(&b, "- %s\n", u)
		}
		b.WriteString("\n")
	}
	if len(h.Tests) > 0 {
		b.WriteString("### Regression test\n\n")
		for _, t := range h.Tests {
			fmt.Fprintf(&b, "- `%s`\n", t)
		}
		switch {
		case len(r.Tests) > 0:
			b.WriteString("\n")
			for _, t := range r.Tests {
				fmt.Fprintf(&b, "The commit adds the test as `%s`", t)
				if s.Test.Run != "" {
					fmt.Fprintf(&b, " (`go test %s -run '%s'`)", s.Test.Package, s.Test.Run)
				}
				b.WriteString(".\n")
			}
		case s != nil && s.Test != nil:
			b.WriteString("\n")
			for _, in := range s.Test.Inject {
				fmt.Fprintf(&b, "The test is carried downstream in `%s`, run as `%s` in `%s`", in.From, in.To, s.Test.Package)
				if s.Test.Run != "" {
					fmt.Fprintf(&b, " (`go test -run '%s'`)", s.Test.Run)
				}
				b.WriteString(".\n")
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Carried downstream as `%s`; prepared against `%s` (`%s`), %s.\n", p.Path, r.To, short(r.ToCommit), r.Fate)
	return b.String()
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// parseIdent reads "Name <email>".
func parseIdent(s string) (name, email string, ok bool) {
	s = strings.TrimSpace(s)
	i, j := strings.LastIndex(s, "<"), strings.LastIndex(s, ">")
	if i <= 0 || j < i+2 || j != len(s)-1 {
		return "", "", false
	}
	name, email = strings.TrimSpace(s[:i]), s[i+1:j]
	return name, email, name != "" && strings.Contains(email, "@") && !strings.ContainsAny(s, "\n\r")
}

// formatPatch commits diff on top of base in a scratch repository that
// borrows the cache's objects (alternates: the cache is never written) and
// returns `git format-patch -1`'s file name and content.
func formatPatch(ctx context.Context, c *upstream.Cache, base string, diff []byte, tests []testFile, msg, name, email string, date time.Time) (string, []byte, error) {
	tmp, err := os.MkdirTemp("", "patchkit-forward-")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(tmp)
	gitDir := filepath.Join(tmp, "repo.git")
	objects, err := filepath.Abs(filepath.Join(c.Path(), "objects"))
	if err != nil {
		return "", nil, err
	}
	stamp := fmt.Sprintf("%d +0000", date.Unix())
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index"),
		"GIT_AUTHOR_NAME=" + name, "GIT_AUTHOR_EMAIL=" + email, "GIT_AUTHOR_DATE=" + stamp,
		"GIT_COMMITTER_NAME=" + name, "GIT_COMMITTER_EMAIL=" + email, "GIT_COMMITTER_DATE=" + stamp}
	// Through the cache's one git runner, on the scratch repository.
	run := func(stdin []byte, args ...string) (string, error) {
		out, err := c.Git(ctx, upstream.GitRun{Args: args, Stdin: stdin, Env: env, GitDir: gitDir})
		if errors.Is(err, upstream.ErrNoGit) {
			return "", fmt.Errorf("forward needs the git CLI: %w", err)
		}
		return strings.TrimSpace(string(out)), err
	}
	if _, err := run(nil, "init", "-q", "--bare"); err != nil {
		return "", nil, err
	}
	if err := os.WriteFile(filepath.Join(gitDir, "objects", "info", "alternates"), []byte(objects+"\n"), 0o644); err != nil {
		return "", nil, err
	}
	if _, err := run(nil, "read-tree", base); err != nil {
		return "", nil, err
	}
	if _, err := run(diff, "apply", "--cached", "--whitespace=nowarn", "-"); err != nil {
		return "", nil, err
	}
	for _, f := range tests {
		id, err := run(f.data, "hash-object", "-w", "--stdin")
		if err != nil {
			return "", nil, err
		}
		if _, err := run(nil, "update-index", "--add", "--cacheinfo", "100644,"+id+","+f.path); err != nil {
			return "", nil, err
		}
	}
	treeID, err := run(nil, "write-tree")
	if err != nil {
		return "", nil, err
	}
	commit, err := run([]byte(msg), "commit-tree", treeID, "-p", base, "-F", "-")
	if err != nil {
		return "", nil, err
	}
	outDir := filepath.Join(tmp, "out")
	file, err := run(nil, "format-patch", "-q", "-1", "--no-signature", "-o", outDir, commit)
	if err != nil {
		return "", nil, err
	}
	if file == "" {
		files, _ := filepath.Glob(filepath.Join(outDir, "*.patch"))
		if len(files) != 1 {
			return "", nil, errors.New("git format-patch wrote no file")
		}
		file = files[0]
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(tmp, file)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", nil, err
	}
	return filepath.Base(file), data, nil
}

// SetForwarded returns the patch file's bytes with Forwarded: url, checked:
// url must be an http(s) URL.
func SetForwarded(p *series.Patch, url string) ([]byte, bool, error) {
	if !strings.HasPrefix(url, "https://") && !strings.HasPrefix(url, "http://") {
		return nil, false, &diag.InputError{File: p.Path, Msg: fmt.Sprintf("--pr %q: want the pull request's http(s) URL", url)}
	}
	return series.SetField(p, "Forwarded", url)
}
