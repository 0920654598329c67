package verify_test

import (
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/gomod/gomodtest"
)

// TestVerifyGoModBump: the gomod check runs go mod tidy after the series
// (against the test's proxy on disk) and the header check wants a bump that
// mentions an advisory to name it. A bump made with go mod tidy and an
// Advisory field passes both; one that edits go.mod by hand (no go.sum
// lines) and only mentions its CVE in the subject fails both.
func TestVerifyGoModBump(t *testing.T) {
	gomodtest.Env(t, gomodtest.Proxy(t,
		gomodtest.Module{Path: "example.com/a", Version: "v1.0.0"},
		gomodtest.Module{Path: "example.com/a", Version: "v1.1.0"},
	))
	r := gittest.New(t)
	r.Write("go.mod", gomodtest.MainGoMod("example.com/up", "1.21", "example.com/a v1.0.0"))
	r.Write("main.go", "package main\n\nimport \"example.com/a\"\n\nfunc main() { println(a.V) }\n")
	gomodtest.Go(t, r.Dir, nil, "mod", "tidy")
	pin := r.Release("initial", "v1.0.0")
	gomodtest.Go(t, r.Dir, nil, "mod", "edit", "-require=example.com/a@v1.1.0")
	gomodtest.Go(t, r.Dir, nil, "mod", "tidy")
	tidy := r.Show(r.Commit("raise a"))
	r.Git("checkout", "-q", "--detach", pin)
	gomodtest.Go(t, r.Dir, nil, "mod", "edit", "-require=example.com/a@v1.1.0")
	byHand := r.Show(r.Commit("raise a by hand"))
	r.Git("checkout", "-q", "-f", "main")
	up := &upstream{repo: r}

	// A bot-written bump (aws/eks-distro's): no Origin, the advisory in
	// the subject only.
	bot := "Subject: [PATCH] Fix CVE-2025-1234 in example.com/a\n\n" + tidy
	for _, tc := range []struct {
		name, patch       string
		repoConfig        string
		header, gomodStat string
		like, headerLike  string
	}{
		{"tidy, advisory named", "Subject: bump a for CVE-2025-1234\nOrigin: vendor\nForwarded: not-needed\nAdvisory: CVE-2025-1234\n\n" + tidy, "", "pass", "pass", "what go mod tidy leaves", ""},
		{"by hand, advisory only in the subject", "Subject: bump a for CVE-2025-1234\nOrigin: vendor\nForwarded: not-needed\n\n" + byHand, "", "fail", "fail", "tidy adds \"example.com/a v1.1.0 h1:", `add "Advisory: CVE-2025-1234"`},
		{"bot bump, policy required", bot, "", "fail", "pass", "what go mod tidy leaves", `add "Advisory: CVE-2025-1234"`},
		{"bot bump, policy warn", bot, "headers:\n  policy: warn\n", "warn", "pass", "what go mod tidy leaves", "no Origin"},
		{"bot bump, the unit off", bot, "headers:\n  units:\n    - unit: images/*\n      policy: off\n", "skip", "pass", "what go mod tidy leaves", "not checked: headers.units[0].policy (.patchkit.yaml:4) is off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rp := newRepo(t, up, t.TempDir(), "")
			rp.Write("patches/img/0001-bump.diff", tc.patch)
			if tc.repoConfig != "" {
				rp.Write(".patchkit.yaml", tc.repoConfig)
			}
			_, stdout, stderr := rp.run("verify", "img", "-o", "json")
			v := decode(t, stdout)
			h := v.check(t, "0001-bump.diff", "header")
			if h.Status != tc.header || !strings.Contains(h.Message, tc.headerLike) {
				t.Errorf("header check = %+v, want %s with %q", h, tc.header, tc.headerLike)
			}
			if tc.repoConfig == "headers:\n  policy: warn\n" && strings.Contains(h.Message, "Advisory") {
				t.Errorf("header check under warn = %q: the subject's advisory is read, no field is asked for", h.Message)
			}
			g := v.check(t, "0001-bump.diff", "gomod")
			if g.Status != tc.gomodStat || !strings.Contains(g.Message, tc.like) {
				t.Errorf("gomod check = %+v, want %s with %q\n%s", g, tc.gomodStat, tc.like, stderr)
			}
		})
	}
}
