package stamp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/cmdutil"
	stampstage "github.com/patchkit/patchkit/internal/stamp"
)

// childRoot, set in a re-executed test binary's environment, makes it run
// `patchkit stamp` with its arguments in that root and exit: the tests
// below stamp from real, separate processes.
const childRoot = "PATCHKIT_TEST_STAMP_CHILD_ROOT"

func TestMain(m *testing.M) {
	if root := os.Getenv(childRoot); root != "" {
		os.Exit(runChild(root, os.Args[1:]))
	}
	os.Exit(m.Run())
}

func runChild(root string, args []string) int {
	f := &cmdutil.Factory{IO: cmdutil.System(), Root: root, Output: "json"}
	cmd := NewCmdStamp(f, nil)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM) // as main does
	defer stop()
	err := cmd.ExecuteContext(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return cmdutil.ExitCode(err)
}

// stampProcess starts the test binary as `patchkit stamp IMAGE --digest D`.
func stampProcess(t *testing.T, root, image, digest string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], image, "--digest", digest)
	cmd.Env = append(os.Environ(), childRoot+"="+root)
	cmd.Stdout, cmd.Stderr = new(bytes.Buffer), new(bytes.Buffer)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// unitRoot writes image units whose stamp targets are stamps[name], and
// the shared file values.
func unitRoot(t *testing.T, stamps map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, st := range stamps {
		dir := filepath.Join(root, "images", name)
		os.MkdirAll(dir, 0o755)
		os.MkdirAll(filepath.Join(root, "patches", name), 0o755) // an empty series
		spec := "upstream: {url: file:///u, ref: v1}\npatches: patches/" + name + "\nimage: {repository: " + name + ", tag: v1.0.0}\nstamp:\n" + st
		if err := os.WriteFile(filepath.Join(dir, "patchkit.yaml"), []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(root, "shared"), 0o755)
	return root
}

// readRecord reads a stamp record.
func readRecord(t *testing.T, path string) *stampstage.Record {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the stamp record: %v", err)
	}
	var r stampstage.Record
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("stamp record %s: %v", data, err)
	}
	return &r
}

func digestN(n int) string { return fmt.Sprintf("sha256:%064x", n) }

// largeValues is a values file of some 24 MiB whose last key, .image.tag,
// is "old", and the same file stamped with v1.0.0@digestN(1): large enough
// that a stamp can be killed while it writes.
func largeValues() (old, stamped string) {
	var b strings.Builder
	for i := 0; b.Len() < 24<<20; i++ {
		fmt.Fprintf(&b, "c%d:\n  image: {repository: r%d, tag: v%d}  # filler\n", i, i, i)
	}
	b.WriteString("image:\n  tag: old\n")
	old = b.String()
	return old, strings.TrimSuffix(old, "old\n") + "v1.0.0@" + digestN(1) + "\n"
}

