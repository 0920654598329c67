package status_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/html"

	"github.com/patchkit/patchkit/internal/cmd/cmdtest"
	"github.com/patchkit/patchkit/internal/cmd/root"
	"github.com/patchkit/patchkit/internal/gittest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// file is the upstream's content of name: five lines, the third one fixed
// or not.
func file(name string, fixed bool) string {
	third := name + "3"
	if fixed {
		third += " fixed"
	}
	return fmt.Sprintf("%s1\n%s2\n%s\n%s4\n%s5\n", name, name, third, name, name)
}

// patch is a patch fixing the third line of name.txt, with header.
func patch(header, name string) string {
	return header + "\n" + fmt.Sprintf(`diff --git a/%[1]s.txt b/%[1]s.txt
--- a/%[1]s.txt
+++ b/%[1]s.txt
@@ -1,5 +1,5 @@
 %[1]s1
 %[1]s2
-%[1]s3
+%[1]s3 fixed
 %[1]s4
 %[1]s5
`, name)
}

// fixture: an upstream (v1.0.0; v1.1.0 fixes a, the backport; v1.2.0 fixes
// d, PR #10; v1.3.0-rc.1) and a downstream repository whose history adds,
// drops and re-pins patches:
//
//	c1  app pinned at v0.9.0 with 0001 (backport of the a fix) and 0002 (an
//	    original nobody forwarded); other pinned at v1.0.0 with one patch
//	    (Forwarded: not-needed)
//	c2  app adds 0003
//	c3  app re-pinned to v1.0.0
//	c4  app drops 0003 and adds 0004 (PR #10, merged), 0005 (PR #11, closed
//	    unmerged), 0006 (issue #20, open), 0007 (PR #12, open; its title
//	    mentions and loads an image); tests/ignored.diff is no series file
type fixture struct {
	up, down   *gittest.Repo
	cache      string
	fixA, fixD string
	commits    []string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	up := gittest.New(t)
	for _, n := range "abcdefg" {
		up.Write(string(n)+".txt", file(string(n), false))
	}
	up.Release("v1", "v1.0.0")
	up.Write("a.txt", file("a", true))
	f := &fixture{up: up, cache: t.TempDir()}
	f.fixA = up.Commit("fix a")
	up.Tag("v1.1.0")
	up.Write("d.txt", file("d", true))
	f.fixD = up.Commit("fix d (#10)")
	up.Tag("v1.2.0")
	up.Release("next", "v1.3.0-rc.1")

	d := gittest.New(t)
	f.down = d
	spec := func(pin, patches string) string {
		return "upstream:\n  url: " + up.URL() + "\n  ref: " + pin + "\n  releases: \"v1.*\"\npatches: " + patches + "\n"
	}
	d.Write("images/app/patchkit.yaml", spec("v0.9.0", "patches/app"))
	d.Write("patches/app/0001-backport.diff", patch("Subject: fix a\nOrigin: upstream, "+f.fixA+"\n", "a"))
	d.Write("patches/app/0002-orig.diff", patch("Subject: our own b guard\nOrigin: vendor\nForwarded: no\n", "b"))
	d.Write("images/other/patchkit.yaml", spec("v1.0.0", "patches/other"))
	d.Write("patches/other/0001-local.patch", patch("Subject: local g\nOrigin: vendor\nForwarded: not-needed\n", "g"))
	f.commits = append(f.commits, d.Commit("c1: app and other"))
	d.Write("patches/app/0003-dropped.diff", patch("Subject: c\n", "c"))
	f.commits = append(f.commits, d.Commit("c2: app adds 0003"))
	d.Write("images/app/patchkit.yaml", spec("v1.0.0", "patches/app"))
	f.commits = append(f.commits, d.Commit("c3: app re-pinned"))
	d.Remove("patches/app/0003-dropped.diff")
	d.Write("patches/app/0004-merged.diff", patch("Subject: fix d\nOrigin: vendor\nForwarded: https://github.com/up/proj/pull/10\n", "d"))
	d.Write("patches/app/0005-closed.diff", patch("Subject: fix e\nOrigin: vendor\nForwarded: https://github.com/up/proj/pull/11\n", "e"))
	d.Write("patches/app/0006-issue.diff", patch("Subject: fix f\nOrigin: vendor\nForwarded: no\nBug: https://github.com/up/proj/issues/20\n", "f"))
	d.Write("patches/app/0007-open.patch", patch("Subject: fix c\nOrigin: vendor\nForwarded: https://github.com/up/proj/pull/12\n", "c"))
	d.Write("patches/app/tests/ignored.diff", "not a series file\n")
	f.commits = append(f.commits, d.Commit("c4: app drops 0003, forwards the rest"))
	return f
}

