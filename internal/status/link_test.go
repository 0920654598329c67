package status

import (
	"context"
	"fmt"
	"testing"

	"github.com/patchkit/patchkit/internal/ghapi"
	"github.com/patchkit/patchkit/internal/obsolete"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
)

// fakeItems answers every PR as open and every issue as closed, and
// records what it was asked.
type fakeItems struct{ asked []string }

func (f *fakeItems) Item(_ context.Context, owner, repo string, n int, pr bool) (ghapi.Item, error) {
	f.asked = append(f.asked, fmt.Sprintf("%s/%s#%d pr=%v", owner, repo, n, pr))
	if pr {
		return ghapi.Item{Number: n, PR: true, State: "open", Title: "t"}, nil
	}
	return ghapi.Item{Number: n, State: "closed", Title: "t"}, nil
}

func TestLinkWithoutCommits(t *testing.T) {
	const diff = "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n"
	tests := []struct {
		name, header            string
		kind, state, url, asked string
		original                bool
	}{
		{"forwarded as an issue", "Origin: vendor\nForwarded: https://github.com/o/r/issues/4\n", "issue", "closed", "https://github.com/o/r/issues/4", "[o/r#4 pr=false]", true},
		{"forwarded as a PR", "Origin: vendor\nForwarded: https://github.com/o/r/pull/5\n", "pr", "open", "https://github.com/o/r/pull/5", "[o/r#5 pr=true]", true},
		{"forwarded to a list", "Origin: vendor\nForwarded: https://lists.example.org/msg/1\n", "pr", "unknown", "https://lists.example.org/msg/1", "[]", true},
		{"PR before Bug", "Origin: vendor\nForwarded: https://github.com/o/r/pull/5\nBug: https://github.com/o/r/issues/4\n", "pr", "open", "https://github.com/o/r/pull/5", "[o/r#5 pr=true]", true},
		{"only a bug", "Origin: vendor\nForwarded: no\nBug: https://github.com/o/r/issues/4\n", "issue", "closed", "https://github.com/o/r/issues/4", "[o/r#4 pr=false]", true},
		{"a bug elsewhere", "Origin: vendor\nBug: https://bugs.example.org/4\n", "none", "not-filed", "", "[]", true},
		{"not needed", "Origin: vendor\nForwarded: not-needed\n", "none", "not-needed", "", "[]", true},
		{"upstream PR by number", "Origin: upstream, #7\n", "pr", "open", "https://github.com/o/r/pull/7", "[o/r#7 pr=true]", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := series.Parse("p.diff", []byte("Subject: s\n"+tt.header+"\n"+diff))
			if err != nil {
				t.Fatal(err)
			}
			items := &fakeItems{}
			in := UnitInput{Spec: &spec.Spec{Upstream: spec.Upstream{URL: "https://github.com/o/r", Releases: "v*"}}}
			u, original := link(context.Background(), in, Options{GitHub: items}, p, &obsolete.PatchReport{})
			if u.Kind != tt.kind || u.State != tt.state || u.URL != tt.url || original != tt.original {
				t.Errorf("link() = %s %s %q original=%v, want %s %s %q %v (note %q)", u.Kind, u.State, u.URL, original, tt.kind, tt.state, tt.url, tt.original, u.Note)
			}
			if got := fmt.Sprint(items.asked); got != tt.asked {
				t.Errorf("asked GitHub %s, want %s", got, tt.asked)
			}
		})
	}
}

func TestMemo(t *testing.T) {
	f := &fakeItems{}
	m := Memo(f)
	for i := 0; i < 3; i++ {
		if it, err := m.Item(context.Background(), "o", "r", 5, true); err != nil || it.State != "open" {
			t.Fatalf("Item() = %v, %v", it, err)
		}
	}
	_, _ = m.Item(context.Background(), "o", "r", 5, false)
	if got := fmt.Sprint(f.asked); got != "[o/r#5 pr=true o/r#5 pr=false]" {
		t.Errorf("asked %s, want each item once", got)
	}
	if Memo(nil) != nil {
		t.Errorf("Memo(nil) is not nil: offline must stay offline")
	}
}
