package verify

import (
	"context"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/pipeline"
)

// TestCanonicalCheck: a patch as git diff writes it (7-hex index, function
// context) warns; the canonical text passes.
func TestCanonicalCheck(t *testing.T) {
	up := gittest.New(t)
	up.Write("a.c", "int f(void)\n{\n\tint a;\n\tint b;\n\tint c;\n\treturn 0;\n}\n")
	up.Release("initial", "v1.0.0")
	up.Write("a.c", "int f(void)\n{\n\tint a;\n\tint b;\n\tint c;\n\treturn 1;\n}\n")
	newID, _, err := up.GitIn([]byte(up.Read("a.c")), "hash-object", "--stdin")
	if err != nil {
		t.Fatal(err)
	}
	gitDiff := "Subject: one\n\n" + up.Git("diff") + "\n"
	up.Git("checkout", "-q", "--", "a.c")
	canonical := "Subject: one\n\ndiff --git a/a.c b/a.c\nindex " + up.Git("rev-parse", "--short=12", "v1.0.0:a.c") + ".." + newID[:12] + " 100644\n--- a/a.c\n+++ b/a.c\n@@ -3,5 +3,5 @@\n \tint a;\n \tint b;\n \tint c;\n-\treturn 0;\n+\treturn 1;\n }\n"
	// another patch, canonical: patchkit wrote the series
	bID, _, err := up.GitIn([]byte("b\n"), "hash-object", "--stdin")
	if err != nil {
		t.Fatal(err)
	}
	other := "Subject: two\n\ndiff --git a/b.txt b/b.txt\nnew file mode 100644\nindex 000000000000.." + bID[:12] + "\n--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+b\n"
	tests := []struct {
		name, text, other, series, want string
	}{
		{"git diff, in a series patchkit wrote", gitDiff, other, "patches/img", StatusWarn},
		{"canonical", canonical, "", "patches/img", StatusPass},
		{"git diff, in a series patchkit did not write", gitDiff, "", "patches/img", StatusSkip},
		{"git diff, opted in", gitDiff, "", "{dir: patches/img, canonical: true}", StatusWarn},
		{"git diff, opted out", gitDiff, other, "{dir: patches/img, canonical: false}", StatusSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{
				"images/img/patchkit.yaml":  "upstream:\n  url: " + up.URL() + "\n  ref: v1.0.0\npatches: " + tt.series + "\n",
				"patches/img/0001-one.diff": tt.text,
			}
			if tt.other != "" {
				files["patches/img/0002-two.diff"] = tt.other
			}
			res := verifyFiles(t, files)
			got := ""
			for _, c := range res.Checks {
				if c.Check == CheckCanonical && strings.HasSuffix(c.Patch, "0001-one.diff") {
					got = c.Status
				}
			}
			if got != tt.want {
				t.Errorf("canonical check = %q, want %q\n%s", got, tt.want, tt.text)
			}
		})
	}
}

// TestCanonicalCheckSkipsBackports: a patch naming its upstream commit keeps
// upstream's text.
func TestCanonicalCheckSkipsBackports(t *testing.T) {
	up := gittest.New(t)
	up.Write("a.txt", "a\nb\n")
	up.Release("initial", "v1.0.0")
	up.Write("a.txt", "a\nB\n")
	fix := up.Commit("fix")
	text := "Subject: fix\nOrigin: upstream, " + fix + "\n\n" + up.Show(fix)
	res := verifyFiles(t, map[string]string{
		"images/img/patchkit.yaml":  "upstream:\n  url: " + up.URL() + "\n  ref: v1.0.0\npatches: patches/img\n",
		"patches/img/0001-fix.diff": text,
	})
	for _, c := range res.Checks {
		if c.Check == CheckCanonical && c.Status != StatusSkip {
			t.Errorf("canonical check on a backport = %s: %s, want skip", c.Status, c.Message)
		}
	}
}

// verifyFiles writes files into a new repository and verifies its image img.
func verifyFiles(t *testing.T, files map[string]string) *Result {
	t.Helper()
	root := t.TempDir()
	gittest.WriteFiles(t, root, files)
	res, err := Image(context.Background(), pipeline.Env{Root: root, CacheDir: t.TempDir()}, "img")
	if err != nil {
		t.Fatalf("Image() = %v", err)
	}
	return res
}
