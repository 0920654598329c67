package chart

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// gnuOracle runs the real GNU patch on files, as a Makefile line does
// (`patch ARGS < patchfile`, no terminal), and returns the tree after it,
// its exit status and its failed hunk numbers.
func gnuOracle(t *testing.T, files Files, patch []byte, args ...string) (Files, int, string) {
	t.Helper()
	dir := t.TempDir()
	for p, b := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("patch", args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(patch)
	cmd.SysProcAttr = noTTY()
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running patch: %v", err)
	}
	got := Files{}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || strings.HasSuffix(p, ".rej") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, _ := os.ReadFile(p)
		got[filepath.ToSlash(rel)] = b
		return nil
	})
	return got, code, string(out)
}

var failedHunk = regexp.MustCompile(`Hunk #(\d+) FAILED`)

func oracleFailed(out string) []string {
	var n []string
	for _, m := range failedHunk.FindAllStringSubmatch(out, -1) {
		n = append(n, m[1])
	}
	return n
}

func ourFailed(r *PatchResult) []string {
	var n []string
	for _, f := range r.Files {
		if f.Skipped != "" {
			continue
		}
		for _, h := range f.Hunks {
			if h.Failed {
				n = append(n, fmt.Sprint(h.N))
			}
		}
	}
	return n
}

