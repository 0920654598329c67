package backport

import (
	"strings"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/series"
)

func TestParseForge(t *testing.T) {
	tests := []struct {
		in             string
		kind, base     string
		owner, repo    string
		commit, issue7 string
	}{
		{in: "https://github.com/kubeovn/kube-ovn", kind: "github", base: "https://github.com/kubeovn/kube-ovn", owner: "kubeovn", repo: "kube-ovn",
			commit: "https://github.com/kubeovn/kube-ovn/commit/abc", issue7: "https://github.com/kubeovn/kube-ovn/issues/7"},
		{in: "https://user:token@github.com/kubeovn/kube-ovn.git/", kind: "github", base: "https://github.com/kubeovn/kube-ovn", owner: "kubeovn", repo: "kube-ovn",
			commit: "https://github.com/kubeovn/kube-ovn/commit/abc", issue7: "https://github.com/kubeovn/kube-ovn/issues/7"},
		{in: "git@github.com:kubeovn/kube-ovn.git", kind: "github", base: "https://github.com/kubeovn/kube-ovn", owner: "kubeovn", repo: "kube-ovn",
			commit: "https://github.com/kubeovn/kube-ovn/commit/abc", issue7: "https://github.com/kubeovn/kube-ovn/issues/7"},
		{in: "https://gitlab.com/group/sub/project.git", kind: "gitlab", base: "https://gitlab.com/group/sub/project", owner: "group/sub", repo: "project",
			commit: "https://gitlab.com/group/sub/project/-/commit/abc", issue7: "https://gitlab.com/group/sub/project/-/issues/7"},
		{in: "file:///srv/git/project"},
		{in: "https://git.example.com/project"},
		{in: "https://github.com/only"},
	}
	for _, tt := range tests {
		f, ok := ParseForge(tt.in)
		if ok != (tt.kind != "") || f.Kind != tt.kind || f.Base != tt.base || f.Owner != tt.owner || f.Repo != tt.repo {
			t.Errorf("ParseForge(%q) = %+v, %v; want kind %q base %q", tt.in, f, ok, tt.kind, tt.base)
			continue
		}
		if !ok {
			continue
		}
		if got := f.CommitURL("abc"); got != tt.commit {
			t.Errorf("CommitURL() = %q, want %q", got, tt.commit)
		}
		if got := f.IssueURL("", 7); got != tt.issue7 {
			t.Errorf("IssueURL() = %q, want %q", got, tt.issue7)
		}
	}
}

func TestBugs(t *testing.T) {
	gh, _ := ParseForge("https://github.com/acme/widget")
	gl, _ := ParseForge("https://gitlab.com/acme/widget")
	tests := []struct {
		name string
		msg  string
		f    Forge
		ok   bool
		want []string
	}{
		{name: "fixes", msg: "fix it\n\nFixes #123", f: gh, ok: true, want: []string{"https://github.com/acme/widget/issues/123"}},
		{name: "list", msg: "Closes: #1, #2 and #3.\nResolves other/repo#4", f: gh, ok: true, want: []string{
			"https://github.com/acme/widget/issues/1", "https://github.com/acme/widget/issues/2",
			"https://github.com/acme/widget/issues/3", "https://github.com/other/repo/issues/4"}},
		{name: "full URL and repeat", msg: "See https://github.com/kubeovn/kube-ovn/issues/6823.\nFixes https://github.com/kubeovn/kube-ovn/issues/6823", f: gh, ok: true,
			want: []string{"https://github.com/kubeovn/kube-ovn/issues/6823"}},
		{name: "squash PR number is no bug", msg: "fix it (#99)\n\nSigned-off-by: x", f: gh, ok: true},
		{name: "gitlab", msg: "Closes #5", f: gl, ok: true, want: []string{"https://gitlab.com/acme/widget/-/issues/5"}},
		{name: "no forge keeps URLs only", msg: "Fixes #5\nBug: https://bugs.example.com/x/issues/9", want: []string{"https://bugs.example.com/x/issues/9"}},
	}
	for _, tt := range tests {
		got := Bugs(tt.msg, tt.f, tt.ok)
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%s: Bugs() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestSlug(t *testing.T) {
	tests := map[string]string{
		"fix: retry scheduling": "fix-retry-scheduling",
		"  [controller] Requeue VMI migration while the target pod is not scheduled yet": "controller-requeue-vmi-migration-while-the-target",
		"!!!": "",
	}
	for in, want := range tests {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNextName(t *testing.T) {
	tests := []struct {
		name      string
		existing  []string
		slug      string
		reference bool
		want      string
		wantErr   string
	}{
		{name: "empty series", slug: "fix", want: "0001-fix.diff"},
		{name: "next number", existing: []string{"0001-a.diff", "0002-b.patch"}, slug: "fix", want: "0003-fix.diff"},
		{name: "gaps", existing: []string{"0001-a.diff", "0007-b.ref.diff"}, slug: "fix", reference: true, want: "0008-fix.ref.diff"},
		{name: "wide numbers", existing: []string{"00010-a.diff"}, slug: "fix.diff", want: "00011-fix.diff"},
		{name: "unnumbered last", existing: []string{"0001-a.diff", "zz-local.patch"}, slug: "fix", wantErr: "would sort before zz-local.patch"},
		{name: "digit overflow", existing: []string{"9999-a.diff"}, slug: "fix", wantErr: "would sort before 9999-a.diff"},
		{name: "bad slug", slug: "../evil", wantErr: "want a file name part"},
	}
	for _, tt := range tests {
		got, err := NextName(tt.existing, tt.slug, tt.reference)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: NextName() = %q, %v; want error %q", tt.name, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: NextName() = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}

func TestFormat(t *testing.T) {
	const id = "635da9cc59aacfe868fd8b43ddccac9c47a9b7a3"
	cm := &Commit{ID: id, Subject: "fix: retry", Author: "A U Thor <a@example.com>", AuthorDate: time.Unix(0, 0),
		Body: "Origin: this line would be a field\n---\ndiff --git a/x b/x\n(cherry picked from commit 1111111111111111111111111111111111111111)\n\nFixes #12"}
	h := NewHeader(cm, "https://github.com/acme/widget")
	out, err := Format(h, id, []byte(diffF))
	if err != nil {
		t.Fatalf("Format() = %v", err)
	}
	p, err := series.Parse("x.diff", out)
	if err != nil {
		t.Fatal(err)
	}
	hd := p.Header
	if hd.Subject != "fix: retry" || hd.Origin.Kind != "upstream" || hd.Origin.Commit != id ||
		hd.Origin.URL != "https://github.com/acme/widget/commit/"+id || strings.Join(hd.Bug, " ") != "https://github.com/acme/widget/issues/12" ||
		hd.Author != "A U Thor <a@example.com>" {
		t.Errorf("header = %+v", hd)
	}
	if string(p.Diff()) != diffF {
		t.Errorf("Diff() = %q, want the commit's diff", p.Diff())
	}
	if !strings.Contains(hd.Description, "Origin: this line would be a field") {
		t.Errorf("Description = %q, want the body", hd.Description)
	}

	// Without a forge, the Origin is the id.
	h = NewHeader(cm, "file:///srv/upstream")
	if h.Origin != "upstream, "+id || len(h.Bugs) != 0 {
		t.Errorf("NewHeader(file URL) = %+v", h)
	}
}
