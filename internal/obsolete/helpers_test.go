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
func numbered(prefix string, n int) string { return gittest.Numbered(prefix+"%d", n) }

// pinned starts an upstream whose first commit, "initial", tagged v1.0.0,
// holds file with numbered(prefix, n); it returns the repository and that
// text.
func pinned(t *testing.T, file, prefix string, n int) (*gittest.Repo, string) {
	t.Helper()
	r := gittest.New(t)
	base := numbered(prefix, n)
	r.Write(file, base)
	r.Release("initial", "v1.0.0")
	return r, base
}

// releasePick starts branch release-1.0 at v1.0.0 with a commit of its own
// ("release only", adding other.txt) and cherry-picks land onto it with -x:
// the change under another commit id. It returns the pick's commit id and
// leaves the branch checked out.
func releasePick(r *gittest.Repo, land string) string {
	r.Git("checkout", "-q", "-b", "release-1.0", "v1.0.0")
	r.Write("other.txt", "other\n")
	r.Commit("release only")
	r.Git("cherry-pick", "-x", land)
	return r.Head()
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

// openPinned opens a cache of fx's upstream and resolves the pin, v1.0.0.
func (fx *statusFixture) openPinned(t *testing.T) (*upstream.Cache, string) {
	t.Helper()
	c := openCache(t, fx.up.URL())
	pin, err := c.Resolve("v1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	return c, pin
}

// release makes a new upstream release, v1.2.0 (a commit changing c.txt),
// and fetches it into c.
func (fx *statusFixture) release(t *testing.T, c *upstream.Cache) {
	t.Helper()
	fx.up.Write("c.txt", "moved\n")
	fx.up.Release("c: moved on", "v1.2.0")
	if err := c.Fetch(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// checkAgain checks patches against c's releases v* from pin v1.0.0, as the
// memo tests run Check again and again, and clears each result's Patch,
// which every run parses anew, so that reports compare with DeepEqual.
func checkAgain(t *testing.T, c *upstream.Cache, pin string, patches []string, opts ...Option) *Report {
	t.Helper()
	sp := &spec.Spec{Name: "test", File: "images/test/patchkit.yaml", Upstream: spec.Upstream{Ref: "v1.0.0", Releases: "v*"}}
	in := Input{Cache: c, Spec: sp, PinCommit: pin, Patches: parsePatches(t, patches)}
	rep, err := Check(context.Background(), in, opts...)
	if err != nil {
		t.Fatalf("Check() = %v", err)
	}
	for i := range rep.Patches {
		rep.Patches[i].Patch = nil
	}
	return rep
}
