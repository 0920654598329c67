package chart

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestKamajiZeroIndexPatch is cozystack's real case: the patch has a zero
// index line, so GNU patch (the Makefile's tool) skips it as the creation
// of a file that exists, while git apply takes it. GNUPatch agrees with
// both real tools.
func TestKamajiZeroIndexPatch(t *testing.T) {
	patch, upstream, vendored := readCase(t, "kamaji", "1.diff")
	const file = "charts/kamaji/controller-gen/validating-webhook.yaml"
	files := Files{file: upstream}

	res := checkAgainstGNU(t, "kamaji", files, patch, PatchOptions{Strip: 1, Fuzz: 2, NoBackup: true}, "--no-backup-if-mismatch", "-p1")
	if res.OK() || !strings.Contains(strings.Join(res.Problems(), ""), "reads as a creation") {
		t.Fatalf("GNUPatch problems = %q, want the zero index line read as a creation", res.Problems())
	}

	got := clone(files)
	res, err := GNUPatch(got, "1.diff", patch, PatchOptions{Strip: 1, GitApply: true})
	if err != nil || !res.OK() {
		t.Fatalf("git apply mode: %v %v", err, res.Problems())
	}
	if !bytes.Equal(got[file], vendored) {
		t.Fatalf("git apply mode gave\n%s\nwant the vendored file\n%s", got[file], vendored)
	}
	// The real git apply agrees.
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, filepath.Dir(file)), 0o755)
	os.WriteFile(filepath.Join(dir, file), upstream, 0o644)
	cmd := exec.Command("git", "apply", "-p1", filepath.Join(mustAbs(t, "testdata/kamaji/1.diff")))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git apply: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, file)); !bytes.Equal(b, vendored) {
		t.Fatalf("git apply gave\n%s", b)
	}
}

// readCase reads a real case from testdata/dir: the patch, the upstream
// file it is applied to, and the file as the monorepo vendors it.
func readCase(t *testing.T, dir, patch string) (p, upstream, vendored []byte) {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return read(patch), read("upstream.yaml"), read("vendored.yaml")
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestKubeovnChoppedPatch is cozystack's kube-ovn chart patch, whose hunk
// ends a line short: GNU patch applies it with fuzz and an offset to
// kube-ovn v1.15.10's file, giving exactly the file cozystack vendors, and
// GNUPatch agrees with it byte for byte.
func TestKubeovnChoppedPatch(t *testing.T) {
	patch, upstream, vendored := readCase(t, "kubeovn", "mtu.diff")
	const file = "charts/kube-ovn/templates/ovncni-ds.yaml"
	files := Files{file: upstream}
	res := checkAgainstGNU(t, "kubeovn", files, patch, PatchOptions{Strip: 4, Fuzz: 2, NoBackup: true}, "--no-backup-if-mismatch", "-p4")
	if !res.OK() {
		t.Fatalf("problems: %v", res.Problems())
	}
	got := clone(files)
	GNUPatch(got, "mtu.diff", patch, PatchOptions{Strip: 4, Fuzz: 2, NoBackup: true})
	if !bytes.Equal(got[file], vendored) {
		t.Fatalf("GNUPatch gave\n%s\nwant cozystack's vendored file", got[file])
	}
	t.Logf("hunks: %+v", res.Files[0].Hunks)
}
