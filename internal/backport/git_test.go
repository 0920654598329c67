package backport

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/upstream"
)

// upstreamRepo is v1.0.0, a commit that prepends lines, and a fix with a
// rename and a binary file, tagged v1.1.0.
func upstreamRepo(t *testing.T) (r *gittest.Repo, fix string) {
	t.Helper()
	r = gittest.New(t)
	r.Write("a.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n")
	r.Write("old/name.txt", "moved\n")
	r.Release("initial", "v1.0.0")
	r.Write("a.txt", "top\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n")
	r.Commit("top")
	r.Write("a.txt", "top\n1\n2\nthree\n4\n5\n6\n7\neight\n9\n10\n")
	r.Remove("old/name.txt")
	r.Write("new/name.txt", "moved\n")
	r.Write("img.bin", "\x00\x01\x02binary\x00")
	fix = r.Release("fix: three and eight\n\nFixes #12", "v1.1.0")
	return r, fix
}

func openCache(t *testing.T, url string, offline bool) *upstream.Cache {
	t.Helper()
	c, err := upstream.Open(context.Background(), t.TempDir(), url, upstream.WithOffline(offline))
	if err != nil {
		t.Fatalf("upstream.Open() = %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestShowAndResolve(t *testing.T) {
	ctx := context.Background()
	r, fix := upstreamRepo(t)
	c := openCache(t, r.URL(), false)

	// The oracle: git show and git patch-id in the upstream itself.
	want := r.Git("show", "--format=", "--binary", fix) + "\n"
	got, err := Show(ctx, c, fix)
	if err != nil {
		t.Fatalf("Show() = %v", err)
	}
	if string(got) != want {
		t.Errorf("Show() =\n%s\nwant (git show)\n%s", got, want)
	}
	pidOut, _, err := r.GitIn([]byte(want), "patch-id", "--stable")
	if err != nil {
		t.Fatal(err)
	}
	pid, err := series.PatchID(got)
	if err != nil || pid != strings.Fields(pidOut)[0] {
		t.Errorf("PatchID(Show()) = %s, %v; git patch-id --stable says %s", pid, err, pidOut)
	}

	tests := []struct {
		rev     string
		want    string
		wantErr error
	}{
		{rev: fix, want: fix},
		{rev: fix[:9], want: fix},
		{rev: strings.ToUpper(fix[:10]), want: fix},
		{rev: "v1.1.0", want: fix},
		{rev: "0123456789012345678901234567890123456789", wantErr: ErrUnknownCommit},
		{rev: "0123abc", wantErr: ErrUnknownCommit},
		{rev: "no-such-branch", wantErr: ErrUnknownCommit},
	}
	for _, tt := range tests {
		got, err := ResolveCommit(ctx, c, tt.rev)
		if got != tt.want || !errors.Is(err, tt.wantErr) {
			t.Errorf("ResolveCommit(%q) = %q, %v; want %q, %v", tt.rev, got, err, tt.want, tt.wantErr)
		}
	}
	if _, err := ResolveCommit(ctx, c, "--output=/tmp/x"); err == nil {
		t.Errorf("ResolveCommit(option) = nil error")
	}

	// A commit pushed later is fetched: by id, and by abbreviation.
	r.Write("later.txt", "later\n")
	later := r.Commit("later")
	if got, err := ResolveCommit(ctx, c, later[:10]); err != nil || got != later {
		t.Errorf("ResolveCommit(new commit) = %q, %v; want %s", got, err, later)
	}
	// Offline, a commit the cache lacks says so.
	dir := t.TempDir()
	first, err := upstream.Open(ctx, dir, r.URL())
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	r.Write("later.txt", "later2\n")
	later2 := r.Commit("later2")
	offline, err := upstream.Open(ctx, dir, r.URL(), upstream.WithOffline(true))
	if err != nil {
		t.Fatal(err)
	}
	defer offline.Close()
	if _, err := ResolveCommit(ctx, offline, later2); !errors.Is(err, upstream.ErrOffline) {
		t.Errorf("ResolveCommit(offline, missing) = %v, want ErrOffline", err)
	}

	cm, err := ReadCommit(c, fix)
	if err != nil || cm.Subject != "fix: three and eight" || cm.Body != "Fixes #12" || len(cm.Parents) != 1 || cm.Author != "Test Author <author@example.com>" {
		t.Errorf("ReadCommit() = %+v, %v", cm, err)
	}
	pin, _ := c.Resolve("v1.0.0")
	if ok, err := IsAncestor(ctx, c, pin, fix); !ok || err != nil {
		t.Errorf("IsAncestor(pin, fix) = %v, %v", ok, err)
	}
	if ok, err := IsAncestor(ctx, c, fix, pin); ok || err != nil {
		t.Errorf("IsAncestor(fix, pin) = %v, %v", ok, err)
	}
}

func TestNewPlanAndWrite(t *testing.T) {
	ctx := context.Background()
	r, fix := upstreamRepo(t)
	c := openCache(t, r.URL(), false)
	pin, _ := c.Resolve("v1.0.0")
	dir := t.TempDir()
	req := Request{Cache: c, RepoURL: "https://github.com/acme/widget", Display: "patches/img", Rev: fix[:8], PinCommit: pin}

	plan, err := NewPlan(ctx, req)
	if err != nil {
		t.Fatalf("NewPlan() = %v", err)
	}
	if plan.Name != "0001-fix-three-and-eight.diff" || plan.Path != "patches/img/"+plan.Name || plan.Commit.ID != fix {
		t.Errorf("plan = %s %s %s", plan.Name, plan.Path, plan.Commit.ID)
	}
	if !strings.Contains(string(plan.Content), "Bug: https://github.com/acme/widget/issues/12\n") {
		t.Errorf("content lacks the Bug:\n%s", plan.Content)
	}
	if err := plan.Write(dir); err != nil {
		t.Fatalf("Write() = %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, plan.Name)); string(got) != string(plan.Content) {
		t.Errorf("written file differs from the plan")
	}
	if err := plan.Write(dir); !errors.Is(err, ErrBadRequest) {
		t.Errorf("Write() again = %v, want a refusal to replace it", err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}

	// The series now has it: the same commit again is refused.
	req.Existing = []*series.Patch{plan.Patch}
	if _, err := NewPlan(ctx, req); !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "already has commit") {
		t.Errorf("NewPlan(again) = %v, want the series to have it already", err)
	}
	// A commit the pin has is refused.
	req.Existing = nil
	req.Rev = "v1.0.0"
	if _, err := NewPlan(ctx, req); !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "pin already has") {
		t.Errorf("NewPlan(pin's commit) = %v", err)
	}
	req.Rev = "deadbeefdeadbeefdeadbeefdeadbeefdeadbeef"
	if _, err := NewPlan(ctx, req); !errors.Is(err, ErrBadRequest) || !errors.Is(err, ErrUnknownCommit) {
		t.Errorf("NewPlan(unknown) = %v", err)
	}

	// A reference: no diff text, and it materializes to the same patch.
	req.Rev, req.Reference, req.Slug = fix, true, "fix"
	ref, err := NewPlan(ctx, req)
	if err != nil {
		t.Fatalf("NewPlan(reference) = %v", err)
	}
	if ref.Name != "0001-fix.ref.diff" || strings.Contains(string(ref.Content), "diff --git") {
		t.Errorf("reference plan %s:\n%s", ref.Name, ref.Content)
	}
	if ref.Patch.PatchID != plan.Patch.PatchID || string(ref.Patch.Diff()) != string(plan.Patch.Diff()) {
		t.Errorf("materialized reference differs from the diff backport")
	}
}
