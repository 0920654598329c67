package verify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/tree"
)

// The checks, in the order they are reported for each patch.
const (
	CheckApply           = "apply"
	CheckWhitespace      = "whitespace"
	CheckHeader          = "header"
	CheckBackport        = "backport"
	CheckAppliedUpstream = "applied-upstream"
	CheckTest            = "test"
)

// Checks lists the check names in report order (the stamp check, CheckStamp,
// is the image's, after them).
var Checks = []string{CheckApply, CheckWhitespace, CheckHeader, CheckBackport, CheckAppliedUpstream, CheckTest, CheckUnit, CheckPin, CheckDockerfile, CheckCanonical, CheckGoMod, CheckVersions}

// The statuses of a check.
const (
	StatusPass = "pass"
	StatusFail = "fail"
	StatusWarn = "warn"
	StatusSkip = "skip"
)

// Check is one verdict on one patch (or, for the image's test gate, on its
// spec file).
type Check struct {
	// Patch is the patch file (patches/<image>/0001-x.diff); for the checks
	// of the spec's test: section, the spec file (images/<image>/patchkit.yaml).
	Patch string `json:"patch"`
	// Check is one of the Check* names.
	Check string `json:"check"`
	// Status is pass, fail, warn or skip.
	Status string `json:"status"`
	// Message says why, on its first line; more lines follow for details
	// (the problems of a patch that does not apply, a backport's interdiff).
	// A graded backport check's message starts with identical, equivalent
	// or differs.
	Message string `json:"message"`
	// Line is the 1-based line of Patch the check is about (the hunk that
	// failed, the header field), 0 when none.
	Line int `json:"line,omitempty"`
	// Cause and Files are a chart unit's vendored check (internal/chart):
	// why it fails, and the vendored files that differ.
	Cause string   `json:"cause,omitempty"`
	Files []string `json:"files,omitempty"`
}

// Result is the verdict on one image.
type Result struct {
	Image string `json:"image"`
	// Unit is the image unit's directory relative to the root.
	Unit string `json:"unit,omitempty"`
	// Pin is the resolved upstream.ref.
	Pin string `json:"pin,omitempty"`
	// OK is true when no check failed.
	OK     bool    `json:"ok"`
	Checks []Check `json:"checks"`
	// Error says why the unit could not be verified when others were (its
	// upstream could not be fetched, its spec does not load); Checks then
	// holds one failed apply check saying so, and ExitCode is the exit code
	// the error alone would give.
	Error    string `json:"error,omitempty"`
	ExitCode int    `json:"exitCode,omitempty"`
}

// Failed reports whether any check failed.
func (r *Result) Failed() bool {
	for _, c := range r.Checks {
		if c.Status == StatusFail {
			return true
		}
	}
	return false
}

type options struct {
	github     CommitDiffer
	githubHost string
	scanner    ReleaseScanner
}

// Option configures Image.
type Option func(*options)

// WithOnline takes the upstream diff of the commits that patches name from
// GitHub through d (ghapi.Client's CommitDiff) instead of the upstream cache,
// for upstreams on GitHub: the repository is the spec's upstream.url, else
// the patch's Origin URL. The cache still gives the trees for the
// equivalence test, and the diff when GitHub cannot be reached.
func WithOnline(d CommitDiffer) Option { return func(o *options) { o.github = d } }

// WithGitHubHost accepts host (GitHub Enterprise Server's, from
// GITHUB_SERVER_URL) besides github.com in the URLs WithOnline reads.
func WithGitHubHost(host string) Option { return func(o *options) { o.githubHost = host } }

// WithScanner replaces the engine that decides the applied-upstream check
// (default: the obsolete-check engine, ObsoleteScanner).
func WithScanner(s ReleaseScanner) Option { return func(o *options) { o.scanner = s } }

