package series

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/gittest"
)

const (
	sha1a = "a229dec3d5150f55ca8344d0e296a8a02d52b726"
	sha1b = "0123456789abcdef0123456789abcdef01234567"
)

func TestParseHeader(t *testing.T) {
	cases := []struct {
		name string
		text string
		want Header // Fields is compared only when set
	}{
		{
			name: "DESIGN example",
			text: "Subject: requeue VMI migration while the target pod is not scheduled\n" +
				"Origin: upstream, https://github.com/kubeovn/kube-ovn/commit/" + sha1a + "\n" +
				"Bug: https://github.com/kubeovn/kube-ovn/issues/6823\n" +
				"Applied-Upstream: v1.15.14\n" +
				"Test: TestVMIMigrationSchedulingRetry/source_node_unknown\n",
			want: Header{
				Subject:         "requeue VMI migration while the target pod is not scheduled",
				Origin:          Origin{Kind: "upstream", URL: "https://github.com/kubeovn/kube-ovn/commit/" + sha1a, Commit: sha1a, Source: "Origin", Line: 2},
				Bug:             []string{"https://github.com/kubeovn/kube-ovn/issues/6823"},
				AppliedUpstream: "v1.15.14",
				Tests:           []string{"TestVMIMigrationSchedulingRetry/source_node_unknown"},
				Lines:           5,
			},
		},
		{
			name: "Description continuation gives the subject",
			text: "Description: fix the frobnicator\n the long description\n .\n   indented code\nAuthor: Jane <j@example.com>\nLast-Update: 2024-01-02\nForwarded: not-needed\nOrigin: vendor\n",
			want: Header{
				Subject:     "fix the frobnicator",
				Description: "fix the frobnicator\nthe long description\n\n  indented code",
				Author:      "Jane <j@example.com>",
				LastUpdate:  "2024-01-02",
				Forwarded:   "not-needed",
				Origin:      Origin{Kind: "vendor", Source: "Origin", Line: 8},
				Lines:       8,
			},
		},
		{
			name: "Origin backport with a bare id, keys in any case",
			text: "subject: x\nORIGIN: Backport, " + sha1a[:12] + "\n",
			want: Header{Subject: "x", Origin: Origin{Kind: "backport", Commit: sha1a[:12], Source: "Origin", Line: 2}, Lines: 2},
		},
		{
			name: "Origin commit: prefix",
			text: "Subject: x\nOrigin: upstream, commit:" + strings.ToUpper(sha1a) + "\n",
			want: Header{Subject: "x", Origin: Origin{Kind: "upstream", Commit: sha1a, Source: "Origin", Line: 2}, Lines: 2},
		},
		{
			name: "Origin GitHub pull request commit",
			text: "Subject: x\nOrigin: backport, https://github.com/o/r/pull/12/commits/" + sha1a + "\n",
			want: Header{Subject: "x", Origin: Origin{Kind: "backport", URL: "https://github.com/o/r/pull/12/commits/" + sha1a, Commit: sha1a, Source: "Origin", Line: 2}, Lines: 2},
		},
		{
			name: "Origin GitLab commit, continued on the next line",
			text: "Subject: x\nOrigin: upstream,\n https://gitlab.com/g/p/-/commit/" + sha1b + "\n",
			want: Header{Subject: "x", Origin: Origin{Kind: "upstream", URL: "https://gitlab.com/g/p/-/commit/" + sha1b, Commit: sha1b, Source: "Origin", Line: 2}, Lines: 3},
		},
		{
			name: "Origin commit URL with .patch and a comment",
			text: "Subject: x\nOrigin: upstream, <https://github.com/o/r/commit/" + sha1a + ".patch> (squashed)\n",
			want: Header{Subject: "x", Origin: Origin{Kind: "upstream", URL: "https://github.com/o/r/commit/" + sha1a + ".patch", Commit: sha1a, Source: "Origin", Line: 2}, Lines: 2},
		},
		{
			name: "Origin bare id of letters only",
			text: "Subject: x\nOrigin: deadbeefcafe, see the log\n",
			want: Header{Subject: "x", Origin: Origin{Commit: "deadbeefcafe", Source: "Origin", Line: 2}, Lines: 2},
		},
		{
			name: "Origin other with URL",
			text: "Subject: x\nOrigin: other, https://lists.example.org/msg/1\n",
			want: Header{Subject: "x", Origin: Origin{Kind: "other", URL: "https://lists.example.org/msg/1", Source: "Origin", Line: 2}, Lines: 2},
		},
		{
			name: "Origin without kind",
			text: "Subject: x\nOrigin: https://github.com/o/r/commit/" + sha1a + "\n",
			want: Header{Subject: "x", Origin: Origin{URL: "https://github.com/o/r/commit/" + sha1a, Commit: sha1a, Source: "Origin", Line: 2}, Lines: 2},
		},
		{
			name: "Origin upstream without commit is not an error",
			text: "Subject: x\nOrigin: upstream\n",
			want: Header{Subject: "x", Origin: Origin{Kind: "upstream", Source: "Origin", Line: 2}, Lines: 2},
		},
		{
			name: "Origin upstream without commit takes the cherry-pick line",
			text: "Subject: x\nOrigin: upstream, https://github.com/o/r/pull/5\n\nbody\n(cherry picked from commit " + sha1a + ")\n",
			want: Header{Subject: "x", Description: "body\n(cherry picked from commit " + sha1a + ")",
				Origin: Origin{Kind: "upstream", URL: "https://github.com/o/r/pull/5", Commit: sha1a, Source: "cherry-picked", Line: 5}, Lines: 5},
		},
		{
			name: "Origin vendor ignores other dialects",
			text: "Subject: x\nOrigin: vendor, Debian\n(cherry picked from commit " + sha1a + ")\n",
			want: Header{Subject: "x", Description: "(cherry picked from commit " + sha1a + ")", Origin: Origin{Kind: "vendor", Source: "Origin", Line: 2}, Lines: 3},
		},
		{
			name: "Backport-of",
			text: "Subject: x\nBackport-of: " + sha1b + "\n",
			want: Header{Subject: "x", Origin: Origin{Kind: "backport", Commit: sha1b, Source: "Backport-of", Line: 2}, Lines: 2},
		},
		{
			name: "cherry picked anywhere",
			text: "Fix the thing.\n\nSigned-off-by: A <a@example.com>\n(cherry picked from commit " + sha1a + ")\n",
			want: Header{Description: "Fix the thing.\n\n(cherry picked from commit " + sha1a + ")", Origin: Origin{Kind: "backport", Commit: sha1a, Source: "cherry-picked", Line: 4}, Lines: 4},
		},
		{
			name: "Linux stable commit upstream",
			text: "Subject: x\n\ncommit " + sha1a + " upstream.\n\nThe fix.\n",
			want: Header{Subject: "x", Description: "commit " + sha1a + " upstream.\n\nThe fix.", Origin: Origin{Kind: "backport", Commit: sha1a, Source: "commit-upstream", Line: 3}, Lines: 5},
		},
		{
			name: "Linux stable upstream commit bracket",
			text: "Subject: x\n\n[ Upstream commit " + sha1b + " ]\n",
			want: Header{Subject: "x", Description: "[ Upstream commit " + sha1b + " ]", Origin: Origin{Kind: "backport", Commit: sha1b, Source: "commit-upstream", Line: 3}, Lines: 3},
		},
		{
			name: "Upstream-Status Backport",
			text: "Subject: x\nUpstream-Status: Backport [https://github.com/o/r/commit/" + sha1a + "]\n",
			want: Header{Subject: "x", Origin: Origin{Kind: "backport", URL: "https://github.com/o/r/commit/" + sha1a, Commit: sha1a, Source: "Upstream-Status", Line: 2}, Lines: 2},
		},
		{
			name: "Upstream-Status Pending is no origin",
			text: "Subject: x\nUpstream-Status: Pending\n",
			want: Header{Subject: "x", Lines: 2},
		},
		{
			name: "first dialect that names a commit wins",
			text: "Subject: x\nUpstream-Status: Backport\nBackport-of: " + sha1b + "\n(cherry picked from commit " + sha1a + ")\n",
			want: Header{Subject: "x", Description: "(cherry picked from commit " + sha1a + ")", Origin: Origin{Kind: "backport", Commit: sha1b, Source: "Backport-of", Line: 3}, Lines: 4},
		},
		{
			name: "Test several times and several names",
			text: "Subject: x\nTest: TestA, TestB TestC/sub_case\nTest: TestD,\n TestE\n",
			want: Header{Subject: "x", Tests: []string{"TestA", "TestB", "TestC/sub_case", "TestD", "TestE"}, Lines: 4},
		},
		{
			name: "Bug and Bug-vendor, other fields kept",
			text: "Subject: x\nBug: https://b/1\nBug-Debian: https://bugs.debian.org/2\nReviewed-by: R <r@example.com>\nAcked-by: S\n",
			want: Header{Subject: "x", Bug: []string{"https://b/1", "https://bugs.debian.org/2"}, Lines: 5, Fields: []Field{
				{Key: "Subject", Value: "x", Line: 1},
				{Key: "Bug", Value: "https://b/1", Line: 2},
				{Key: "Bug-Debian", Value: "https://bugs.debian.org/2", Line: 3},
				{Key: "Reviewed-by", Value: "R <r@example.com>", Line: 4},
				{Key: "Acked-by", Value: "S", Line: 5},
			}},
		},
		{
			name: "fields in a later paragraph and in free text",
			text: "Some free text first.\nTest: TestInText\nnot: a field here\n\nOrigin: upstream, " + sha1a[:7] + "\n",
			want: Header{Description: "Some free text first.\nnot: a field here", Tests: []string{"TestInText"},
				Origin: Origin{Kind: "upstream", Commit: sha1a[:7], Source: "Origin", Line: 5}, Lines: 5},
		},
		{
			name: "three dashes end the fields",
			text: "Subject: x\n---\nTest: NotMine\n",
			want: Header{Subject: "x", Lines: 3},
		},
		{
			name: "CRLF",
			text: "Subject: crlf\r\nTest: TestX\r\n",
			want: Header{Subject: "crlf", Tests: []string{"TestX"}, Lines: 2},
		},
		{
			name: "no final newline",
			text: "Subject: x",
			want: Header{Subject: "x", Lines: 1},
		},
		{
			name: "empty",
			text: "",
			want: Header{},
		},
		{
			name: "mbox from git format-patch",
			text: "From " + sha1b + " Mon Sep 17 00:00:00 2001\n" +
				"From: Jane Doe <jane@example.com>\n" +
				"Date: Tue, 14 Nov 2023 22:13:20 +0000\n" +
				"Subject: [PATCH v2 1/3] controller: requeue the migration while the\n" +
				" target pod is pending\n" +
				"\n" +
				"The body explains.\n" +
				"\n" +
				"Test: TestRetry\n" +
				"Signed-off-by: Jane Doe <jane@example.com>\n" +
				"(cherry picked from commit " + sha1a + ")\n" +
				"---\n" +
				" pkg/a.go | 2 +-\n" +
				" 1 file changed, 1 insertion(+), 1 deletion(-)\n" +
				"\n",
			want: Header{
				Subject:     "controller: requeue the migration while the target pod is pending",
				Description: "The body explains.\n\n(cherry picked from commit " + sha1a + ")",
				Author:      "Jane Doe <jane@example.com>",
				Tests:       []string{"TestRetry"},
				Origin:      Origin{Kind: "backport", Commit: sha1a, Source: "cherry-picked", Line: 11},
				Lines:       15,
				Fields: []Field{
					{Key: "From", Value: "Jane Doe <jane@example.com>", Line: 2},
					{Key: "Date", Value: "Tue, 14 Nov 2023 22:13:20 +0000", Line: 3},
					{Key: "Subject", Value: "[PATCH v2 1/3] controller: requeue the migration while the\ntarget pod is pending", Line: 4},
					{Key: "Test", Value: "TestRetry", Line: 9},
					{Key: "Signed-off-by", Value: "Jane Doe <jane@example.com>", Line: 10},
				},
			},
		},
		{
			name: "Subject keeps a non-PATCH tag",
			text: "Subject: [PATCH] [kubevirt] fix\n",
			want: Header{Subject: "[kubevirt] fix", Lines: 1},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseHeader([]byte(c.text), "p.diff")
			if err != nil {
				t.Fatalf("ParseHeader() error = %v", err)
			}
			if c.want.Fields == nil {
				got.Fields = nil
			}
			if c.want.Origins == nil {
				// One origin at most: Origins is Origin when it names a change.
				if len(got.Origins) > 1 || len(got.Origins) == 1 && got.Origins[0] != got.Origin {
					t.Errorf("ParseHeader() Origins = %+v, Origin = %+v", got.Origins, got.Origin)
				}
				got.Origins = nil
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("ParseHeader() =\n%#v\nwant\n%#v", got, c.want)
			}
		})
	}
}

