package verify

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/gomod"
	"github.com/patchkit/patchkit/internal/lazyre"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/tree"
)

// checkApply runs the apply and whitespace checks: the series is applied in
// order to the pin without whitespace checks, as one git apply of the glob
// would (a failed patch is left out, and the later ones go on); each patch
// is also applied with git's default whitespace checks over the same state,
// for the whitespace check. It returns the patched tree.
func (v *verifier) checkApply() (*apply.Applier, error) {
	src, err := v.im.Cache.Source(v.im.Commit)
	if err != nil {
		return nil, err
	}
	sp := v.im.Spec
	opts := pipeline.ApplyOptions(sp)
	state := apply.New(src, append(opts, apply.WithoutWhitespaceCheck())...)
	at := v.im.Ref
	for _, e := range v.entries {
		if e.patch == nil {
			continue
		}
		// The whitespace check applies with git's checks (--whitespace=error):
		// the tool's rule only decides whether they fail or warn.
		ws := apply.New(state, append(opts, apply.WithWhitespace(spec.WhitespaceError))...).Apply(e.patch)
		r := state.Apply(e.patch)
		if r.Err != nil {
			return nil, r.Err
		}
		var wsProblems []apply.Problem
		for _, pr := range ws.Errors {
			if pr.Kind == apply.KindWhitespace {
				wsProblems = append(wsProblems, pr)
			}
		}
		if r.Status == apply.StatusApplied {
			e.set(Check{Check: CheckApply, Status: StatusPass, Message: "applies to " + at + offsets(r.Hunks)})
		} else {
			e.set(Check{Check: CheckApply, Status: StatusFail, Message: problems(fmt.Sprintf("does not apply to %s", at), r.Errors), Line: firstProblemLine(r.Errors)})
		}
		switch {
		case len(wsProblems) > 0 && sp.Apply.Whitespace == spec.WhitespaceNowarn:
			e.set(Check{Check: CheckWhitespace, Status: StatusSkip,
				Message: fmt.Sprintf("%d whitespace %s, not checked: %s checks no whitespace (apply.tool, apply.args)", len(wsProblems), plural(len(wsProblems), "error", "errors"), toolCommand(sp)),
				Line:    firstProblemLine(wsProblems)})
		case len(wsProblems) > 0 && sp.Apply.Whitespace == spec.WhitespaceWarn:
			e.set(Check{Check: CheckWhitespace, Status: StatusWarn,
				Message: problems(fmt.Sprintf("%d whitespace %s (%s warns and applies)", len(wsProblems), plural(len(wsProblems), "error", "errors"), toolCommand(sp)), wsProblems),
				Line:    firstProblemLine(wsProblems)})
		case len(wsProblems) > 0:
			e.set(Check{Check: CheckWhitespace, Status: StatusFail,
				Message: problems(fmt.Sprintf("%d whitespace %s", len(wsProblems), plural(len(wsProblems), "error", "errors")), wsProblems),
				Line:    firstProblemLine(wsProblems)})
		case r.Status != apply.StatusApplied:
			e.set(Check{Check: CheckWhitespace, Status: StatusSkip, Message: "the patch does not apply"})
		default:
			e.set(Check{Check: CheckWhitespace, Status: StatusPass, Message: "no whitespace errors"})
		}
	}
	return state, nil
}

// problems renders a summary line and one line per problem.
func problems(summary string, ps []apply.Problem) string {
	var b strings.Builder
	b.WriteString(summary)
	for _, p := range ps {
		loc := p.File
		if p.Line > 0 {
			loc = fmt.Sprintf("%s:%d", p.File, p.Line)
		}
		msg := p.Message
		if p.Path != "" && !strings.Contains(msg, p.Path) {
			msg = p.Path + ": " + msg
		}
		fmt.Fprintf(&b, "\n%s: %s", loc, msg)
		if p.Hunk != "" {
			fmt.Fprintf(&b, " (%s)", p.Hunk)
		}
	}
	return b.String()
}

func firstProblemLine(ps []apply.Problem) int {
	for _, p := range ps {
		if p.Line > 0 {
			return p.Line
		}
	}
	return 0
}

