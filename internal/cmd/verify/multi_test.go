package verify_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// multiUpstream is a generated upstream for backports of several commits:
//
//	v1.0.0  the pin: a.txt (a1..a30), b.txt, other.txt
//	A       a.txt: a5 changed
//	X       other.txt: unrelated
//	B       a.txt: a25 changed; b.txt: one more line
//
// picked is the diff of A and B cherry-picked onto the pin, in that order.
type multiUpstream struct {
	up       *upstream
	a, x, b  string
	picked   string
	resplit  string
	aAtPin   string
	combined string
}

func newMultiUpstream(t *testing.T) *multiUpstream {
	t.Helper()
	r := gittest.New(t)
	m := &multiUpstream{up: &upstream{repo: r}}
	a := gittest.Numbered("a%d", 30)
	r.Write("a.txt", a)
	r.Write("b.txt", "b\n")
	r.Write("other.txt", "other\n")
	m.up.pin = r.Commit("initial")
	r.Tag("v1.0.0")
	a = strings.Replace(a, "a5\n", "a5 fixed\n", 1)
	r.Write("a.txt", a)
	m.a = r.Commit("A: fix a5")
	r.Write("other.txt", "other\nunrelated\n")
	m.x = r.Commit("X: unrelated")
	r.Write("a.txt", strings.Replace(a, "a25\n", "a25 fixed\n", 1))
	r.Write("b.txt", "b\nb2\n")
	m.b = r.Commit("B: fix a25 and b")
	r.Tag("v1.1.0")

	r.Git("checkout", "-q", "-b", "picks", "v1.0.0")
	r.Git("cherry-pick", m.a)
	m.aAtPin = r.Show("HEAD")
	r.Git("cherry-pick", m.b)
	m.picked = r.Git("diff", "v1.0.0", "HEAD") + "\n"
	m.resplit = r.Git("diff", "-U1", "v1.0.0", "HEAD") + "\n"
	r.Git("checkout", "-q", "-f", "main")
	return m
}

func origins(kind string, ids ...string) string {
	h := "Subject: backport of several commits\n"
	for _, id := range ids {
		h += "Origin: " + kind + ", " + repoURL + "/commit/" + id + "\n"
	}
	return h + "\n"
}

// TestVerifyMultiCommitBackport grades a backport of two upstream commits
// (with an unrelated one between them) against their combined diff.
func TestVerifyMultiCommitBackport(t *testing.T) {
	m := newMultiUpstream(t)
	cache := t.TempDir()
	differs := strings.Replace(m.picked, "+a25 fixed\n", "+a25 fixed differently\n", 1)
	cases := []struct {
		name, patch, status string
		code                int
		contains            []string
	}{
		{name: "identical", patch: origins("upstream", m.a, m.b) + m.picked, status: "pass",
			contains: []string{"identical to upstream " + m.a[:12] + "+" + m.b[:12] + " combined (2 commits, in order)"}},
		{name: "equivalent", patch: origins("upstream", m.a, m.b) + m.resplit, status: "pass",
			contains: []string{"equivalent to upstream " + m.a[:12] + "+" + m.b[:12] + " combined"}},
		{name: "differs, upstream", patch: origins("upstream", m.a, m.b) + differs, status: "fail", code: 1,
			contains: []string{"differs from upstream " + m.a[:12] + "+" + m.b[:12] + " combined", "+a25 fixed differently", "+a25 fixed"}},
		{name: "differs, backport warns", patch: origins("backport", m.a, m.b) + differs, status: "warn",
			contains: []string{"differs from upstream"}},
		{name: "only the first commit differs from both", patch: origins("upstream", m.a, m.b) + m.aAtPin, status: "fail", code: 1,
			contains: []string{"differs from upstream", "+b2"}},
		{name: "a commit upstream lacks", patch: origins("upstream", m.a, missingID) + m.picked, status: "fail", code: 1,
			contains: []string{"differs: upstream", "does not have commit " + missingID + " (2 of 2)"}},
		{name: "the unrelated commit included differs", patch: origins("upstream", m.a, m.x, m.b) + m.picked, status: "fail", code: 1,
			contains: []string{"combined (3 commits, in order)", "other.txt"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRepo(t, m.up, cache, "")
			r.Write("patches/img/0001-multi.diff", c.patch)
			code, stdout, stderr := r.run("verify", "img", "-o", "json")
			if code != c.code {
				t.Fatalf("exit = %d, want %d\n%s%s", code, c.code, stdout, stderr)
			}
			got := decode(t, stdout).check(t, "0001-multi.diff", "backport")
			if got.Status != c.status {
				t.Errorf("backport check = %+v, want status %s", got, c.status)
			}
			first, _, _ := strings.Cut(got.Message, " ")
			if first != "identical" && first != "equivalent" && first != "differs" && first != "differs:" {
				t.Errorf("message %q does not start with identical, equivalent or differs", got.Message)
			}
			for _, s := range c.contains {
				if !strings.Contains(got.Message, s) {
					t.Errorf("message = %q, want it to contain %q", got.Message, s)
				}
			}
		})
	}
}