func TestParseHeaderErrors(t *testing.T) {
	cases := []struct {
		name, text string
		line       int
		msg        string // a part of the message
	}{
		{"NUL", "Subject: x\nBug: a\x00b\n", 2, "NUL"},
		{"invalid UTF-8", "Subject: x\n\nok\nbad \xff\xfe\n", 4, "UTF-8"},
		{"unknown Origin kind", "Subject: x\nOrigin: downstream, " + sha1a + "\n", 2, `unknown Origin kind "downstream"`},
		{"unknown Origin word", "Subject: x\nOrigin: bogus\n", 2, `unknown Origin kind "bogus"`},
		{"empty Origin", "Subject: x\n\nOrigin:\n", 3, "Origin is empty"},
		{"Origin twice", "Origin: vendor\nSubject: x\nOrigin: upstream, " + sha1a + "\n", 3, "first on line 1"},
		{"empty Applied-Upstream", "Subject: x\nApplied-Upstream:   \n", 2, "Applied-Upstream is empty"},
		{"empty Test", "Subject: x\nTest: ,\n", 2, "Test names no test"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseHeader([]byte(c.text), "patches/k/0001-x.diff")
			var ie *diag.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("ParseHeader() error = %v, want *diag.InputError", err)
			}
			if ie.File != "patches/k/0001-x.diff" || ie.Line != c.line || !strings.Contains(ie.Msg, c.msg) {
				t.Errorf("ParseHeader() error = %q (line %d), want line %d and %q", err, ie.Line, c.line, c.msg)
			}
			if !strings.HasPrefix(err.Error(), "patches/k/0001-x.diff:") {
				t.Errorf("ParseHeader() error = %q, want it to start with file:line", err)
			}
		})
	}
}

