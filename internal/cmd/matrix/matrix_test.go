package matrix_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/cmd/cmdtest"
	"github.com/patchkit/patchkit/internal/cmd/root"
	"github.com/patchkit/patchkit/internal/gittest"
)

// repo makes a repository with units alpha and beta, which the root
// Makefile's build: target builds, and orphan, which nothing builds.
func repo(t *testing.T, orphan bool) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"Makefile": "build:\n\t$(MAKE) image IMAGE=alpha\n\tmake image IMAGE=beta\n\nimage:\n\tpatchkit build $(IMAGE)\n",
	}
	units := []string{"alpha", "beta"}
	if orphan {
		units = append(units, "orphan")
	}
	for _, u := range units {
		files["images/"+u+"/patchkit.yaml"] = "upstream:\n  url: file:///u\n  ref: v1\npatches: patches/" + u + "\n"
	}
	gittest.WriteFiles(t, dir, files)
	return dir
}

func matrix(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return cmdtest.RunAll(t, root.NewCmdRoot, args...)
}

// TestMatrixFormats: every format -o names is honoured. text (the
// default), json and github print the one-line JSON array CI reads;
// markdown lists the paths and the units nothing builds.
func TestMatrixFormats(t *testing.T) {
	dir := repo(t, false)
	const line = `["images/alpha","images/beta"]` + "\n"
	for _, o := range [][]string{nil, {"-o", "text"}, {"-o", "json"}, {"-o", "github"}} {
		code, out, stderr := matrix(t, append(append([]string{"--root", dir}, o...), "matrix", "FULL")...)
		if code != 0 || out != line {
			t.Errorf("%v matrix FULL: exit %d, %q (stderr %q); want 0 and %q", o, code, out, stderr, line)
		}
	}
	code, out, stderr := matrix(t, "--root", dir, "-o", "markdown", "matrix", "FULL")
	want := "### patchkit matrix: 2 to build\n\n- `images/alpha`\n- `images/beta`\n"
	if code != 0 || out != want {
		t.Errorf("-o markdown matrix FULL: exit %d, %q (stderr %q); want 0 and %q", code, out, stderr, want)
	}

	dir = repo(t, true)
	code, out, _ = matrix(t, "--root", dir, "-o", "markdown", "matrix", "FULL")
	want = "### patchkit matrix: 2 to build\n\n- `images/alpha`\n- `images/beta`\n\n" +
		"#### ❌ Selected, but nothing in `Makefile` builds them\n\n- `images/orphan` (selected by `FULL`): add `$(MAKE) image IMAGE=orphan`\n"
	if code != 1 || out != want {
		t.Errorf("-o markdown matrix FULL with an unbuilt unit: exit %d, %q; want 1 and %q", code, out, want)
	}
	changed := filepath.Join(t.TempDir(), "changed.txt")
	gittest.WriteFiles(t, filepath.Dir(changed), map[string]string{"changed.txt": "README.md\n"})
	code, out, _ = matrix(t, "--root", dir, "-o", "markdown", "matrix", changed)
	if want := "### patchkit matrix: nothing to build\n"; code != 0 || out != want {
		t.Errorf("-o markdown matrix for an unrelated change: exit %d, %q; want 0 and %q", code, out, want)
	}
}

// TestMatrixRefusesOtherFormats: a format matrix does not know is exit 2
// before anything is read: the root that does not exist is not the error.
func TestMatrixRefusesOtherFormats(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-root")
	code, out, stderr := matrix(t, "--root", missing, "-o", "html", "matrix", "FULL")
	if code != 2 || !strings.Contains(stderr, "-o") || strings.Contains(stderr, "no-such-root") || out != "" {
		t.Errorf("-o html matrix: exit %d, stdout %q, stderr %q; want exit 2 naming -o, nothing else", code, out, stderr)
	}
}