// fakeGitHub serves the pull requests and issues of up/proj, and the issues
// of down/stream for the dashboard, recording what was written.
type fakeGitHub struct {
	mu      sync.Mutex
	fixD    string
	issues  []map[string]any // down/stream's issues
	created int
	edited  int
	asked   []string
}

func (g *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.asked = append(g.asked, r.Method+" "+r.URL.Path)
	user := map[string]any{"login": "dev"}
	pr := func(n int, state string, merged bool, title string) map[string]any {
		m := map[string]any{"number": n, "state": state, "merged": merged, "title": title, "user": user,
			"html_url": fmt.Sprintf("https://github.com/up/proj/pull/%d", n)}
		if merged {
			m["merge_commit_sha"] = g.fixD
		}
		return m
	}
	var body any
	switch r.Method + " " + r.URL.Path {
	case "GET /repos/up/proj/pulls/10":
		body = pr(10, "closed", true, "fix d")
	case "GET /repos/up/proj/pulls/11":
		body = pr(11, "closed", false, "fix e")
	case "GET /repos/up/proj/pulls/12":
		body = pr(12, "open", false, "@octocat please look ![x](https://evil.example/p.png) <img src=https://evil.example/q.png>")
	case "GET /repos/up/proj/issues/20":
		body = map[string]any{"number": 20, "state": "open", "title": "f is broken", "user": user, "html_url": "https://github.com/up/proj/issues/20"}
	case "GET /repos/down/stream/issues":
		body = g.issues
	case "POST /repos/down/stream/issues":
		var req map[string]any
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		g.created++
		req["number"] = 100 + len(g.issues)
		req["state"] = "open"
		req["html_url"] = fmt.Sprintf("https://github.com/down/stream/issues/%d", req["number"])
		g.issues = append(g.issues, req)
		w.WriteHeader(http.StatusCreated)
		body = req
	default:
		if r.Method == "PATCH" && strings.HasPrefix(r.URL.Path, "/repos/down/stream/issues/") {
			var req map[string]any
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			for _, is := range g.issues {
				if fmt.Sprintf("/repos/down/stream/issues/%v", is["number"]) == r.URL.Path {
					is["body"] = req["body"]
					g.edited++
					body = is
				}
			}
		}
	}
	if body == nil {
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

func (f *fixture) serve(t *testing.T) *fakeGitHub {
	t.Helper()
	g := &fakeGitHub{fixD: f.fixD}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	t.Setenv("GITHUB_API_URL", srv.URL+"/")
	t.Setenv("GITHUB_TOKEN", "test-token-not-a-secret")
	return g
}

func (f *fixture) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return cmdtest.RunAll(t, root.NewCmdRoot, append([]string{"--root", f.down.Dir, "--cache-dir", f.cache}, args...)...)
}

// statusJSON runs patchkit with args (an -o json status), fails the test
// unless it exits with code and prints JSON, and returns the report, stdout
// and stderr.
func (f *fixture) statusJSON(t *testing.T, code int, args ...string) (statusJSON, string, string) {
	t.Helper()
	got, out, errOut := f.run(t, args...)
	if got != code {
		t.Fatalf("%v = exit %d, want %d\n%s%s", args, got, code, out, errOut)
	}
	var rep statusJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return rep, out, errOut
}

type statusJSON struct {
	Units []struct {
		Name, Dir, Pin, Newest string
		Behind                 int
		Releases               []string
		Patches                []struct {
			File        string
			Added       *string
			AddedCommit string
			Pins        int
			Original    bool
			Verdict     string
			ObsoletedBy *string
			Commit      *string
			Upstream    struct{ Kind, URL, State, Release, Commit, Title, Note string }
			Findings    []string
		}
		History []struct {
			Commit string
			Count  int
		}
		Error string
	}
	History []struct {
		Commit string
		Count  int
	}
}

func TestStatusJSON(t *testing.T) {
	f := newFixture(t)
	f.serve(t)
	got, out, _ := f.statusJSON(t, 0, "status", "-o", "json")
	if len(got.Units) != 2 {
		t.Fatalf("units = %d, want 2\n%s", len(got.Units), out)
	}
	app := got.Units[0]
	if app.Dir != "images/app" || app.Pin != "v1.0.0" || app.Newest != "v1.2.0" || app.Behind != 2 {
		t.Errorf("app = dir %s pin %s newest %s behind %d, want images/app v1.0.0 v1.2.0 2 (the rc is no release)", app.Dir, app.Pin, app.Newest, app.Behind)
	}
	type want struct {
		verdict, obsoletedBy, commit, kind, state, release string
		pins                                               int
		added                                              int // index into f.commits
		findings                                           string
	}
	wants := map[string]want{
		"patches/app/0001-backport.diff": {"present", "v1.1.0", f.fixA, "commit", "released", "v1.1.0", 1, 0, "droppable"},
		"patches/app/0002-orig.diff":     {"applies", "", "", "none", "not-filed", "", 1, 0, "no-upstream"},
		"patches/app/0004-merged.diff":   {"present", "v1.2.0", f.fixD, "pr", "merged", "v1.2.0", 0, 3, "droppable"},
		"patches/app/0005-closed.diff":   {"applies", "", "", "pr", "closed", "", 0, 3, "pr-closed-unmerged"},
		"patches/app/0006-issue.diff":    {"applies", "", "", "issue", "open", "", 0, 3, "no-pr"},
		"patches/app/0007-open.patch":    {"applies", "", "", "pr", "open", "", 0, 3, ""},
	}
	if len(app.Patches) != len(wants) {
		t.Fatalf("app patches = %d, want %d", len(app.Patches), len(wants))
	}
	for _, p := range app.Patches {
		w, ok := wants[p.File]
		if !ok {
			t.Errorf("unexpected patch %s", p.File)
			continue
		}
		ob, cm := "", ""
		if p.ObsoletedBy != nil {
			ob = *p.ObsoletedBy
		}
		if p.Commit != nil {
			cm = *p.Commit
		}
		if p.Verdict != w.verdict || ob != w.obsoletedBy || cm != w.commit {
			t.Errorf("%s: verdict %s obsoletedBy %q commit %q, want %s %q %q", p.File, p.Verdict, ob, cm, w.verdict, w.obsoletedBy, w.commit)
		}
		if p.Upstream.Kind != w.kind || p.Upstream.State != w.state || p.Upstream.Release != w.release {
			t.Errorf("%s: upstream %s %s %q, want %s %s %q (note %q)", p.File, p.Upstream.Kind, p.Upstream.State, p.Upstream.Release, w.kind, w.state, w.release, p.Upstream.Note)
		}
		if p.Pins != w.pins || p.AddedCommit != f.commits[w.added] || p.Added == nil {
			t.Errorf("%s: pins %d added %s, want %d %s", p.File, p.Pins, p.AddedCommit, w.pins, f.commits[w.added])
		}
		if strings.Join(p.Findings, ",") != w.findings {
			t.Errorf("%s: findings %v, want %q", p.File, p.Findings, w.findings)
		}
	}
	counts := func(ps []struct {
		Commit string
		Count  int
	}) []int {
		var out []int
		for _, p := range ps {
			out = append(out, p.Count)
		}
		return out
	}
	if got, want := fmt.Sprint(counts(app.History)), "[2 3 3 6]"; got != want {
		t.Errorf("app history = %s, want %s", got, want)
	}
	other := got.Units[1]
	if got, want := fmt.Sprint(counts(other.History)), "[1]"; got != want {
		t.Errorf("other history = %s, want %s", got, want)
	}
	if len(other.Patches) != 1 || other.Patches[0].Upstream.State != "not-needed" || len(other.Patches[0].Findings) != 0 {
		t.Errorf("other's patch = %+v, want not-needed with no finding", other.Patches)
	}
	if other.Behind != 2 || other.Newest != "v1.2.0" {
		t.Errorf("other: newest %s behind %d, want v1.2.0 2", other.Newest, other.Behind)
	}
	if got, want := fmt.Sprint(counts(got.History)), "[3 4 4 7]"; got != want {
		t.Errorf("total history = %s, want %s", got, want)
	}
}

// TestStatusOffline: nothing is asked; PR and issue states are unknown, and
// commits still resolve from the cache.
func TestStatusOffline(t *testing.T) {
	f := newFixture(t)
	g := f.serve(t)
	if code, out, errOut := f.run(t, "status", "app", "-o", "json"); code != 0 {
		t.Fatalf("status = %d\n%s%s", code, out, errOut)
	}
	g.asked = nil
	got, _, _ := f.statusJSON(t, 0, "--offline", "status", "app", "-o", "json")
	if len(g.asked) != 0 {
		t.Errorf("status --offline asked GitHub %v", g.asked)
	}
	for _, p := range got.Units[0].Patches {
		if p.Upstream.Kind == "pr" && p.Upstream.State != "unknown" {
			t.Errorf("%s: offline state %s, want unknown", p.File, p.Upstream.State)
		}
		if p.Upstream.Kind == "commit" && p.Upstream.State != "released" {
			t.Errorf("%s: offline commit state %s, want released", p.File, p.Upstream.State)
		}
	}
}

// TestStatusGolden: the markdown and html of the fixture, against
// testdata/status.md and testdata/status.html, the page from its <body> on
// (go test -update rewrites them).
func TestStatusGolden(t *testing.T) {
	for _, format := range []string{"markdown", "html"} {
		t.Run(format, func(t *testing.T) {
			f := newFixture(t)
			f.serve(t)
			code, out, errOut := f.run(t, "status", "-o", format)
			if code != 0 {
				t.Fatalf("status -o %s = exit %d\n%s%s", format, code, out, errOut)
			}
			// Markdown must not mention, link an image or pass HTML; the
			// page escapes the text, so it loads nothing either.
			bad := []string{"@octocat", "![", "<img"}
			if format == "html" {
				bad = []string{"<img", "<script"}
			}
			for _, bad := range bad {
				if strings.Contains(out, bad) {
					t.Errorf("status -o %s passes server text %q through", format, bad)
				}
			}
			if format == "html" {
				// The page's head is the template's (its inline style):
				// TestStatusHTMLPage checks what it may hold. The golden is
				// the body, what the fixture's data renders.
				head, body, ok := strings.Cut(out, "<body>\n")
				if !ok || !strings.HasPrefix(head, "<!DOCTYPE html>\n") || !strings.Contains(head, "<title>patchkit: carried patches</title>") {
					t.Fatalf("status -o html: want a doctype, the title and a body:\n%s", out)
				}
				out = "<body>\n" + body
			}
			// The downstream commits hold the upstream's temp path: name them.
			for i, c := range f.commits {
				out = strings.ReplaceAll(out, c[:12], fmt.Sprintf("c%d", i+1))
			}
			ext := map[string]string{"markdown": "md", "html": "html"}[format]
			golden := filepath.Join("testdata", "status."+ext)
			if *update {
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if out != string(want) {
				t.Errorf("status -o %s differs from %s (go test -update rewrites it):\n%s", format, golden, out)
			}
		})
	}
}

// TestStatusIssue: --issue creates the dashboard issue once, leaves it alone
// when nothing changed, and edits it when the report changes.
func TestStatusIssue(t *testing.T) {
	f := newFixture(t)
	g := f.serve(t)
	code, _, errOut := f.run(t, "status", "--issue", "--repo", "down/stream")
	if code != 0 || g.created != 1 || g.edited != 0 {
		t.Fatalf("first --issue: exit %d, created %d edited %d, want 0 1 0\n%s", code, g.created, g.edited, errOut)
	}
	if !strings.Contains(errOut, "dashboard issue #100 created") {
		t.Errorf("stderr = %q, want the issue created", errOut)
	}
	body, _ := g.issues[0]["body"].(string)
	if !strings.Contains(body, "0002-orig.diff") || strings.Contains(body, "@octocat") {
		t.Errorf("dashboard body lacks the series or mentions: %s", body)
	}
	if code, _, errOut := f.run(t, "status", "--issue", "--repo", "down/stream"); code != 0 || g.created != 1 || g.edited != 0 {
		t.Fatalf("second --issue: exit %d, created %d edited %d, want 0 1 0\n%s", code, g.created, g.edited, errOut)
	}
	f.down.Remove("patches/app/0007-open.patch")
	f.down.Commit("c5: drop 0007")
	if code, _, errOut := f.run(t, "status", "--issue", "--repo", "down/stream"); code != 0 || g.created != 1 || g.edited != 1 {
		t.Fatalf("third --issue: exit %d, created %d edited %d, want 0 1 1\n%s", code, g.created, g.edited, errOut)
	}
	if body, _ := g.issues[0]["body"].(string); strings.Contains(body, "0007-open.patch") {
		t.Errorf("the edited dashboard still lists the dropped patch")
	}
}

func TestStatusBadInvocation(t *testing.T) {
	f := newFixture(t)
	for _, args := range [][]string{
		{"status", "-o", "yaml"},
		{"status", "--repo", "down/stream"},
		{"--offline", "status", "--issue", "--repo", "down/stream"},
		{"status", "--issue", "--repo", "nope"},
	} {
		t.Setenv("GITHUB_REPOSITORY", "")
		if code, _, _ := f.run(t, args...); code != 2 {
			t.Errorf("%v = exit %d, want 2", args, code)
		}
	}
}

// TestStatusHTMLPage parses the page (golang.org/x/net/html) and checks it
// is self-contained: its tables and an inline SVG chart with a line per
// unit and the total, no script, no element that loads anything, and no
// link but to the http(s) pages of PRs, issues and commits.
func TestStatusHTMLPage(t *testing.T) {
	f := newFixture(t)
	f.serve(t)
	code, out, errOut := f.run(t, "status", "-o", "html")
	if code != 0 {
		t.Fatalf("status -o html = exit %d\n%s%s", code, out, errOut)
	}
	doc, err := html.Parse(strings.NewReader(out))
	if err != nil {
		t.Fatalf("parsing the page: %v", err)
	}
	count := map[string]int{}
	var series []string
	var rows, cells int
	var walk func(n *html.Node, inSVG bool)
	walk = func(n *html.Node, inSVG bool) {
		if n.Type == html.ElementNode {
			count[n.Data]++
			switch n.Data {
			case "script", "img", "iframe", "link", "object", "embed", "image", "use", "foreignObject":
				t.Errorf("the page has a <%s>", n.Data)
			case "tr":
				rows++
			case "td":
				cells++
			case "svg":
				inSVG = true
			case "path":
				if inSVG && attr(n, "class") == "series" {
					series = append(series, attr(n, "data-unit"))
				}
			}
			for _, a := range n.Attr {
				if strings.HasPrefix(a.Key, "on") || a.Key == "src" || a.Key == "srcset" || a.Key == "style" {
					t.Errorf("<%s> has attribute %s", n.Data, a.Key)
				}
				if a.Key == "href" && !strings.HasPrefix(a.Val, "https://github.com/") {
					t.Errorf("<%s> links to %q", n.Data, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inSVG)
		}
	}
	walk(doc, false)
	if count["table"] != 3 {
		t.Errorf("tables = %d, want 3 (units, and one per unit)", count["table"])
	}
	// units table: header + 2; app: header + 6; other: header + 1.
	if rows != 12 {
		t.Errorf("table rows = %d, want 12", rows)
	}
	if count["svg"] != 1 {
		t.Errorf("svg elements = %d, want 1", count["svg"])
	}
	if got, want := strings.Join(series, ","), "total,images/app,images/other"; got != want {
		t.Errorf("chart series = %s, want %s", got, want)
	}
	if count["style"] != 1 {
		t.Errorf("style elements = %d, want 1 (inline)", count["style"])
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// TestStatusUnitFails: a unit whose upstream is gone is a line of the
// report with its error; the others are reported; the run exits 2.
func TestStatusUnitFails(t *testing.T) {
	f := newFixture(t)
	f.serve(t)
	gone := filepath.Join(t.TempDir(), "gone")
	f.down.Write("images/broken/patchkit.yaml", "upstream:\n  url: file://"+gone+"\n  ref: v1.0.0\n  releases: \"v1.*\"\npatches: patches/broken\n")
	f.down.Write("patches/broken/0001-x.diff", patch("Subject: x\n", "a"))
	f.down.Commit("c5: a unit whose upstream is gone")
	got, _, errOut := f.statusJSON(t, 2, "status", "-o", "json")
	var names []string
	for _, u := range got.Units {
		names = append(names, fmt.Sprintf("%s:%d:%v", u.Name, len(u.Patches), u.Error != ""))
	}
	if want := "[app:6:false broken:0:true other:1:false]"; fmt.Sprint(names) != want {
		t.Errorf("units = %v, want %s", names, want)
	}
	if !strings.Contains(errOut, "1 of 3 units could not be reported on") || !strings.Contains(errOut, "broken") {
		t.Errorf("stderr = %q, want the failed unit named", errOut)
	}
	code, md, _ := f.run(t, "status", "-o", "markdown")
	if code != 2 || !strings.Contains(md, "### `images/broken`: ❌ not reported") || !strings.Contains(md, "### `images/app`") {
		t.Errorf("markdown (exit %d) lacks the failed unit or the others:\n%s", code, md)
	}
}
