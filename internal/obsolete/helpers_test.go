package obsolete

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/upstream"
)

// numbered returns n lines "<prefix>1" ... "<prefix>n", each with a newline.
func numbered(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s%d\n", prefix, i)
	}
	return b.String()
}

// replaceLine replaces the line equal to old (without newline) in s.
func replaceLine(tb testing.TB, s, old, new string) string {
	tb.Helper()
	if !strings.Contains(s, old+"\n") {
		tb.Fatalf("replaceLine: %q not in %q", old, s)
	}
	return strings.Replace(s, old+"\n", new+"\n", 1)
}

// makePatch commits files on a detached HEAD at base and returns the commit's
// diff as a patch file with header; the work tree goes back to branch.
func makePatch(r *gittest.Repo, base, branch, header string, files map[string]string) string {
	r.TB.Helper()
	r.Git("checkout", "-q", "--detach", base)
	for p, c := range files {
		r.Write(p, c)
	}
	c := r.Commit("downstream: " + header)
	diff := r.Show(c)
	r.Git("checkout", "-q", "-f", branch)
	return "Subject: " + header + "\n\n" + diff
}

// scan describes one Check run.
type scan struct {
	pin      string
	releases string
	branches []string
	refs     []string
	patches  []string // patch texts, named 0001.diff, 0002.diff, ...
}

// openCache opens a cache of r in a temp dir, with the given branches.
func openCache(tb testing.TB, url string, branches ...string) *upstream.Cache {
	tb.Helper()
	c, err := upstream.Open(context.Background(), tb.TempDir(), url, upstream.WithBranches(branches...))
	if err != nil {
		tb.Fatalf("upstream.Open() = %v", err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// parsePatches parses patch texts as patches/test/000N.diff.
func parsePatches(tb testing.TB, texts []string) []*series.Patch {
	tb.Helper()
	var out []*series.Patch
	for i, txt := range texts {
		p, err := series.Parse(fmt.Sprintf("patches/test/%04d.diff", i+1), []byte(txt))
		if err != nil {
			tb.Fatalf("series.Parse(patch %d) = %v\n%s", i+1, err, txt)
		}
		out = append(out, p)
	}
	return out
}

// run runs Check on url with s and fails the test on error.
func (s scan) run(tb testing.TB, url string) *Report {
	tb.Helper()
	rep, err := s.check(tb, openCache(tb, url, s.branches...))
	if err != nil {
		tb.Fatalf("Check() = %v", err)
	}
	return rep
}

func (s scan) check(tb testing.TB, c *upstream.Cache) (*Report, error) {
	tb.Helper()
	ctx := context.Background()
	if err := c.Ensure(ctx, s.pin); err != nil {
		tb.Fatalf("Ensure(%s) = %v", s.pin, err)
	}
	pin, err := c.Resolve(s.pin)
	if err != nil {
		tb.Fatalf("Resolve(%s) = %v", s.pin, err)
	}
	sp := &spec.Spec{Name: "test", File: "images/test/patchkit.yaml",
		Upstream: spec.Upstream{Ref: s.pin, Releases: s.releases, Branches: s.branches}}
	return Check(ctx, Input{Cache: c, Spec: sp, PinCommit: pin, Patches: parsePatches(tb, s.patches), Refs: s.refs})
}

// statuses returns "ref=status" per ref for patch i.
func statuses(rep *Report, i int) string {
	var out []string
	for _, r := range rep.Patches[i].Results {
		out = append(out, r.Ref+"="+r.Status)
	}
	return strings.Join(out, " ")
}

func refNames(rep *Report) string {
	var out []string
	for _, r := range rep.Refs {
		n := r.Name
		if r.NonSemver {
			n += "*"
		}
		out = append(out, n)
	}
	return strings.Join(out, " ")
}

// result returns the result of patch i at ref.
func result(tb testing.TB, rep *Report, i int, ref string) Result {
	tb.Helper()
	for _, r := range rep.Patches[i].Results {
		if r.Ref == ref {
			return r
		}
	}
	tb.Fatalf("patch %d has no result at %s", i, ref)
	return Result{}
}
