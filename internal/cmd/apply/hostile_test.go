package apply_test

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/cmd/cmdtest"
	"github.com/patchkit/patchkit/internal/cmd/root"
	"github.com/patchkit/patchkit/internal/gittest"
)

// hostileUpstream is the tree every hostile patch is aimed at: a README, a
// Go file, a symlink to a directory outside the tree and a symlink to a file.
func hostileUpstream(t *testing.T) *gittest.Repo {
	up := gittest.New(t)
	up.Write("README", "line one\nline two\nline three\nline four\n")
	up.Write("src/a.go", "package a\n")
	up.Symlink("linkdir", "/etc")
	up.Symlink("link", "README")
	up.Release("base", "v1")
	return up
}

// hostileWant gives, for each case in testdata/hostile, what the error must
// say: the patch file and line, and the reason.
var hostileWant = map[string][]string{
	"01-absolute-new.patch":                      {"01-absolute-new.patch:6:", "absolute"},
	"02-absolute-traditional.patch":              {"02-absolute-traditional.patch:3:", "absolute"},
	"03-dotdot-new.patch":                        {"03-dotdot-new.patch:3:", "leaves the tree"},
	"04-dotdot-nested.patch":                     {"04-dotdot-nested.patch:3:", "leaves the tree"},
	"05-dotdot-rename.patch":                     {"05-dotdot-rename.patch:3:", "leaves the tree"},
	"06-dotdot-copy.patch":                       {"06-dotdot-copy.patch:3:", "leaves the tree"},
	"07-dotdot-rename-from.patch":                {"07-dotdot-rename-from.patch:3:", "leaves the tree"},
	"08-dotdot-delete.patch":                     {"08-dotdot-delete.patch:3:", "leaves the tree"},
	"09-git-hook.patch":                          {"09-git-hook.patch:3:", ".git"},
	"10-git-nested.patch":                        {"10-git-nested.patch:3:", ".git"},
	"11-git-case.patch":                          {"11-git-case.patch:3:", ".git"},
	"12-symlink-dir-new.patch":                   {"12-symlink-dir-new.patch:3:", "beyond a symbolic link"},
	"13-symlink-dir-modify.patch":                {"13-symlink-dir-modify.patch:3:", "beyond a symbolic link"},
	"14-symlink-create-then-write.patch":         {"14-symlink-create-then-write.patch:10:", "beyond a symbolic link"},
	"15-symlink-replaced-by-file.patch":          {"15-symlink-replaced-by-file.patch:3:", "already exists", "symbolic link"},
	"16-truncated-hunk.patch":                    {"16-truncated-hunk.patch:6:", "miscounts lines"},
	"17-count-too-small.patch":                   {"17-count-too-small.patch:10:", "goes on past"},
	"18-count-too-large.patch":                   {"18-count-too-large.patch:11:", "shorter than its @@ line counts"},
	"19-bad-hunk-header.patch":                   {"19-bad-hunk-header.patch:6:", "invalid fragment header"},
	"20-empty.patch":                             {"20-empty.patch", "no diff"},
	"21-header-only.patch":                       {"21-header-only.patch", "no diff"},
	"22-same-file-created-twice.patch":           {"22-same-file-created-twice.patch:9:", "NEW is changed by two file diffs"},
	"23-nul-in-hunk.patch":                       {"23-nul-in-hunk.patch:9:", "NUL"},
	"24-nul-in-header.patch":                     {"24-nul-in-header.patch:1:", "NUL"},
	"25-invalid-utf8-header.patch":               {"25-invalid-utf8-header.patch:1:", "UTF-8"},
	"26-unknown-origin.patch":                    {"26-unknown-origin.patch:2:", "sideways"},
	"27-empty-applied-upstream.patch":            {"27-empty-applied-upstream.patch:3:", "Applied-Upstream"},
	"28-missing-plus-line.patch":                 {"28-missing-plus-line.patch:5:", "missing filename"},
	"29-bad-mode.patch":                          {"29-bad-mode.patch:4:", "invalid mode"},
	"30-corrupt-binary.patch":                    {"30-corrupt-binary.patch:8:", "corrupt data"},
	"31-quoted-escape.patch":                     {"31-quoted-escape.patch:3:", "leaves the tree"},
	"32-binary-into-git.patch":                   {"32-binary-into-git.patch:3:", ".git"},
	"33-symlink-target-escape-then-modify.patch": {"33-symlink-target-escape-then-modify.patch:12:", "beyond a symbolic link"},
	"34-series-symlink.d":                        {"0002-write-through.patch:3:", "beyond a symbolic link"},
	"35-huge.patch (generated)":                  {"35-huge.patch", "more than the"},
}