// prGitHub serves the pulls and commits endpoints of acme/widget.
type prGitHub struct {
	up     *upstream
	merged map[int]string // PR number to merge commit; absent: open
}

func (f *prGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	var n int
	if _, err := fmt.Sscanf(r.URL.Path, "/repos/acme/widget/pulls/%d", &n); err == nil {
		sha, ok := f.merged[n]
		if n >= 100 {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"message":"Not Found"}`)
			return
		}
		fmt.Fprintf(w, `{"number":%d,"state":%q,"merged":%v,"merge_commit_sha":%q}`, n, map[bool]string{true: "closed", false: "open"}[ok], ok, sha)
		return
	}
	sha := strings.TrimPrefix(r.URL.Path, "/repos/acme/widget/commits/")
	out, _, err := f.up.repo.GitIn(nil, "show", "--format=", sha)
	if err != nil || sha == r.URL.Path {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"Not Found"}`)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprint(w, out)
}

// TestVerifyPROrigin: "Backport of <PR URL>" is graded against the PR's merge
// commit with --online, and skipped with a reason offline.
func TestVerifyPROrigin(t *testing.T) {
	m := newMultiUpstream(t)
	srv := httptest.NewServer(&prGitHub{up: m.up, merged: map[int]string{7: m.a}})
	defer srv.Close()
	t.Setenv("GITHUB_API_URL", srv.URL)
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GH_TOKEN", "")
	cache := t.TempDir()
	r := newRepo(t, m.up, cache, "")
	r.Write("patches/img/0001-pr.diff", "Backport of "+repoURL+"/pull/7\n\n"+m.aAtPin)
	r.Write("patches/img/0002-open.diff", "Subject: open PR\n\nUpstream PR: "+repoURL+"/pull/8\n\n"+strings.Replace(m.aAtPin, "a.txt", "c.txt", -1))
	r.Write("patches/img/0003-gone.diff", "Subject: missing PR\nOrigin: backport, "+repoURL+"/pull/404\n\n"+strings.Replace(m.aAtPin, "a.txt", "d.txt", -1))

	code, stdout, stderr := r.run("verify", "img", "-o", "json")
	if code != 1 { // 0002 and 0003 do not apply: c.txt and d.txt do not exist
		t.Fatalf("offline exit = %d\n%s%s", code, stdout, stderr)
	}
	v := decode(t, stdout)
	for _, p := range []string{"0001-pr.diff", "0002-open.diff", "0003-gone.diff"} {
		if c := v.check(t, p, "backport"); c.Status != "skip" || !strings.Contains(c.Message, "verify --online resolves its merge commit") {
			t.Errorf("offline %s backport check = %+v, want a skip saying --online resolves the PR", p, c)
		}
		if c := v.check(t, p, "header"); c.Status == "fail" || strings.Contains(c.Message, "not a commit") {
			t.Errorf("offline %s header check = %+v, want no failure: a PR names the change", p, c)
		}
	}

	code, stdout, stderr = r.run("verify", "img", "--online", "-o", "json")
	if code != 1 {
		t.Fatalf("online exit = %d\n%s%s", code, stdout, stderr)
	}
	v = decode(t, stdout)
	if c := v.check(t, "0001-pr.diff", "backport"); c.Status != "pass" ||
		!strings.HasPrefix(c.Message, "identical to upstream "+m.a[:12]) || !strings.Contains(c.Message, "PR acme/widget#7 merged as "+m.a[:12]) {
		t.Errorf("online PR backport check = %+v, want identical to the merge commit", c)
	}
	if c := v.check(t, "0002-open.diff", "backport"); c.Status != "warn" || !strings.Contains(c.Message, "pull request #8 of acme/widget is open") {
		t.Errorf("online open PR = %+v, want a warning that it is not merged", c)
	}
	if c := v.check(t, "0003-gone.diff", "backport"); c.Status != "fail" || !strings.HasPrefix(c.Message, "differs: upstream has no pull request") {
		t.Errorf("online missing PR = %+v, want a failure", c)
	}
}