func offsets(hs []apply.HunkResult) string {
	var moved []string
	for _, h := range hs {
		if h.Offset != 0 {
			r := h.Hunk
			if i := strings.Index(r[min(2, len(r)):], "@@"); i >= 0 {
				r = r[:i+4]
			}
			moved = append(moved, fmt.Sprintf("%s %s offset %+d", h.Path, r, h.Offset))
		}
	}
	if len(moved) == 0 {
		return ""
	}
	return " (" + strings.Join(moved, "; ") + ")"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// finding is one thing the header check found.
type finding struct {
	status string
	msg    string
	line   int
}

// knownFields are the header fields patchkit reads or knows to be harmless
// (mail headers and trailers of git format-patch).
var knownFields = map[string]bool{
	"subject": true, "description": true, "origin": true, "bug": true, "forwarded": true,
	"author": true, "from": true, "last-update": true, "applied-upstream": true, "test": true,
	"backport-of": true, "upstream-status": true, "date": true, "signed-off-by": true,
	"reviewed-by": true, "acked-by": true, "tested-by": true, "reported-by": true,
	"suggested-by": true, "co-authored-by": true, "co-developed-by": true, "cc": true,
	"change-id": true, "message-id": true, "in-reply-to": true, "references": true,
	"content-type": true, "content-transfer-encoding": true, "mime-version": true,
	"advisory": true,
}

var (
	// commitishKeyRe is a field name that reads like a reference to a commit.
	commitishKeyRe = lazyre.New(`(?i)commit|cherry|backport|upstream|origin|sha|hash|revision|^rev$|applied|landed|merged|patch-?id`)
	// commitishValueRe finds a commit URL or a bare commit id in a value.
	commitishValueRe = lazyre.New(`(?i)/commits?/[0-9a-f]{7,40}\b|(?:^|[\s:(\[])[0-9a-f]{12,40}(?:$|[\s.,;)\]])`)
)

// checkHeaders runs the header check on every usable patch, under the
// repository's header policy for the unit (.patchkit.yaml headers:):
// required counts every finding as it is, warn makes none fail and reads
// the advisory ids a bump's subject or description gives, off skips the
// check.
func (v *verifier) checkHeaders(repo *spec.Repo) {
	policy, key := repo.HeaderPolicy(v.im.Spec.Dir)
	where := "the header policy"
	if key != "" {
		where = fmt.Sprintf("%s (%s:%d)", key, spec.RepoFileName, repo.Line(key))
	}
	for _, e := range v.entries {
		if e.patch == nil {
			continue
		}
		if policy == spec.HeadersOff {
			e.set(Check{Check: CheckHeader, Status: StatusSkip, Message: "not checked: " + where + " is off"})
			continue
		}
		fs := headerFindings(e.patch, policy)
		if policy == spec.HeadersWarn {
			for i := range fs {
				if fs[i].status == StatusFail {
					fs[i].status = StatusWarn
				}
			}
		}
		c := Check{Check: CheckHeader, Status: StatusPass}
		h := e.patch.Header
		pr, fromReadme := v.readme[e.name]
		if fromReadme {
			// The README is the record: no header is missing.
			kept := fs[:0]
			for _, f := range fs {
				if !strings.HasPrefix(f.msg, "no Origin") && !strings.HasPrefix(f.msg, "no Subject") {
					kept = append(kept, f)
				}
			}
			fs = kept
		}
		switch {
		case len(fs) == 0 && fromReadme && h.Origin.Commit != "":
			c.Message = fmt.Sprintf("%s %s, read from %s", h.Origin.Kind, h.Origin.Commit, pr.Where)
		case len(fs) == 0 && fromReadme:
			c.Message = fmt.Sprintf("provenance in %s: %s", pr.Where, pr.Text)
		case len(fs) == 0 && e.patch.Reference != nil:
			c.Message = fmt.Sprintf("%s; a reference to %s, patch-id %s", h.Origin, short(e.patch.Reference.Commit), short(e.patch.Reference.PatchID))
		case len(fs) == 0:
			c.Message = h.Origin.String()
			if ids := gomod.MissingAdvisories(h); policy == spec.HeadersWarn && len(ids) > 0 && gomod.SplitPatch(e.patch) != nil {
				c.Message += fmt.Sprintf("; advisories %s read from the subject or description (%s is warn)", strings.Join(ids, ", "), where)
			}
		default:
			var msgs []string
			for _, f := range fs {
				if f.status == StatusFail || c.Status != StatusFail && f.status == StatusWarn {
					c.Status = f.status
				}
				if c.Line == 0 {
					c.Line = f.line
				}
				msgs = append(msgs, f.msg)
			}
			// The worst first.
			first := 0
			for i, f := range fs {
				if f.status == c.Status {
					first = i
					break
				}
			}
			msgs[0], msgs[first] = msgs[first], msgs[0]
			c.Line = fs[first].line
			c.Message = strings.Join(msgs, "\n")
		}
		e.set(c)
	}
}

// headerFindings checks that the Origin agrees with the rest of the header,
// and that no field that reads like a commit reference goes unread.
func headerFindings(p *series.Patch, policy string) []finding {
	h := p.Header
	var out []finding
	o := h.Origin
	hasOriginField := false
	for _, f := range h.Fields {
		if strings.EqualFold(f.Key, "origin") {
			hasOriginField = true
		}
	}
	switch {
	case o.PR != 0 && o.Commit == "":
		// A pull request: the backport check resolves it (--online) or
		// says why it cannot.
	case (o.Kind == series.KindUpstream || o.Kind == series.KindBackport) && o.Commit == "":
		what := "Origin: " + o.Kind
		if o.Source != "" && o.Source != series.SourceOrigin {
			what = o.Source
		}
		msg := fmt.Sprintf("%s names no upstream commit: give the commit URL or its id (Origin: %s, https://.../commit/<id>)", what, o.Kind)
		if o.URL != "" {
			msg = fmt.Sprintf("%s names %s, which is not a commit URL: give the commit URL or its id", what, o.URL)
		}
		out = append(out, finding{StatusFail, msg, o.Line})
	case o.Kind == series.KindVendor && h.Forwarded == "":
		out = append(out, finding{StatusWarn, "Origin: vendor without Forwarded: say whether upstream was told (Forwarded: no, not-needed, or the URL where it was sent)", o.Line})
	case o.Kind == "" && o.Commit == "" && !hasOriginField:
		out = append(out, finding{StatusWarn, "no Origin: say where the patch comes from (Origin: upstream or backport, with the commit URL; or Origin: vendor, with Forwarded)", 1})
	}
	if f := h.Forwarded; f != "" {
		switch strings.ToLower(f) {
		case "no", "not-needed", "yes":
		default:
			if u, err := url.Parse(f); err != nil || u.Scheme == "" || u.Host == "" {
				out = append(out, finding{StatusWarn, fmt.Sprintf("Forwarded: %q: want no, not-needed or a URL", f), fieldLine(h, "forwarded")})
			}
		}
	}
	if h.Subject == "" {
		out = append(out, finding{StatusWarn, "no Subject (or Description): say in one line what the patch does", 1})
	}
	if policy != spec.HeadersWarn {
		// Under warn, the ids the subject or description gives are the
		// advisories (bot-written bumps name them there).
		out = append(out, advisoryFindings(p)...)
	}
	for _, f := range h.Fields {
		key := strings.ToLower(f.Key)
		if knownFields[key] || strings.HasPrefix(key, "bug-") {
			continue
		}
		if p.Reference != nil && (strings.EqualFold(key, series.ReferenceKey) || strings.EqualFold(key, series.PatchIDKey)) {
			continue
		}
		if !commitishKeyRe.MatchString(key) && !commitishValueRe.MatchString(f.Value) {
			continue
		}
		status, advice := StatusWarn, "the Origin field names the commit patchkit compares with"
		if o.Commit == "" {
			status, advice = StatusFail, "if it names the upstream commit, write Origin: upstream, <commit URL or id> (or Backport-of: <id>)"
		}
		if strings.EqualFold(key, series.PatchIDKey) {
			advice = "patchkit checks Patch-Id only in a reference file, beside a Reference field"
		}
		out = append(out, finding{status, fmt.Sprintf("%s: (line %d) looks like a commit reference, but patchkit does not read it; %s", f.Key, f.Line, advice), f.Line})
	}
	return out
}

// fieldLine is the line of the first field named key (any case), or 0.
func fieldLine(h series.Header, key string) int {
	for _, f := range h.Fields {
		if strings.EqualFold(f.Key, key) {
			return f.Line
		}
	}
	return 0
}

// testLine is the line of the Test field that names name, or of the first.
func testLine(h series.Header, name string) int {
	first := 0
	for _, f := range h.Fields {
		if !strings.EqualFold(f.Key, "test") {
			continue
		}
		if first == 0 {
			first = f.Line
		}
		for _, n := range strings.FieldsFunc(f.Value, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
			if n == name {
				return f.Line
			}
		}
	}
	return first
}

// checkTests runs the test check: Test: names are unique across the series,
// and the spec's test gate can run on the patched tree state.
func (v *verifier) checkTests(state *apply.Applier) error {
	owner := map[string]*entry{}
	for _, e := range v.entries {
		if e.patch == nil {
			continue
		}
		h := e.patch.Header
		if len(h.Tests) == 0 {
			e.set(Check{Check: CheckTest, Status: StatusSkip, Message: "no Test field"})
			continue
		}
		var dups []string
		line := 0
		seen := map[string]bool{}
		for _, n := range h.Tests {
			if seen[n] {
				dups = append(dups, fmt.Sprintf("%s is named twice in this patch", n))
				line = max(line, testLine(h, n))
				continue
			}
			seen[n] = true
			if prev, ok := owner[n]; ok {
				dups = append(dups, fmt.Sprintf("%s is also owned by %s (line %d)", n, prev.path, testLine(prev.patch.Header, n)))
				if line == 0 {
					line = testLine(h, n)
				}
				continue
			}
			owner[n] = e
		}
		if len(dups) > 0 {
			e.set(Check{Check: CheckTest, Status: StatusFail, Message: "Test names must be unique across the series: " + strings.Join(dups, "; "), Line: line})
			continue
		}
		e.set(Check{Check: CheckTest, Status: StatusPass, Message: "owns " + strings.Join(h.Tests, ", "), Line: testLine(h, h.Tests[0])})
	}
	return v.checkGate(state)
}

// checkGate checks the spec's test: section against the repository and the
// patched tree: every injected file exists, its target directory exists in
// the patched tree, and so does the test package.
func (v *verifier) checkGate(state tree.Source) error {
	s := v.im.Spec
	add := func(status, key, msg string) {
		v.spec = append(v.spec, Check{Patch: s.File, Check: CheckTest, Status: status, Message: msg, Line: s.Line(key)})
	}
	if s.Test == nil {
		add(StatusSkip, "", "the spec has no test section")
		return nil
	}
	injected := map[string]bool{}
	for i, in := range s.Test.Inject {
		key := fmt.Sprintf("test.inject[%d]", i)
		full := filepath.Join(v.root, filepath.FromSlash(in.From))
		fi, err := os.Stat(full)
		switch {
		case err != nil:
			add(StatusFail, key+".from", fmt.Sprintf("%s.from: %s does not exist", key, in.From))
			continue
		case !fi.Mode().IsRegular():
			add(StatusFail, key+".from", fmt.Sprintf("%s.from: %s is not a regular file", key, in.From))
			continue
		}
		dir := path.Dir(in.To)
		if dir != "." {
			ok, err := state.IsDir(dir)
			if err != nil {
				return err
			}
			if !ok {
				add(StatusFail, key+".to", fmt.Sprintf("%s.to: %s: the directory %s is not in the patched tree", key, in.To, dir))
				continue
			}
		}
		injected[in.To] = true
		add(StatusPass, key, fmt.Sprintf("%s goes to %s", in.From, in.To))
	}
	pkg := strings.TrimSuffix(strings.TrimPrefix(s.Test.Package, "./"), "/...")
	if pkg != "" && pkg != "." && pkg != "..." {
		ok, err := state.IsDir(pkg)
		if err != nil {
			return err
		}
		for to := range injected {
			if strings.HasPrefix(to, pkg+"/") {
				ok = true
			}
		}
		if !ok {
			add(StatusFail, "test.package", fmt.Sprintf("test.package: %s is not a directory of the patched tree", s.Test.Package))
		}
	}
	return nil
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// toolCommand names the tool the unit's series applies with, as the recipe
// runs it: git am, git apply --whitespace=nowarn, patch.
func toolCommand(s *spec.Spec) string {
	name := strings.Replace(s.Apply.Tool, "git-", "git ", 1)
	if len(s.Apply.Args) == 0 {
		return name
	}
	return name + " " + strings.Join(s.Apply.Args, " ")
}