// TestHostile runs every patch of the hostile corpus through `patchkit apply`
// and requires exit code 2, an error naming the patch file (and line), and
// nothing written: no output tree, nothing new in the repository.
func TestHostile(t *testing.T) {
	up := hostileUpstream(t)
	cache := t.TempDir()
	corpus, err := os.ReadDir("testdata/hostile")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(dir string){}
	for _, e := range corpus {
		name := e.Name()
		if name == "README.md" {
			continue
		}
		src := filepath.Join("testdata/hostile", name)
		cases[name] = func(dir string) {
			if e.IsDir() {
				files, _ := os.ReadDir(src)
				for _, f := range files {
					copyFile(t, filepath.Join(src, f.Name()), filepath.Join(dir, f.Name()))
				}
				return
			}
			copyFile(t, src, filepath.Join(dir, name))
		}
	}
	cases["35-huge.patch (generated)"] = func(dir string) {
		var b bytes.Buffer
		b.WriteString("Subject: a 100 MB patch\n\ndiff --git a/big b/big\nnew file mode 100644\n--- /dev/null\n+++ b/big\n")
		line := strings.Repeat("x", 99) + "\n"
		n := 100 << 20 / len(line)
		b.WriteString("@@ -0,0 +1," + itoa(n) + " @@\n")
		for b.Len() < 100<<20 {
			b.WriteString("+" + line)
		}
		if err := os.WriteFile(filepath.Join(dir, "35-huge.patch"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(cases) < 30 {
		t.Fatalf("hostile corpus has %d cases, want at least 30", len(cases))
	}
	for name := range hostileWant {
		if cases[name] == nil {
			t.Errorf("hostileWant names %s, which the corpus lacks", name)
		}
	}
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			want, ok := hostileWant[name]
			if !ok {
				t.Fatalf("no expected error for corpus case %s", name)
			}
			root := t.TempDir()
			writeSpec(t, root, "h", up.URL())
			patches := filepath.Join(root, "patches", "h")
			os.MkdirAll(patches, 0o755)
			cases[name](patches)
			before := listTree(t, root)
			out := filepath.Join(t.TempDir(), "out")

			code, stdout, stderr := runPatchkit(t, "--root", root, "--cache-dir", cache, "apply", "h", "--out", out)
			if code != 2 {
				t.Fatalf("exit code = %d, want 2\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			for _, w := range want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr = %q, want it to contain %q", stderr, w)
				}
			}
			if _, err := os.Lstat(out); !os.IsNotExist(err) {
				t.Errorf("--out %s exists after a hostile patch (err %v)", out, err)
			}
			if after := listTree(t, root); strings.Join(after, "\n") != strings.Join(before, "\n") {
				t.Errorf("repository changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeSpec(t *testing.T, root, name, url string) {
	t.Helper()
	dir := filepath.Join(root, "images", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	spec := "upstream:\n  url: " + url + "\n  ref: v1\npatches: patches/" + name + "\n"
	if err := os.WriteFile(filepath.Join(dir, "patchkit.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
}

func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// runPatchkit runs the patchkit command tree in-process and returns the exit
// code main would return, stdout and stderr.
func runPatchkit(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return cmdtest.Run(t, root.NewCmdRoot, args...)
}