// TestParseFormatPatch parses what git format-patch writes for a commit made
// with `git cherry-pick -x`.
func TestParseFormatPatch(t *testing.T) {
	r := gittest.New(t)
	r.Write("f.go", "package f\n")
	r.Commit("base")
	r.Write("f.go", "package f\n\nvar X = 1\n")
	up := r.Commit("f: add X\n\nA longer explanation\nthat wraps.\n\nTest: TestX, TestY")
	r.Git("checkout", "-q", "-b", "rel", "HEAD~1")
	r.Git("cherry-pick", "-x", up)
	mail := r.Git("format-patch", "-1", "--stdout", "--subject-prefix=PATCH v3") + "\n"

	p, err := Parse("patches/k/0001-f-add-X.patch", []byte(mail))
	if err != nil {
		t.Fatalf("Parse() error = %v", err)
	}
	h := p.Header
	if h.Subject != "f: add X" {
		t.Errorf("Subject = %q, want %q", h.Subject, "f: add X")
	}
	if h.Author != "Test Author <author@example.com>" {
		t.Errorf("Author = %q, want the commit author", h.Author)
	}
	if h.Origin.Commit != up || h.Origin.Kind != "backport" || h.Origin.Source != "cherry-picked" {
		t.Errorf("Origin = %+v, want backport %s from cherry-picked", h.Origin, up)
	}
	if want := []string{"TestX", "TestY"}; !reflect.DeepEqual(h.Tests, want) {
		t.Errorf("Tests = %q, want %q", h.Tests, want)
	}
	if want := "A longer explanation\nthat wraps.\n\n(cherry picked from commit " + up + ")"; h.Description != want {
		t.Errorf("Description = %q", h.Description)
	}
	want := gitPatchID(t, r.Dir, []byte(r.Show(up)))
	if p.PatchID != want {
		t.Errorf("PatchID = %s, want %s (upstream commit's)", p.PatchID, want)
	}
}