// Image verifies the image unit name. A spec that does not load, a patch
// directory that is missing, and an upstream that cannot be reached are
// errors (exit 2); every problem with a patch, even one that does not parse,
// is a check in the Result.
func Image(ctx context.Context, env pipeline.Env, name string, opts ...Option) (*Result, error) {
	o := options{scanner: ObsoleteScanner{}}
	for _, opt := range opts {
		opt(&o)
	}
	s, err := spec.Load(env.Root, name)
	if err != nil {
		return nil, err
	}
	entries, err := loadSeries(env.Root, s)
	if err != nil {
		return nil, err
	}
	im, err := pipeline.Open(ctx, env, s, "")
	if err != nil {
		return nil, err
	}
	defer im.Close()
	env.At(fmt.Sprintf("checking %d patch(es)", len(entries)))
	v := &verifier{opts: o, root: env.Root, im: im, entries: entries}
	if err := v.materialize(ctx); err != nil {
		return nil, err
	}
	if err := v.run(ctx); err != nil {
		return nil, err
	}
	checks := append(v.flatten(), DockerfileChecks(env.Root, s)...)
	checks = append(checks, PinFileChecks(env.Root, s, checks)...)
	checks = append(checks, VersionChecks(env.Root, s, v.patched)...)
	checks = append(checks, StampChecks(env.Root, s, v.idents())...)
	res := &Result{Image: name, Unit: s.Dir, Pin: s.Upstream.Ref, Checks: checks}
	res.OK = !res.Failed()
	return res, nil
}

// idents names the series for the stamp check, nil when a patch of it
// cannot be used.
func (v *verifier) idents() []series.Ident {
	for _, e := range v.entries {
		if e.patch == nil {
			return nil
		}
	}
	return series.Idents(v.im.Patches)
}

// entry is one patch file of the series, parsed or not.
type entry struct {
	name, path string
	patch      *series.Patch // nil when bad
	// bad is why the file could not be used: it did not parse, or a
	// reference could not be materialized; badCheck is the check that
	// reports it.
	bad      error
	badCheck string
	// index is the patch's index in the Image's Patches, -1 when bad.
	index  int
	checks map[string]Check
}

func (e *entry) set(c Check) {
	c.Patch = e.path
	if e.checks == nil {
		e.checks = map[string]Check{}
	}
	e.checks[c.Check] = c
}

type verifier struct {
	opts    options
	root    string
	im      *pipeline.Image
	entries []*entry
	// spec are the checks of the spec's test: section.
	spec []Check
	// readme is the provenance the patch directory's README gives the
	// patches whose headers say none, by file name.
	readme map[string]series.Provenance
	// patched is the pin with the series applied, once run has applied it.
	patched tree.Source
}

// run runs the checks in order; apply first, since test needs the patched tree.
func (v *verifier) run(ctx context.Context) error {
	for _, e := range v.entries {
		if e.bad != nil {
			v.reportBad(e)
		}
	}
	v.readme = v.readmeProvenance()
	state, err := v.checkApply()
	if err != nil {
		return err
	}
	repo, err := spec.LoadRepo(v.root)
	if err != nil {
		return err
	}
	v.patched = state
	v.checkHeaders(repo)
	if err := v.checkCanonical(); err != nil {
		return err
	}
	if err := v.checkBackports(ctx); err != nil {
		return err
	}
	if err := v.checkAppliedUpstream(ctx); err != nil {
		return err
	}
	if err := v.checkGoMod(ctx, state); err != nil {
		return err
	}
	return v.checkTests(state)
}

// reportBad gives a patch file that cannot be used its failing check, and
// skips the checks that need it.
func (v *verifier) reportBad(e *entry) {
	line := 0
	var ie *diag.InputError
	if errors.As(e.bad, &ie) && ie.File == e.path {
		line = ie.Line
	}
	msg := e.bad.Error()
	if ie != nil && ie.File == e.path {
		// The check names the file; keep the message without it.
		msg = strings.TrimPrefix(strings.TrimPrefix(msg, fmt.Sprintf("%s:%d: ", e.path, line)), e.path+": ")
	}
	notApplied := "not applied: " + firstLine(msg)
	if e.badCheck == CheckBackport {
		// A reference that cannot be materialized.
		msg = "differs: " + msg
		notApplied = "not applied: the reference cannot be materialized (see the backport check)"
	}
	e.set(Check{Check: e.badCheck, Status: StatusFail, Message: msg, Line: line})
	for _, c := range Checks {
		if _, done := e.checks[c]; done || c == CheckGoMod {
			continue
		}
		switch {
		case c == CheckApply:
			e.set(Check{Check: c, Status: StatusFail, Message: notApplied})
		default:
			e.set(Check{Check: c, Status: StatusSkip, Message: "the patch cannot be used (see the " + e.badCheck + " check)"})
		}
	}
}

