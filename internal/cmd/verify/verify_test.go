package verify_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// expect is one check a case expects.
type expect struct {
	patch, check, status string
	contains             []string
	line                 int
}

func TestVerify(t *testing.T) {
	up := newUpstream(t)
	cache := t.TempDir()
	fixMsg := "identical to upstream " + up.fix[:12] + " (fix: requeue while the target pod is not scheduled)"
	edited := strings.Replace(up.moved, "+"+comment+"\n", "+line20 // retry forever\n", 1)
	newFile := func(name, line string) string {
		return "diff --git a/" + name + " b/" + name + "\nnew file mode 100644\n--- /dev/null\n+++ b/" + name + "\n@@ -0,0 +1 @@\n+" + line + "\n"
	}
	tests := []struct {
		name  string
		files map[string]string
		spec  string
		code  int
		want  []expect
	}{
		{
			name:  "backport with moved line numbers is identical",
			files: map[string]string{"0001-fix.diff": header("requeue", "upstream", up.fix) + up.moved},
			want: []expect{
				{patch: "0001-fix.diff", check: "apply", status: "pass", contains: []string{"applies to v1.0.0"}},
				{patch: "0001-fix.diff", check: "whitespace", status: "pass"},
				{patch: "0001-fix.diff", check: "header", status: "pass"},
				{patch: "0001-fix.diff", check: "backport", status: "pass", contains: []string{fixMsg}, line: 2},
				{patch: "0001-fix.diff", check: "applied-upstream", status: "skip"},
				{patch: "0001-fix.diff", check: "test", status: "skip"},
				{patch: "images/img/patchkit.yaml", check: "test", status: "skip"},
			},
		},
		{
			name:  "re-split patch is equivalent",
			files: map[string]string{"0001-fix.diff": header("requeue", "upstream", up.fix) + up.resplit},
			want: []expect{{patch: "0001-fix.diff", check: "backport", status: "pass",
				contains: []string{"equivalent to upstream " + up.fix[:12], "hunks split otherwise"}}},
		},
		{
			name:  "hand-edited comment differs",
			files: map[string]string{"0001-fix.diff": header("requeue", "upstream", up.fix) + edited},
			code:  1,
			want: []expect{{patch: "0001-fix.diff", check: "backport", status: "fail", line: 2, contains: []string{
				"differs from upstream " + up.fix[:12],
				"greet.txt differs from the commit's",
				"1 changed line only in the patch, 1 only upstream",
				"say Origin: backport if it was adapted",
				"only in the backport (it changes this, the upstream commit does not):\n  greet.txt\n    +line20 // retry forever\n",
				"only upstream (the upstream commit changes this, the backport does not):\n  greet.txt\n    +" + comment,
			}}},
		},
		{
			name:  "an adapted backport that differs warns",
			files: map[string]string{"0001-fix.diff": header("requeue", "backport", up.fix) + edited},
			want:  []expect{{patch: "0001-fix.diff", check: "backport", status: "warn", contains: []string{"differs from upstream", "+line20 // retry forever"}}},
		},
		{
			name:  "a commit upstream does not have",
			files: map[string]string{"0001-fix.diff": header("requeue", "upstream", missingID) + up.moved},
			code:  1,
			want: []expect{{patch: "0001-fix.diff", check: "backport", status: "fail", line: 2,
				contains: []string{"differs: upstream " + up.repo.URL() + " does not have commit " + missingID}}},
		},
		{
			name:  "a commit upstream has, after the cache was filled",
			files: map[string]string{"0001-later.diff": header("later", "upstream", up.later) + up.repo.Show(up.later)},
			want:  []expect{{patch: "0001-later.diff", check: "backport", status: "pass", contains: []string{"identical to upstream " + up.later[:12]}}},
		},
		{
			name:  "a true removal note",
			files: map[string]string{"0001-fix.diff": header("requeue", "upstream", up.fix, "Applied-Upstream: v1.2.0") + up.moved},
			want: []expect{{patch: "0001-fix.diff", check: "applied-upstream", status: "pass", line: 3,
				contains: []string{"v1.2.0 carries the change", "v1.1.0, the release before it, does not"}}},
		},
		{
			name:  "a removal note too early",
			files: map[string]string{"0001-fix.diff": header("requeue", "upstream", up.fix, "Applied-Upstream: v1.1.0") + up.moved},
			code:  1,
			want: []expect{{patch: "0001-fix.diff", check: "applied-upstream", status: "fail", line: 3,
				contains: []string{"Applied-Upstream: v1.1.0 is wrong: v1.1.0 does not carry the change", "the first release that carries it is v1.2.0"}}},
		},
		{
			name:  "a removal note too late",
			files: map[string]string{"0001-fix.diff": header("requeue", "upstream", up.fix, "Applied-Upstream: v1.3.0") + up.moved},
			code:  1,
			want: []expect{{patch: "0001-fix.diff", check: "applied-upstream", status: "fail",
				contains: []string{"v1.2.0, the release before it, already carries the change", "the first release that carries it is v1.2.0"}}},
		},
		{
			name:  "a removal note naming no release",
			files: map[string]string{"0001-fix.diff": header("requeue", "upstream", up.fix, "Applied-Upstream: v9.9.9") + up.moved},
			code:  1,
			want:  []expect{{patch: "0001-fix.diff", check: "applied-upstream", status: "fail", contains: []string{"upstream has no release v9.9.9"}}},
		},
		{
			name: "header dialects",
			files: map[string]string{
				"0001-vendor.diff":   header("vendor", "vendor", "") + newFile("a.txt", "a"),
				"0002-unknown.diff":  "Subject: unknown\nUpstream-Commit: " + up.fix + "\n\n" + newFile("b.txt", "b"),
				"0003-nocommit.diff": header("no commit", "upstream", "") + newFile("c.txt", "c"),
				"0004-extra.diff":    header("extra", "upstream", up.clean, "Cherry-Picked-From: "+up.clean) + up.repo.Show(up.clean),
				"0005-told.diff":     header("told", "vendor", "", "Forwarded: https://github.com/acme/widget/pull/3") + newFile("d.txt", "d"),
			},
			code: 1,
			want: []expect{
				{patch: "0001-vendor.diff", check: "header", status: "warn", contains: []string{"Origin: vendor without Forwarded"}, line: 2},
				{patch: "0002-unknown.diff", check: "header", status: "fail", line: 2, contains: []string{"Upstream-Commit: (line 2) looks like a commit reference, but patchkit does not read it", "Origin: upstream, <commit URL or id>"}},
				{patch: "0002-unknown.diff", check: "backport", status: "skip"},
				{patch: "0003-nocommit.diff", check: "header", status: "fail", line: 2, contains: []string{"Origin: upstream names no upstream commit"}},
				{patch: "0004-extra.diff", check: "header", status: "warn", line: 3, contains: []string{"Cherry-Picked-From: (line 3) looks like a commit reference"}},
				{patch: "0004-extra.diff", check: "backport", status: "pass", contains: []string{"identical to upstream " + up.clean[:12]}},
				{patch: "0005-told.diff", check: "header", status: "pass"},
			},
		},
		{
			name: "whitespace and a patch that does not apply",
			files: map[string]string{
				"0001-ws.diff":     header("ws", "vendor", "", "Forwarded: no") + newFile("ws.txt", "trailing   "),
				"0002-stale.patch": header("stale", "vendor", "", "Forwarded: no") + strings.Replace(up.moved, " line18\n", " line18 changed\n", 1),
			},
			code: 1,
			want: []expect{
				{patch: "0001-ws.diff", check: "apply", status: "pass"},
				{patch: "0001-ws.diff", check: "whitespace", status: "fail", line: 10, contains: []string{"1 whitespace error", "patches/img/0001-ws.diff:10: ws.txt: trailing whitespace"}},
				{patch: "0002-stale.patch", check: "apply", status: "fail", contains: []string{"does not apply to v1.0.0", "greet.txt"}, line: 9},
				{patch: "0002-stale.patch", check: "whitespace", status: "skip"},
			},
		},
		{
			name: "whitespace under git am warns",
			spec: "apply:\n  tool: git-am\n  args: [--committer-date-is-author-date]\n",
			files: map[string]string{
				"0001-ws.diff": header("ws", "vendor", "", "Forwarded: no") + newFile("ws.txt", "trailing   "),
			},
			want: []expect{
				{patch: "0001-ws.diff", check: "apply", status: "pass"},
				{patch: "0001-ws.diff", check: "whitespace", status: "warn", line: 10, contains: []string{"1 whitespace error (git am --committer-date-is-author-date warns and applies)", "patches/img/0001-ws.diff:10: ws.txt: trailing whitespace"}},
			},
		},
		{
			name: "a file git am cannot read, in a series file's order",
			spec: "apply:\n  tool: git-am\n  order: series\n",
			files: map[string]string{
				"b-good.diff": header("good", "vendor", "", "Forwarded: no") + newFile("b.txt", "b"),
				"a-bare.diff": newFile("a.txt", "a"),
				"series":      "b-good.diff\na-bare.diff\n",
			},
			code: 1,
			want: []expect{
				{patch: "b-good.diff", check: "apply", status: "pass"},
				{patch: "a-bare.diff", check: "apply", status: "fail", line: 1, contains: []string{"not a mail: git am reads each file as a mailbox"}},
			},
		},
		{
			name: "patches that do not parse",
			files: map[string]string{
				"0001-badkind.diff": "Subject: x\nOrigin: sideways, " + up.fix + "\n\n" + newFile("a.txt", "a"),
				"0002-good.diff":    header("good", "vendor", "", "Forwarded: no") + newFile("b.txt", "b"),
				"0003-badhunk.diff": header("bad hunk", "vendor", "", "Forwarded: no") + strings.Replace(newFile("c.txt", "c"), "@@ -0,0 +1 @@", "@@ -0,0 +1,3 @@", 1),
			},
			code: 1,
			want: []expect{
				{patch: "0001-badkind.diff", check: "header", status: "fail", line: 2, contains: []string{`unknown Origin kind "sideways"`}},
				{patch: "0001-badkind.diff", check: "apply", status: "fail", contains: []string{"not applied"}},
				{patch: "0001-badkind.diff", check: "backport", status: "skip"},
				{patch: "0002-good.diff", check: "apply", status: "pass"},
				{patch: "0003-badhunk.diff", check: "apply", status: "fail"},
				{patch: "0003-badhunk.diff", check: "header", status: "skip"},
			},
		},
		{
			name: "tests",
			spec: `test:
  inject:
    - from: patches/img/tests/ctl_test.go
      to: pkg/controller/ctl_test.go
    - from: patches/img/tests/missing_test.go
      to: pkg/controller/missing_test.go
    - from: patches/img/tests/ctl_test.go
      to: pkg/nowhere/ctl_test.go
  package: ./pkg/controller
  run: '^TestA$'
`,
			files: map[string]string{
				"tests/ctl_test.go": "package controller\n",
				"0001-a.diff":       header("a", "vendor", "", "Forwarded: no", "Test: TestA, TestB/sub") + newFile("a.txt", "a"),
				"0002-b.diff":       header("b", "vendor", "", "Forwarded: no", "Test: TestC", "Test: TestA") + newFile("b.txt", "b"),
			},
			code: 1,
			want: []expect{
				{patch: "0001-a.diff", check: "test", status: "pass", contains: []string{"owns TestA, TestB/sub"}},
				{patch: "0002-b.diff", check: "test", status: "fail", line: 5, contains: []string{"TestA is also owned by patches/img/0001-a.diff (line 4)"}},
				{patch: "images/img/patchkit.yaml", check: "test", status: "fail", line: 13, contains: []string{"test.inject[1].from: patches/img/tests/missing_test.go does not exist"}},
				{patch: "images/img/patchkit.yaml", check: "test", status: "fail", line: 16, contains: []string{"test.inject[2].to: pkg/nowhere/ctl_test.go: the directory pkg/nowhere is not in the patched tree"}},
			},
		},
		{
			name: "a reference whose patch-id no longer matches",
			files: map[string]string{"0001-fix.ref.diff": header("requeue", "upstream", up.fix,
				"Reference: "+up.fix, "Patch-Id: "+strings.Repeat("0", 40))},
			code: 1,
			want: []expect{
				{patch: "0001-fix.ref.diff", check: "backport", status: "fail", line: 4, contains: []string{"not " + strings.Repeat("0", 40), "no longer the diff of upstream commit " + up.fix}},
				{patch: "0001-fix.ref.diff", check: "apply", status: "fail", contains: []string{"not applied"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRepo(t, up, cache, tt.spec)
			for name, content := range tt.files {
				r.Write("patches/img/"+name, content)
			}
			code, stdout, stderr := r.run("verify", "img", "-o", "json")
			if code != tt.code {
				t.Errorf("verify exit = %d, want %d\n%s%s", code, tt.code, stdout, stderr)
			}
			v := decode(t, stdout)
			if v.Image != "img" || v.OK != (tt.code == 0) {
				t.Errorf("image = %q, ok = %v; want img, %v", v.Image, v.OK, tt.code == 0)
			}
			for _, w := range tt.want {
				c := v.check(t, w.patch, w.check, w.contains...)
				if c.Status != w.status {
					t.Errorf("%s %s: status = %s, want %s (%s)", w.patch, w.check, c.Status, w.status, c.Message)
				}
				for _, s := range w.contains {
					if !strings.Contains(c.Message, s) {
						t.Errorf("%s %s: message =\n%s\nwant it to contain\n%s", w.patch, w.check, c.Message, s)
					}
				}
				if w.line != 0 && c.Line != w.line {
					t.Errorf("%s %s: line = %d, want %d", w.patch, w.check, c.Line, w.line)
				}
				if w.check == "backport" && w.status != "skip" && !startsWithGrade(c.Message) {
					t.Errorf("%s backport message %q does not start with identical, equivalent or differs", w.patch, c.Message)
				}
			}
		})
	}
}

func startsWithGrade(msg string) bool {
	for _, g := range []string{"identical", "equivalent", "differs"} {
		if strings.HasPrefix(msg, g) {
			return true
		}
	}
	return false
}

// TestVerifyFormats checks the text, markdown and github outputs, and the
// step summary.
func TestVerifyFormats(t *testing.T) {
	up := newUpstream(t)
	r := newRepo(t, up, t.TempDir(), "")
	edited := strings.Replace(up.moved, "+"+comment+"\n", "+line20 // retry forever\n", 1)
	r.Write("patches/img/0001-fix.diff", header("requeue", "upstream", up.fix)+edited)
	r.Write("patches/img/0002-vendor.diff", header("vendor", "vendor", "")+
		"diff --git a/v.txt b/v.txt\nnew file mode 100644\n--- /dev/null\n+++ b/v.txt\n@@ -0,0 +1 @@\n+v\n")

	code, stdout, _ := r.run("verify", "img")
	if code != 1 || !strings.Contains(stdout, "img: FAILED (") ||
		!strings.Contains(stdout, "    FAIL backport         line 2: differs from upstream "+up.fix[:12]) ||
		!strings.Contains(stdout, "+line20 // retry forever") ||
		!strings.Contains(stdout, "    warn header           line 2: Origin: vendor without Forwarded") {
		t.Errorf("verify text exit %d:\n%s", code, stdout)
	}

	code, stdout, _ = r.run("verify", "img", "-o", "markdown")
	if code != 1 || !strings.Contains(stdout, "### ❌ patchkit verify `img`") ||
		!strings.Contains(stdout, "| `patches/img/0001-fix.diff:2` | backport | ❌ fail | differs from upstream") ||
		!strings.Contains(stdout, "<details><summary><code>patches/img/0001-fix.diff</code> backport: differs") {
		t.Errorf("verify markdown exit %d:\n%s", code, stdout)
	}

	summary := filepath.Join(t.TempDir(), "summary.md")
	os.WriteFile(summary, []byte("earlier step\n"), 0o644)
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	code, stdout, _ = r.run("verify", "img", "-o", "github")
	if code != 1 || !strings.Contains(stdout, "::error file=patches/img/0001-fix.diff,line=2,title=patchkit verify backport::differs from upstream "+up.fix[:12]) ||
		!strings.Contains(stdout, "::warning file=patches/img/0002-vendor.diff,line=2,title=patchkit verify header::Origin: vendor without Forwarded") ||
		!strings.Contains(stdout, "%0Aonly in the backport") {
		t.Errorf("verify github exit %d:\n%s", code, stdout)
	}
	got, _ := os.ReadFile(summary)
	if !strings.HasPrefix(string(got), "earlier step\n### ❌ patchkit verify `img`") {
		t.Errorf("step summary =\n%s\nwant the markdown appended", got)
	}
}

// TestVerifyAllImages: with no IMAGE, every image under images/ is checked
// and JSON is an array.
func TestVerifyAllImages(t *testing.T) {
	up := newUpstream(t)
	r := newRepo(t, up, t.TempDir(), "")
	spec := strings.Replace(specText, repoURL, up.repo.URL(), 1)
	r.Write("images/img/patchkit.yaml", spec)
	r.Write("images/other/patchkit.yaml", strings.Replace(spec, "patches/img", "patches/other", 1))
	r.Write("patches/img/0001-fix.diff", header("requeue", "upstream", up.fix)+up.moved)
	r.Write("patches/other/0001-fix.diff", header("requeue", "upstream", missingID)+up.moved)

	code, stdout, stderr := runPatchkit(t, "--root", r.Root, "--cache-dir", r.cache, "verify", "-o", "json")
	if code != 1 {
		t.Errorf("verify exit = %d, want 1\n%s%s", code, stdout, stderr)
	}
	var all []verifyJSON
	if err := json.Unmarshal([]byte(stdout), &all); err != nil {
		t.Fatalf("verify -o json with no IMAGE: %v\n%s", err, stdout)
	}
	if len(all) != 2 || all[0].Image != "img" || !all[0].OK || all[1].Image != "other" || all[1].OK {
		t.Errorf("results = %+v", all)
	}

	if code, _, stderr := runPatchkit(t, "--root", r.Root, "--upstream-url", up.repo.URL(), "verify"); code != 2 || !strings.Contains(stderr, "--upstream-url needs exactly one IMAGE") {
		t.Errorf("verify --upstream-url without IMAGE: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runPatchkit(t, "--root", r.Root, "--offline", "verify", "img", "--online"); code != 2 || !strings.Contains(stderr, "exclude each other") {
		t.Errorf("verify --online --offline: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runPatchkit(t, "--root", r.Root, "--cache-dir", r.cache, "verify", "nosuch"); code != 2 || !strings.Contains(stderr, `no image "nosuch": no unit is named nosuch (the repository has 2 units`) {
		t.Errorf("verify of a missing image: exit %d, %s", code, stderr)
	}
}

// fakeGitHub serves GET /repos/acme/widget/commits/{sha} with the diff media
// type from the upstream repository, and the errors the online check must
// handle.
type fakeGitHub struct {
	up       *upstream
	token    string
	mu       sync.Mutex
	requests map[string]int
	auth     []string
}

const (
	sha404 = "4040404040404040404040404040404040404040"
	sha422 = "4224224224224224224224224224224224224224"
)

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	sha := strings.TrimPrefix(r.URL.Path, "/repos/acme/widget/commits/")
	f.requests[sha]++
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Header.Get("Accept") != "application/vnd.github.v3.diff":
		w.WriteHeader(http.StatusUnsupportedMediaType)
	case sha == sha404 || sha == r.URL.Path:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"Not Found"}`)
	case sha == sha422:
		// Echo the credentials, as a hostile or buggy server might.
		w.WriteHeader(http.StatusUnprocessableEntity)
		fmt.Fprintf(w, `{"message":"No commit found for SHA: %s (auth %s)"}`, sha, r.Header.Get("Authorization"))
	default:
		out, _, err := f.up.repo.GitIn(nil, "show", "--format=", sha)
		if err != nil {
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprintf(w, `{"message":"No commit found for SHA: %s"}`, sha)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, out)
	}
}

// TestVerifyOnline runs the backport check against a stand-in GitHub API:
// a diff it serves, 404, 422, and a rate limit with Retry-After; the token
// is sent and never shows.
func TestVerifyOnline(t *testing.T) {
	const token = "ghp_RecognisableSecretToken0123456789"
	up := newUpstream(t)
	fake := &fakeGitHub{up: up, requests: map[string]int{}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	t.Setenv("GITHUB_API_URL", srv.URL)
	t.Setenv("GITHUB_TOKEN", token)
	summary := filepath.Join(t.TempDir(), "summary.md")
	t.Setenv("GITHUB_STEP_SUMMARY", summary)

	r := newRepo(t, up, t.TempDir(), "")
	r.Write("patches/img/0001-fix.diff", header("fix", "upstream", up.fix)+up.moved)
	r.Write("patches/img/0002-missing.diff", header("missing", "upstream", sha404)+up.repo.Show(up.clean))
	r.Write("patches/img/0003-unprocessable.diff", header("unprocessable", "upstream", sha422)+up.repo.Show(up.later))
	var outputs []string
	for _, format := range []string{"json", "text", "markdown", "github"} {
		code, stdout, stderr := r.run("verify", "img", "--online", "-o", format)
		if code != 1 {
			t.Errorf("-o %s: exit = %d, want 1\n%s%s", format, code, stdout, stderr)
		}
		outputs = append(outputs, stdout, stderr)
		if format != "json" {
			continue
		}
		v := decode(t, stdout)
		if c := v.check(t, "0001-fix.diff", "backport"); c.Status != "pass" || !strings.HasPrefix(c.Message, "identical to upstream "+up.fix[:12]) {
			t.Errorf("online identical: %+v", c)
		}
		if c := v.check(t, "0002-missing.diff", "backport"); c.Status != "fail" || !strings.Contains(c.Message, "differs: upstream does not have commit "+sha404) || !strings.Contains(c.Message, "HTTP 404") {
			t.Errorf("online 404: %+v", c)
		}
		if c := v.check(t, "0003-unprocessable.diff", "backport"); c.Status != "fail" || !strings.Contains(c.Message, "HTTP 422: No commit found for SHA") || !strings.Contains(c.Message, "***") {
			t.Errorf("online 422: %+v", c)
		}
	}
	if fake.requests[up.fix] == 0 {
		t.Errorf("requests = %v, want the fix's diff fetched", fake.requests)
	}
	for _, a := range fake.auth {
		if a != "Bearer "+token {
			t.Fatalf("Authorization = %q, want the token", a)
		}
	}
	got, _ := os.ReadFile(summary)
	outputs = append(outputs, string(got))
	for _, o := range outputs {
		if strings.Contains(o, token) {
			t.Errorf("output shows the token:\n%s", o)
		}
	}

	// A rate limit: the first answer is 429 with Retry-After, the retry
	// gets the diff.
	r2 := newRepo(t, up, t.TempDir(), "")
	r2.Write("patches/img/0001-fix.diff", "Subject: fix\nOrigin: upstream, "+up.fix+"\n\n"+up.moved)
	fake.mu.Lock()
	fake.requests = map[string]int{}
	fake.mu.Unlock()
	srvLimited := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fake.mu.Lock()
		fake.requests["limited"]++
		n := fake.requests["limited"]
		fake.mu.Unlock()
		if n == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"message":"API rate limit exceeded"}`)
			return
		}
		fake.ServeHTTP(w, r)
	}))
	defer srvLimited.Close()
	t.Setenv("GITHUB_API_URL", srvLimited.URL)
	code, stdout, stderr := r2.run("verify", "img", "--online", "-o", "json")
	if code != 0 {
		t.Fatalf("rate-limited verify exit = %d\n%s%s", code, stdout, stderr)
	}
	if c := decode(t, stdout).check(t, "0001-fix.diff", "backport"); c.Status != "pass" || strings.Contains(c.Message, "GitHub:") {
		t.Errorf("rate-limited backport check = %+v, want identical from GitHub after a retry", c)
	}
	if fake.requests["limited"] != 2 {
		t.Errorf("requests = %d, want 2 (one retry)", fake.requests["limited"])
	}
}
