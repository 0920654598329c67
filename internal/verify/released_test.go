package verify

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/pipeline"
)

// fakeScanner answers from a table: carried[ref] for every patch.
type fakeScanner struct {
	carried map[string]bool
	err     error
	asked   []string
}

func (f *fakeScanner) Scan(_ context.Context, im *pipeline.Image, refs []string) ([][]Carry, error) {
	f.asked = refs
	if f.err != nil {
		return nil, f.err
	}
	out := make([][]Carry, len(im.Patches))
	for i := range out {
		for _, r := range refs {
			c := Carry{Status: "applies", Evidence: "applies cleanly"}
			if f.carried[r] {
				c = Carry{Carried: true, Status: "present", Evidence: "reverse-applies cleanly", Commit: "0123456789abcdef0123456789abcdef01234567"}
			}
			out[i] = append(out[i], c)
		}
	}
	return out, nil
}

// TestAppliedUpstreamLogic checks the applied-upstream check through the
// ReleaseScanner interface: which refs it asks for and how it reads the
// answers.
func TestAppliedUpstreamLogic(t *testing.T) {
	up := gittest.New(t)
	up.Write("a.txt", "a\n")
	up.Commit("initial")
	for _, tag := range []string{"v1.0.0", "v1.1.0", "v1.2.0", "v1.10.0", "v2.0.0-rc.1", "nightly"} {
		up.Tag(tag)
	}
	root, cache := t.TempDir(), t.TempDir()
	write := func(path, content string) { gittest.WriteFiles(t, root, map[string]string{path: content}) }
	write("images/img/patchkit.yaml", "upstream:\n  url: "+up.URL()+"\n  ref: v1.0.0\n  releases: \"v*\"\npatches: patches/img\n")
	patch := func(note string) string {
		return "Subject: b\nOrigin: vendor\nForwarded: no\nApplied-Upstream: " + note + "\n\n" +
			"diff --git a/b.txt b/b.txt\nnew file mode 100644\n--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+b\n"
	}
	tests := []struct {
		name    string
		note    string
		carried []string
		err     error
		status  string
		msg     string
		asked   string
	}{
		{name: "holds", note: "v1.2.0", carried: []string{"v1.2.0", "v1.10.0"}, status: StatusPass,
			msg:   "v1.2.0 carries the change (present: reverse-applies cleanly: commit 0123456789ab) and v1.1.0, the release before it, does not (applies)",
			asked: "v1.1.0 v1.2.0 v1.10.0 v2.0.0-rc.1"},
		{name: "semver order, not name order", note: "v1.10.0", carried: []string{"v1.10.0"}, status: StatusPass,
			msg: "and v1.2.0, the release before it, does not"},
		{name: "too early", note: "v1.1.0", carried: []string{"v1.2.0"}, status: StatusFail,
			msg: "v1.1.0 does not carry the change (applies cleanly); the first release that carries it is v1.2.0"},
		{name: "too late", note: "v1.10.0", carried: []string{"v1.1.0", "v1.2.0", "v1.10.0"}, status: StatusFail,
			msg: "v1.2.0, the release before it, already carries the change (present: reverse-applies cleanly: commit 0123456789ab); the first release that carries it is v1.1.0"},
		{name: "nothing carries it", note: "v1.2.0", status: StatusFail, msg: "no release after the pin carries it"},
		{name: "the first release", note: "v1.0.0", carried: []string{"v1.0.0"}, status: StatusPass, msg: "v1.0.0 carries the change",
			asked: "v1.0.0 v1.1.0 v1.2.0 v1.10.0 v2.0.0-rc.1"},
		{name: "a tag that is no release", note: "nightly", status: StatusFail, msg: "nightly is a tag, but not a release"},
		{name: "no such release", note: "v3.0.0", status: StatusFail, msg: "upstream has no release v3.0.0"},
		{name: "the scan fails", note: "v1.2.0", err: errors.New("boom"), status: StatusFail, msg: "not checked: scanning the releases: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			write("patches/img/0001-b.diff", patch(tt.note))
			sc := &fakeScanner{carried: map[string]bool{}, err: tt.err}
			for _, r := range tt.carried {
				sc.carried[r] = true
			}
			res, err := Image(context.Background(), pipeline.Env{Root: root, CacheDir: cache}, "img", WithScanner(sc))
			if err != nil {
				t.Fatalf("Image() = %v", err)
			}
			var got *Check
			for i, c := range res.Checks {
				if c.Check == CheckAppliedUpstream {
					got = &res.Checks[i]
				}
			}
			if got == nil || got.Status != tt.status || !strings.Contains(got.Message, tt.msg) || got.Line != 4 {
				t.Fatalf("applied-upstream = %+v, want %s containing %q on line 4", got, tt.status, tt.msg)
			}
			if res.OK != (tt.status != StatusFail) {
				t.Errorf("OK = %v", res.OK)
			}
			if tt.asked != "" && strings.Join(sc.asked, " ") != tt.asked {
				t.Errorf("refs scanned = %v, want %s", sc.asked, tt.asked)
			}
		})
	}

	// Without a note, the scanner is not asked.
	write("patches/img/0001-b.diff", strings.Replace(patch("x"), "Applied-Upstream: x\n", "", 1))
	sc := &fakeScanner{}
	if _, err := Image(context.Background(), pipeline.Env{Root: root, CacheDir: cache}, "img", WithScanner(sc)); err != nil || sc.asked != nil {
		t.Errorf("Image() without notes: %v, scanned %v", err, sc.asked)
	}
	if !slices.Equal(Checks, []string{"apply", "whitespace", "header", "backport", "applied-upstream", "test", "unit", "pin", "dockerfile", "canonical", "gomod", "versions"}) {
		t.Errorf("Checks = %v", Checks)
	}
}