// TestConcurrentStampsLoseNothing: two units stamp different keys of one
// values file from two processes at once, 100 times (without the lock,
// about 40% of rounds lost one); every round both
// values must be there.
func TestConcurrentStampsLoseNothing(t *testing.T) {
	root := unitRoot(t, map[string]string{
		"a": "  - {file: shared/values.yaml, key: .a.tag}\n",
		"b": "  - {file: shared/values.yaml, key: .b.tag}\n",
	})
	path := filepath.Join(root, "shared", "values.yaml")
	const rounds = 100
	lost := 0
	for round := 0; round < rounds; round++ {
		os.WriteFile(path, []byte("# shared\na:\n  tag: old\nb:\n  tag: old\n"), 0o644)
		ca := stampProcess(t, root, "a", digestN(2*round))
		cb := stampProcess(t, root, "b", digestN(2*round+1))
		for _, c := range []*exec.Cmd{ca, cb} {
			if err := c.Wait(); err != nil {
				t.Fatalf("round %d: stamp: %v\n%s", round, err, c.Stderr)
			}
		}
		got, _ := os.ReadFile(path)
		want := "# shared\na:\n  tag: v1.0.0@" + digestN(2*round) + "\nb:\n  tag: v1.0.0@" + digestN(2*round+1) + "\n"
		if string(got) != want {
			lost++
			t.Logf("round %d: values.yaml =\n%s", round, got)
		}
		// The record beside it holds both stamps too.
		rec := readRecord(t, filepath.Join(root, "shared", stampstage.RecordName))
		if a, b := rec.Lookup("values.yaml", ".a.tag"), rec.Lookup("values.yaml", ".b.tag"); a == nil || b == nil || a.Digest != digestN(2*round) || b.Digest != digestN(2*round+1) {
			lost++
			t.Logf("round %d: record = %+v", round, rec)
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d rounds lost a stamp", lost, rounds)
	}
	if left, _ := filepath.Glob(filepath.Join(root, "shared", ".values.yaml.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestKilledStampLeavesNoHalfFile kills -9 a stamp of a large file as soon
// as its temporary file appears. The values file is then the old or the
// new content, never a mix; the next run removes the leftover and stamps.
func TestKilledStampLeavesNoHalfFile(t *testing.T) {
	root := unitRoot(t, map[string]string{"a": "  - {file: shared/values.yaml, key: .image.tag}\n"})
	path := filepath.Join(root, "shared", "values.yaml")
	old, stamped := largeValues()
	caught, tries := 0, 0
	for try := 0; try < 10 && caught == 0; try++ {
		tries++
		os.WriteFile(path, []byte(old), 0o644)
		c := stampProcess(t, root, "a", digestN(1))
		deadline := time.Now().Add(2 * time.Minute) // a hang guard only
		for time.Now().Before(deadline) {
			if left, _ := filepath.Glob(filepath.Join(root, "shared", ".values.yaml.tmp-*")); len(left) > 0 {
				break
			}
			if c.ProcessState != nil {
				break
			}
			time.Sleep(200 * time.Microsecond)
		}
		c.Process.Signal(syscall.SIGKILL)
		c.Wait()
		got, _ := os.ReadFile(path)
		if string(got) != old && string(got) != stamped {
			t.Fatalf("try %d: after kill -9 the values file is neither the old nor the stamped content (%d bytes)", try, len(got))
		}
		left, _ := filepath.Glob(filepath.Join(root, "shared", ".values.yaml.tmp-*"))
		if len(left) == 0 {
			continue // killed before or after the write: try again
		}
		caught++
		next := stampProcess(t, root, "a", digestN(1))
		if err := next.Wait(); err != nil {
			t.Fatalf("the run after the kill: %v\n%s", err, next.Stderr)
		}
		if left, _ := filepath.Glob(filepath.Join(root, "shared", ".values.yaml.tmp-*")); len(left) > 0 {
			t.Errorf("the next run left the killed run's temporary files: %v", left)
		}
		if got, _ := os.ReadFile(path); string(got) != stamped {
			t.Errorf("the next run did not stamp the file")
		}
		if e := readRecord(t, filepath.Join(root, "shared", stampstage.RecordName)).Lookup("values.yaml", ".image.tag"); e == nil || e.Digest != digestN(1) {
			t.Errorf("the next run did not record the stamp: %+v", e)
		}
		if left, _ := filepath.Glob(filepath.Join(root, "shared", "."+stampstage.RecordName+".tmp-*")); len(left) > 0 {
			t.Errorf("the record's temporary files are left: %v", left)
		}
	}
	t.Logf("caught a run mid-write after %d tries", tries)
	if caught == 0 {
		t.Fatal("no kill landed while the temporary file existed in 10 tries")
	}
}

// TestRefusalExitsTwoFileUnchanged: a target stamp cannot edit exactly is
// refused by the command with file:line, exit 2, the file untouched.
func TestRefusalExitsTwoFileUnchanged(t *testing.T) {
	root := unitRoot(t, map[string]string{"a": "  - {file: shared/values.yaml, key: .image.tag}\n"})
	path := filepath.Join(root, "shared", "values.yaml")
	in := "image:\n  # the tag\n  tag: |\n    v0.9.0\n"
	os.WriteFile(path, []byte(in), 0o644)
	c := stampProcess(t, root, "a", digestN(1))
	err := c.Wait()
	if c.ProcessState.ExitCode() != 2 || !strings.Contains(c.Stderr.(*bytes.Buffer).String(), "shared/values.yaml:3: .image.tag is a block scalar") {
		t.Errorf("stamp of a block scalar = %v, stderr %s; want exit 2 naming shared/values.yaml:3", err, c.Stderr)
	}
	if got, _ := os.ReadFile(path); string(got) != in {
		t.Errorf("values.yaml changed:\n%s", got)
	}
}
