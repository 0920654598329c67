package apply_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// TestApplyEKSDistroSlices replays real eks-distro patches that `git am`
// applies at their pins and that patchkit rejected as `git apply
// --whitespace=error` (testdata/gitam, see its README): with the recipe's
// tool, git-am, apply --check passes and --out writes git am's tree; with
// the default tool each fails as before.
func TestApplyEKSDistroSlices(t *testing.T) {
	cases := []struct {
		name        string
		defaultCode int    // apply --check with the default tool
		defaultSays string // in its output
	}{
		{name: "plugins-1-22-signature", defaultCode: 2, defaultSays: "goes on past"},
		{name: "plugins-1-27-whitespace", defaultCode: 1, defaultSays: "trailing whitespace."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := filepath.Join("testdata", "gitam", c.name)
			tag, err := os.ReadFile(filepath.Join(data, "GIT_TAG"))
			if err != nil {
				t.Fatal(err)
			}
			pin := strings.TrimSpace(string(tag))
			up := gittest.New(t)
			copyTree(t, filepath.Join(data, "upstream"), up.Dir)
			up.Release("upstream files at "+pin, pin)

			m := &mailSeries{up: up, root: t.TempDir(), cache: t.TempDir()}
			m.dir = filepath.Join(m.root, "patches", "img")
			copyTree(t, filepath.Join(data, "patches"), m.dir)
			m.patches, _ = filepath.Glob(filepath.Join(m.dir, "*"))
			writeSpec(t, m.root, "img", up.URL())
			f := filepath.Join(m.root, "images", "img", "patchkit.yaml")
			spec, _ := os.ReadFile(f)
			spec = []byte(strings.Replace(string(spec), "ref: v1\n", "ref: "+pin+"\n", 1))
			os.WriteFile(f, spec, 0o644)

			code, stdout, stderr := m.run(t, "apply", "img", "--check")
			if code != c.defaultCode || !strings.Contains(stdout+stderr, c.defaultSays) {
				t.Errorf("apply --check with the default tool exit = %d, want %d saying %q\n%s%s", code, c.defaultCode, c.defaultSays, stdout, stderr)
			}

			os.WriteFile(f, append(spec, gitAmSpec...), 0o644)
			if code, stdout, stderr := m.run(t, "apply", "img", "--check"); code != 0 {
				t.Errorf("apply --check with git-am exit = %d, want 0 (git am applies it)\n%s%s", code, stdout, stderr)
			}
			out := filepath.Join(t.TempDir(), "out")
			if code, stdout, stderr := m.run(t, "apply", "img", "--out", out); code != 0 {
				t.Fatalf("apply --out exit = %d\n%s%s", code, stdout, stderr)
			}
			wt := filepath.Join(t.TempDir(), "wt")
			gittest.Run(up.Dir, nil, "clone", "-q", up.Dir, wt)
			gittest.Run(wt, nil, "checkout", "-q", pin)
			if o, e, err := gittest.Run(wt, nil, append([]string{"am", "--committer-date-is-author-date"}, m.patches...)...); err != nil {
				t.Fatalf("git am: %v\n%s%s", err, o, e)
			}
			sameTree(t, gittest.Checkout(t, out), gittest.Checkout(t, wt))
		})
	}
}

// copyTree copies the files under from to to.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(to, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
