package series

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
)

// TestParseHeaderOriginForms covers the forms real carries use to name the
// upstream change (several Origin lines, prose "Backport of" with a PR or
// commit URL, "Upstream PR:", "Cherry-picked from", "Fixes upstream PR #N",
// a bare commit URL) and checks Origin and Origins.
func TestParseHeaderOriginForms(t *testing.T) {
	const pr = "https://github.com/o/r/pull/347"
	commitURL := "https://github.com/o/r/commit/" + sha1a
	cases := []struct {
		name    string
		text    string
		origins []Origin // Origin is origins[0], or want when set
		want    *Origin
	}{
		{
			name: "two Origin lines",
			text: "Subject: x\nOrigin: backport, " + commitURL + "\nOrigin: backport, https://github.com/o/r/commit/" + sha1b + "\n",
			origins: []Origin{
				{Kind: KindBackport, URL: commitURL, Commit: sha1a, Source: SourceOrigin, Line: 2},
				{Kind: KindBackport, URL: "https://github.com/o/r/commit/" + sha1b, Commit: sha1b, Source: SourceOrigin, Line: 3},
			},
		},
		{
			name: "three Origin lines, bare ids, upstream",
			text: "Origin: upstream, " + sha1a + "\nOrigin: upstream, " + sha1b[:12] + "\nOrigin: upstream, commit:deadbeef\n",
			origins: []Origin{
				{Kind: KindUpstream, Commit: sha1a, Source: SourceOrigin, Line: 1},
				{Kind: KindUpstream, Commit: sha1b[:12], Source: SourceOrigin, Line: 2},
				{Kind: KindUpstream, Commit: "deadbeef", Source: SourceOrigin, Line: 3},
			},
		},
		{
			name:    "Origin with a PR URL",
			text:    "Origin: backport, " + pr + "\n",
			origins: []Origin{{Kind: KindBackport, URL: pr, PR: 347, Source: SourceOrigin, Line: 1}},
		},
		{
			name:    "Backport of a PR URL",
			text:    "Backport of " + pr + "\n\nMore text.\n",
			origins: []Origin{{Kind: KindBackport, URL: pr, PR: 347, Source: SourceBackportProse, Line: 1}},
		},
		{
			name: "Backport of owner/repo#N with the URL after it (cozystack keycloak)",
			text: "Backport of epam/edp-keycloak-operator#372 (https://github.com/epam/edp-keycloak-operator/pull/372), which fixes epam/edp-keycloak-operator#371 (https://github.com/epam/edp-keycloak-operator/issues/371): a long line.\n",
			origins: []Origin{{Kind: KindBackport, URL: "https://github.com/epam/edp-keycloak-operator/pull/372", PR: 372,
				Source: SourceBackportProse, Line: 1}},
		},
		{
			name:    "Backport of a commit URL",
			text:    "Subject: x\n\nBackport of " + commitURL + ".\n",
			origins: []Origin{{Kind: KindBackport, URL: commitURL, Commit: sha1a, Source: SourceBackportProse, Line: 3}},
		},
		{
			name:    "backported from a PR's commit URL",
			text:    "Backported from https://github.com/o/r/pull/9/commits/" + sha1b + "\n",
			origins: []Origin{{Kind: KindBackport, URL: "https://github.com/o/r/pull/9/commits/" + sha1b, Commit: sha1b, Source: SourceBackportProse, Line: 1}},
		},
		{
			name:    "Upstream PR: URL in a shell-comment header",
			text:    "# Why this patch exists.\n# Upstream PR: " + pr + "\n#\n",
			origins: []Origin{{Kind: KindBackport, URL: pr, PR: 347, Source: SourceUpstreamPR, Line: 2}},
		},
		{
			name:    "Upstream commit: id",
			text:    "Upstream commit: " + sha1b + "\n",
			origins: []Origin{{Kind: KindBackport, Commit: sha1b, Source: SourceUpstreamPR, Line: 1}},
		},
		{
			name:    "Cherry-picked from URL",
			text:    "Subject: x\nCherry-picked from " + commitURL + "\n",
			origins: []Origin{{Kind: KindBackport, URL: commitURL, Commit: sha1a, Source: SourceCherryFrom, Line: 2}},
		},
		{
			name:    "Fixes upstream PR #N",
			text:    "Subject: x\n\nThis fixes upstream PR #1234 for our release.\n",
			origins: []Origin{{Kind: KindBackport, PR: 1234, Source: SourceFixesPR, Line: 3}},
		},
		{
			name:    "Ref upstream PR #N",
			text:    "Ref upstream PR #88\n",
			origins: []Origin{{Kind: KindBackport, PR: 88, Source: SourceFixesPR, Line: 1}},
		},
		{
			name:    "bare commit URL on its own line",
			text:    "Subject: x\n\n" + commitURL + "\n",
			origins: []Origin{{Kind: KindBackport, URL: commitURL, Commit: sha1a, Source: SourceCommitURL, Line: 3}},
		},
		{
			name:    "a commit beats a PR named earlier",
			text:    "Backport of " + pr + "\n(cherry picked from commit " + sha1b + ")\n",
			origins: []Origin{{Kind: KindBackport, Commit: sha1b, Source: SourceCherryPicked, Line: 2}},
		},
		{
			name:    "Origin upstream without a reference takes the prose PR",
			text:    "Origin: upstream\nBackport of " + pr + "\n",
			origins: []Origin{{Kind: KindUpstream, URL: pr, PR: 347, Source: SourceBackportProse, Line: 2}},
		},
		{
			name: "an issue URL names no change",
			text: "Upstream report: https://github.com/cilium/cilium/issues/33155 (closed stale).\nhttps://github.com/o/r/issues/5\n",
		},
		{
			name: "a bare PR URL on its own line is not an origin",
			text: "Subject: x\n\n" + pr + "\n",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := ParseHeader([]byte(c.text), "p.diff")
			if err != nil {
				t.Fatalf("ParseHeader() error = %v", err)
			}
			if !reflect.DeepEqual(h.Origins, c.origins) {
				t.Errorf("ParseHeader() Origins =\n%+v\nwant\n%+v", h.Origins, c.origins)
			}
			want := Origin{}
			if len(c.origins) > 0 {
				want = c.origins[0]
			}
			if c.want != nil {
				want = *c.want
			}
			if h.Origin != want {
				t.Errorf("ParseHeader() Origin = %+v, want %+v", h.Origin, want)
			}
		})
	}
}

func TestParseHeaderOriginErrors(t *testing.T) {
	cases := []struct {
		name, text string
		line       int
		msg        string
	}{
		{"second Origin names nothing", "Origin: backport, " + sha1a + "\nOrigin: backport\n", 2, "must each name"},
		{"first Origin names nothing", "Origin: upstream\nOrigin: upstream, " + sha1a + "\n", 2, "must each name"},
		{"kinds differ", "Origin: backport, " + sha1a + "\nOrigin: upstream, " + sha1b + "\n", 2, "differs"},
		{"vendor twice", "Origin: vendor\nOrigin: vendor\n", 2, "twice"},
		{"same commit twice", "Origin: backport, " + sha1a + "\nOrigin: backport, " + sha1a + "\n", 2, "repeats line 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseHeader([]byte(c.text), "p.diff")
			var ie *diag.InputError
			if !errors.As(err, &ie) || ie.File != "p.diff" || ie.Line != c.line || !strings.Contains(ie.Msg, c.msg) {
				t.Fatalf("ParseHeader() error = %v, want p.diff:%d ... %q", err, c.line, c.msg)
			}
		})
	}
}
