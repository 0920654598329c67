package fault

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gate/gatetest"
	"github.com/patchkit/patchkit/internal/gittest"
)

// greeterRun runs the built patchkit on the greeter example at root with
// extra environment.
func greeterRun(t *testing.T, root, upstream, cache string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(patchkit, append([]string{"--root", root, "--cache-dir", cache, "--upstream-url", upstream}, args...)...)
	cmd.Env = gittest.Env(env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errOut.String()}
}

// TestBuildDefaultOutputLeavingRoot: a committed _output that is a
// symbolic link to a directory outside the repository: a real `patchkit
// build` (native builder, default OCI layout _output/IMAGE/oci) exits 2
// naming it, and writes nothing there; with a plain _output it builds.
func TestBuildDefaultOutputLeavingRoot(t *testing.T) {
	root, upstream := gatetest.NativeGreeter(t)
	cache := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "_output")); err != nil {
		t.Fatal(err)
	}
	r := greeterRun(t, root, upstream, cache, nil, "build", "greeter", "--builder", "native")
	if r.code != 2 || !strings.Contains(r.stderr, "outside the repository") {
		t.Errorf("build through _output leaving the root: exit %d, stderr %q; want 2, \"outside the repository\"", r.code, r.stderr)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("build wrote outside the repository: %v", entries)
	}
	os.Remove(filepath.Join(root, "_output"))
	if r := greeterRun(t, root, upstream, cache, nil, "build", "greeter", "--builder", "native"); r.code != 0 {
		t.Errorf("build with a plain _output: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(root, "_output", "greeter", "oci", "index.json")); err != nil {
		t.Errorf("no OCI layout under the repository: %v", err)
	}
}

// mountTmpfs mounts a tmpfs of size bytes (mode 1777) on a new directory
// and unmounts it when the test ends: as root, else through sudo -n (CI
// runners have it). It fails the test when neither can mount.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	var pre []string
	if os.Geteuid() != 0 {
		pre = []string{"sudo", "-n"}
	}
	run := func(args ...string) error {
		args = append(pre, args...)
		out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
		if err != nil {
			t.Logf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return err
	}
	if err := run("mount", "-t", "tmpfs", "-o", "size="+size+",mode=1777", "tmpfs", dir); err != nil {
		t.Fatalf("a full-filesystem test needs a small tmpfs: run as root, or with passwordless sudo")
	}
	t.Cleanup(func() { run("umount", dir) })
	return dir
}

// TestGateFullTmpdir: gate with TMPDIR on a real, nearly full filesystem
// (a 1 MiB tmpfs: the patched tree fits, go test's build of the test
// binary does not). That is an environment fault: exit 2, never the
// finding "the test package does not build" (exit 1). With room, the same
// gate passes.
func TestGateFullTmpdir(t *testing.T) {
	root, upstream := gatetest.NativeGreeter(t)
	cache := t.TempDir()
	full := mountTmpfs(t, "1m")
	r := greeterRun(t, root, upstream, cache, []string{"TMPDIR=" + full, "GOTMPDIR=" + full}, "gate", "greeter")
	t.Logf("gate with a full TMPDIR: exit %d: %s", r.code, r.stderr)
	if r.code != 2 || strings.Contains(r.stdout+r.stderr, "does not build") {
		t.Errorf("gate with a full TMPDIR: exit %d\nstdout %s\nstderr %s\nwant 2, and not \"does not build\"", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "no space left on device") {
		t.Errorf("gate with a full TMPDIR does not say the disk is full: %s", r.stderr)
	}
	if r := greeterRun(t, root, upstream, cache, nil, "gate", "greeter"); r.code != 0 {
		t.Errorf("gate with room: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