func diffFiles(a, b Files) string {
	var keys []string
	seen := map[string]bool{}
	for k := range a {
		keys, seen[k] = append(keys, k), true
	}
	for k := range b {
		if !seen[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var d []string
	for _, k := range keys {
		x, okx := a[k]
		y, oky := b[k]
		if okx != oky || !bytes.Equal(x, y) {
			d = append(d, fmt.Sprintf("%s: ours %v %q, GNU patch %v %q", k, okx, x, oky, y))
		}
	}
	return strings.Join(d, "\n")
}

func clone(f Files) Files {
	c := Files{}
	for k, v := range f {
		c[k] = append([]byte(nil), v...)
	}
	return c
}

// checkAgainstGNU applies patch with our GNUPatch and with GNU patch, and
// fails unless both leave the same bytes, the same exit status and the
// same failed hunks.
func checkAgainstGNU(t *testing.T, name string, files Files, patch []byte, opt PatchOptions, args ...string) *PatchResult {
	t.Helper()
	want, code, out := gnuOracle(t, files, patch, args...)
	got := clone(files)
	res, err := GNUPatch(got, "p.diff", patch, opt)
	if err != nil {
		t.Fatalf("%s: GNUPatch: %v\npatch:\n%s", name, err, patch)
	}
	if d := diffFiles(got, want); d != "" {
		t.Fatalf("%s: trees differ:\n%s\nGNU patch said:\n%s\npatch:\n%s\nfiles: %q", name, d, out, patch, files)
	}
	if (code == 0) != res.OK() {
		t.Fatalf("%s: GNUPatch OK = %v, GNU patch exit %d:\n%s\nproblems: %v\npatch:\n%s\nfiles: %q", name, res.OK(), code, out, res.Problems(), patch, files)
	}
	if g, w := strings.Join(ourFailed(res), ","), strings.Join(oracleFailed(out), ","); g != w {
		t.Fatalf("%s: failed hunks = %q, GNU patch %q:\n%s\npatch:\n%s", name, g, w, out, patch)
	}
	return res
}

func TestGNUPatchZeroIndexIsCreation(t *testing.T) {
	files := Files{"charts/x/f.yaml": []byte("a\nb\nc\nd\ne\nf\n")}
	patch := []byte(`diff --git a/charts/x/f.yaml b/charts/x/f.yaml
index 0000000..1111111 100644
--- a/charts/x/f.yaml
+++ b/charts/x/f.yaml
@@ -1,3 +1,3 @@
 a
-b
+B
 c
@@ -4,3 +4,3 @@
 d
-e
+E
 f
`)
	for _, tc := range []struct {
		name string
		opt  PatchOptions
		args []string
	}{
		{"default", PatchOptions{Strip: 1, Fuzz: 2, NoBackup: true}, []string{"--no-backup-if-mismatch", "-p1"}},
		{"forward", PatchOptions{Strip: 1, Fuzz: 2, Forward: true}, []string{"-N", "-p1"}},
		{"force", PatchOptions{Strip: 1, Fuzz: 2, Force: true, NoBackup: true}, []string{"-f", "--no-backup-if-mismatch", "-p1"}},
	} {
		res := checkAgainstGNU(t, tc.name, files, patch, tc.opt, tc.args...)
		if res.OK() {
			t.Fatalf("%s: a zero index line on an existing file applied", tc.name)
		}
	}
	// The same patch with its real blob id applies.
	fixed := bytes.Replace(patch, []byte("index 0000000..1111111"), []byte("index 2222222..1111111"), 1)
	res := checkAgainstGNU(t, "real index", files, fixed, PatchOptions{Strip: 1, Fuzz: 2, NoBackup: true}, "--no-backup-if-mismatch", "-p1")
	if !res.OK() {
		t.Fatalf("the fixed patch failed: %v", res.Problems())
	}
}

func TestGNUPatchCases(t *testing.T) {
	base := "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\nl11\nl12\n"
	for _, tc := range []struct {
		name  string
		files Files
		patch string
		opt   PatchOptions
		args  []string
	}{
		{"offset and fuzz leave .orig", Files{"a.txt": []byte("x\ny\n" + strings.Replace(base, "l3\n", "L3\n", 1))},
			"--- a/a.txt\n+++ b/a.txt\n@@ -2,5 +2,5 @@\n l2\n l3\n l4\n-l5\n+five\n l6\n", PatchOptions{Strip: 1, Fuzz: 2}, []string{"-p1"}},
		{"reversed is skipped", Files{"a.txt": []byte(strings.Replace(base, "l5", "five", 1))},
			"--- a/a.txt\n+++ b/a.txt\n@@ -3,5 +3,5 @@\n l3\n l4\n-l5\n+five\n l6\n l7\n", PatchOptions{Strip: 1, Fuzz: 2, NoBackup: true}, []string{"-p1", "--no-backup-if-mismatch"}},
		{"reversed with --forward", Files{"a.txt": []byte(strings.Replace(base, "l5", "five", 1))},
			"--- a/a.txt\n+++ b/a.txt\n@@ -3,5 +3,5 @@\n l3\n l4\n-l5\n+five\n l6\n l7\n", PatchOptions{Strip: 1, Fuzz: 2, Forward: true, NoBackup: true}, []string{"-N", "-p1", "--no-backup-if-mismatch"}},
		{"creation", Files{},
			"diff --git a/new.txt b/new.txt\nnew file mode 100644\nindex 0000000..1234567\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n", PatchOptions{Strip: 1, Fuzz: 2}, []string{"-p1"}},
		{"deletion", Files{"gone.txt": []byte("one\ntwo\n")},
			"--- a/gone.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-one\n-two\n", PatchOptions{Strip: 1, Fuzz: 2}, []string{"-p1"}},
		{"deep strip", Files{"charts/x/t.yaml": []byte(base)},
			"--- a/packages/system/x/charts/x/t.yaml\n+++ b/packages/system/x/charts/x/t.yaml\n@@ -1,4 +1,4 @@\n l1\n-l2\n+two\n l3\n l4\n", PatchOptions{Strip: 4, Fuzz: 2, NoBackup: true}, []string{"-p4", "--no-backup-if-mismatch"}},
		{"missing file", Files{"b.txt": []byte(base)},
			"--- a/a.txt\n+++ b/a.txt\n@@ -1,4 +1,4 @@\n l1\n-l2\n+two\n l3\n l4\n", PatchOptions{Strip: 1, Fuzz: 2, NoBackup: true}, []string{"-p1", "--no-backup-if-mismatch"}},
		{"no newline at end", Files{"a.txt": []byte("a\nb\nc")},
			"--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n a\n b\n-c\n\\ No newline at end of file\n+C\n\\ No newline at end of file\n", PatchOptions{Strip: 1, Fuzz: 2, NoBackup: true}, []string{"-p1", "--no-backup-if-mismatch"}},
		{"explicit file", Files{"w/bootstrap.yaml": []byte(base)},
			"--- a/some/other/name.yaml\n+++ b/some/other/name.yaml\n@@ -1,4 +1,4 @@\n l1\n-l2\n+two\n l3\n l4\n", PatchOptions{Strip: -1, Fuzz: 2, NoBackup: true, File: "w/bootstrap.yaml"}, []string{"--no-backup-if-mismatch", "w/bootstrap.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkAgainstGNU(t, tc.name, tc.files, []byte(tc.patch), tc.opt, tc.args...)
		})
	}
}

// TestGNUPatchRandomAgainstGNU generates a file, an edit of it made into a
// patch by diff -u, and a drifted copy of the file (lines inserted,
// deleted, changed), and checks GNUPatch against GNU patch on it: the same
// bytes (the .orig backup too), the same exit status, the same failed hunks.
func TestGNUPatchRandomAgainstGNU(t *testing.T) {
	rng := rand.New(rand.NewSource(23))
	words := []string{"a", "b", "c", "d", "e", "key: 1", "key: 2", "  - x", "", "}"}
	line := func() string { return words[rng.Intn(len(words))] + "\n" }
	dir := t.TempDir()
	n := 150
	for i := 0; i < n; i++ {
		var orig []string
		for j := 0; j < 5+rng.Intn(40); j++ {
			orig = append(orig, line())
		}
		edit := mutate(rng, orig, 1+rng.Intn(4), line)
		drift := orig
		if rng.Intn(3) > 0 {
			drift = mutate(rng, orig, rng.Intn(5), line)
		}
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		os.WriteFile(a, []byte(strings.Join(orig, "")), 0o644)
		os.WriteFile(b, []byte(strings.Join(edit, "")), 0o644)
		ctx := []string{"-U3", "-U1", "-U2", "-U0"}[rng.Intn(4)]
		cmd := exec.Command("diff", ctx, "--label", "a/f.txt", "--label", "b/f.txt", a, b)
		patch, _ := cmd.Output()
		if len(patch) == 0 {
			continue
		}
		files := Files{"f.txt": []byte(strings.Join(drift, ""))}
		opt := PatchOptions{Strip: 1, Fuzz: 2}
		args := []string{"-p1"}
		if rng.Intn(2) == 0 {
			opt.NoBackup, args = true, append(args, "--no-backup-if-mismatch")
		}
		if rng.Intn(3) == 0 {
			opt.Forward, args = true, append(args, "-N")
		}
		checkAgainstGNU(t, fmt.Sprintf("case %d", i), files, patch, opt, args...)
	}
}

func mutate(rng *rand.Rand, in []string, n int, line func() string) []string {
	out := append([]string(nil), in...)
	for k := 0; k < n; k++ {
		i := rng.Intn(len(out) + 1)
		switch rng.Intn(3) {
		case 0:
			out = append(out[:i], append([]string{line()}, out[i:]...)...)
		case 1:
			if i < len(out) && len(out) > 1 {
				out = append(out[:i], out[i+1:]...)
			}
		default:
			if i < len(out) {
				out[i] = line()
			}
		}
	}
	return out
}

// TestGNUPatchChoppedEnd: a patch file that ends before its last hunk's
// trailing context lines (cozystack's kubeovn mtu.diff lacks one) is read
// as GNU patch reads it: the missing lines are blank context lines, up to
// a few; more is an error.
func TestGNUPatchChoppedEnd(t *testing.T) {
	files := Files{"a.txt": []byte("l1\nl2\nl3\nl4\n\n\n\n\n\n\nl11\n")}
	for missing := 1; missing <= 6; missing++ {
		t.Run(fmt.Sprint(missing), func(t *testing.T) {
			body := " l3\n-l4\n+four\n" + strings.Repeat(" \n", 6-missing)
			patch := []byte("--- a/a.txt\n+++ b/a.txt\n@@ -3,8 +3,8 @@\n" + body)
			want, code, out := gnuOracle(t, files, patch, "-p1", "--no-backup-if-mismatch")
			got := clone(files)
			res, err := GNUPatch(got, "p.diff", patch, PatchOptions{Strip: 1, Fuzz: 2, NoBackup: true})
			if err != nil {
				if code != 2 {
					t.Fatalf("GNUPatch: %v, but GNU patch exit %d:\n%s", err, code, out)
				}
				return
			}
			if code == 2 {
				t.Fatalf("GNUPatch took it (%v), GNU patch refused it:\n%s", res.Problems(), out)
			}
			if d := diffFiles(got, want); d != "" || res.OK() != (code == 0) {
				t.Fatalf("differs from GNU patch (exit %d):\n%s\n%s", code, d, out)
			}
		})
	}
}