// flatten lists the checks patch by patch in series order, then the spec's.
func (v *verifier) flatten() []Check {
	out := []Check{}
	for _, e := range v.entries {
		for _, c := range Checks {
			if ch, ok := e.checks[c]; ok {
				out = append(out, ch)
			}
		}
	}
	return append(out, v.spec...)
}

// materialize fills in reference files; one that cannot be materialized
// becomes a bad entry for the backport check. It then sets the Image's
// Patches to the usable patches, in order.
func (v *verifier) materialize(ctx context.Context) error {
	var patches []*series.Patch
	for _, e := range v.entries {
		e.index = -1
		if e.patch == nil {
			continue
		}
		p, err := v.im.Materialize(ctx, e.patch)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			e.bad, e.badCheck, e.patch = err, CheckBackport, nil
			continue
		}
		e.patch = p
		e.index = len(patches)
		patches = append(patches, p)
	}
	v.im.Patches = patches
	return nil
}

// loadSeries reads the series as series.Load does, but keeps going past a
// file that does not parse, so that verify reports every one.
func loadSeries(root string, s *spec.Spec) ([]*entry, error) {
	dir := filepath.Join(root, filepath.FromSlash(s.Patches))
	display := strings.TrimSuffix(s.Patches, "/")
	opts := pipeline.SeriesOptions(s)
	patches, err := series.Load(dir, display, opts...)
	if err == nil {
		out := make([]*entry, len(patches))
		for i, p := range patches {
			out[i] = &entry{name: p.Name, path: p.Path, patch: p}
		}
		return out, nil
	}
	var ie *diag.InputError
	if !errors.As(err, &ie) || ie.File == display {
		return nil, err // the directory itself is at fault
	}
	files, ferr := series.Files(dir, display, opts...)
	if ferr != nil {
		return nil, ferr // the series file is at fault
	}
	var out []*entry
	for _, sf := range files {
		n := sf.Name
		e := &entry{name: n, path: sf.Path}
		full := filepath.Join(dir, filepath.FromSlash(n))
		fi, err := os.Stat(full)
		switch {
		case err != nil:
			e.bad = &diag.InputError{File: e.path, Msg: "reading the patch", Err: err}
		case fi.IsDir():
			continue // a link to a directory, which the glob's git apply skips too
		case !fi.Mode().IsRegular():
			e.bad = diag.Inputf(e.path, 0, "not a regular file (%s)", fi.Mode().Type())
		case fi.Size() > series.MaxPatchSize:
			e.bad = diag.Inputf(e.path, 0, "patch is %d bytes, more than the %d-byte limit", fi.Size(), series.MaxPatchSize)
		}
		if e.bad == nil {
			raw, err := os.ReadFile(full)
			if err != nil {
				e.bad = &diag.InputError{File: e.path, Msg: "reading the patch", Err: err}
			} else if ps, err := series.ParseFile(e.path, raw, sf.Options...); err != nil {
				e.bad = err
				e.badCheck = badCheckFor(raw, err)
			} else {
				// A mailbox of several mails (git am) is an entry per mail.
				for _, p := range ps {
					out = append(out, &entry{name: p.Name, path: p.Path, patch: p})
				}
				continue
			}
		}
		if e.bad != nil && e.badCheck == "" {
			e.badCheck = CheckApply
		}
		out = append(out, e)
	}
	return out, nil
}

// badCheckFor says which check reports a parse error: header when its line
// is in the header (before the first file diff), apply otherwise.
func badCheckFor(raw []byte, err error) string {
	var ie *diag.InputError
	if !errors.As(err, &ie) || ie.Line == 0 {
		return CheckApply
	}
	lines := strings.Split(string(raw), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "diff --git ") ||
			strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ") {
			if ie.Line <= i {
				return CheckHeader
			}
			return CheckApply
		}
	}
	return CheckHeader
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
