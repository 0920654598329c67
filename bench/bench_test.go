// Package bench measures patchkit beside the git-CLI way of doing the same
// job, in the same benchmark. docs/benchmarks.md records the results.
package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/gittest"
)

// patchkitBin is the binary under test, built once by TestMain as make bin
// builds it: static (CGO_ENABLED=0; the memory figures depend on it).
var patchkitBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "patchkit-bench-bin-*")
	if err != nil {
		panic(err)
	}
	patchkitBin = filepath.Join(dir, "patchkit")
	build := exec.Command("go", "build", "-o", patchkitBin, "../cmd/patchkit")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run runs a command and returns its peak resident set size in KiB.
func run(b *testing.B, dir string, name string, args ...string) int64 {
	b.Helper()
	cmd, rss := measured(name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return rss()
}

// measured returns a command that runs name under GNU time, when the machine
// has it (Debian package "time"), and a function that reads the command's
// peak resident set size in KiB after it ran (0 without GNU time). The
// rusage Go reports for a child is not reliable for this: in a process that
// has reaped other children it can report their maximum instead.
func measured(name string, args ...string) (*exec.Cmd, func() int64) {
	timeBin, err := exec.LookPath("/usr/bin/time")
	if err != nil {
		cmd := exec.Command(name, args...)
		cmd.Env = gittest.Env()
		return cmd, func() int64 { return 0 }
	}
	f, err := os.CreateTemp("", "patchkit-bench-rss-*")
	if err != nil {
		panic(err)
	}
	f.Close()
	cmd := exec.Command(timeBin, append([]string{"-f", "%M", "-o", f.Name(), name}, args...)...)
	cmd.Env = gittest.Env()
	return cmd, func() int64 {
		defer os.Remove(f.Name())
		b, _ := os.ReadFile(f.Name())
		// GNU time prefixes "Command exited with non-zero status N" when it did
		lines := strings.Fields(string(b))
		var kib int64
		if len(lines) > 0 {
			fmt.Sscan(lines[len(lines)-1], &kib)
		}
		return kib
	}
}

// fastImport builds a repository from a fast-import stream.
func fastImport(b *testing.B, stream []byte) string {
	b.Helper()
	dir := b.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"fast-import", "--quiet"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = gittest.Env()
		if args[0] == "fast-import" {
			cmd.Stdin = bytes.NewReader(stream)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// fileContent is the content of generated file i at a given revision: 40
// lines, some of which later revisions change.
func fileContent(i int, rev map[int]int) string {
	var s strings.Builder
	for l := 0; l < 40; l++ {
		fmt.Fprintf(&s, "file %d line %d: some generated text for the benchmark\n", i, l)
		if r, ok := rev[l]; ok && r > 0 {
			fmt.Fprintf(&s, "file %d line %d: inserted by upstream revision %d\n", i, l, r)
		}
	}
	return s.String()
}

// commitStream is one fast-import commit of the given files, tagged.
func commitStream(w *bytes.Buffer, mark, parent int, tag string, files map[string]string, when int64) {
	fmt.Fprintf(w, "commit refs/heads/main\nmark :%d\ncommitter Bench <bench@example.com> %d +0000\ndata %d\n%s\n", mark, when, len(tag), tag)
	if parent > 0 {
		fmt.Fprintf(w, "from :%d\n", parent)
	}
	for path, content := range files {
		fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", path, len(content), content)
	}
	if tag != "" {
		fmt.Fprintf(w, "tag %s\nfrom :%d\ntagger Bench <bench@example.com> %d +0000\ndata %d\n%s\n", tag, mark, when, len(tag), tag)
	}
}

func writeSpec(b *testing.B, root, name, url, ref, releases string) {
	b.Helper()
	dir := filepath.Join(root, "images", name)
	os.MkdirAll(dir, 0o755)
	spec := fmt.Sprintf("upstream:\n  url: %s\n  ref: %s\n  releases: %q\npatches: patches/%s\n", url, ref, releases, name)
	if err := os.WriteFile(filepath.Join(dir, "patchkit.yaml"), []byte(spec), 0o644); err != nil {
		b.Fatal(err)
	}
}

// spread reports the minimum, median and maximum of ds in milliseconds as
// metrics named <prefix>-min-ms, -med-ms and -max-ms.
func spread(b *testing.B, prefix string, ds []time.Duration) {
	b.Helper()
	if len(ds) == 0 {
		return
	}
	s := sortedCopy(ds)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(s[0]), prefix+"-min-ms")
	b.ReportMetric(ms(s[len(s)/2]), prefix+"-med-ms")
	b.ReportMetric(ms(s[len(s)-1]), prefix+"-max-ms")
}

// sortedCopy is ds sorted, shortest first.
func sortedCopy(ds []time.Duration) []time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s
}

// testedEdit is one file of a generated series: the file's new content, and
// the patch (with a Test: header naming the subtest it owns) that makes it.
type testedEdit struct{ file, content, name, test string }

// writeTestedPatches writes each edit into the checkout wt and its `git
// diff` as a patch in pdir, with a vendor header and its Test: line, and
// returns the patches' paths. The edits stay in wt.
func writeTestedPatches(b *testing.B, wt, pdir string, edits []testedEdit) []string {
	b.Helper()
	var patches []string
	for _, e := range edits {
		if err := os.WriteFile(filepath.Join(wt, e.file), []byte(e.content), 0o644); err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command("git", "diff", "--", e.file)
		cmd.Dir = wt
		diff, err := cmd.Output()
		if err != nil {
			b.Fatal(err)
		}
		hdr := fmt.Sprintf("Subject: %s\nOrigin: vendor\nForwarded: no\nTest: %s\n\n", e.name, e.test)
		p := filepath.Join(pdir, e.name)
		if err := os.WriteFile(p, append([]byte(hdr), diff...), 0o644); err != nil {
			b.Fatal(err)
		}
		patches = append(patches, p)
	}
	return patches
}

// inTurn runs the two ways of a benchmark's iteration i one after the
// other, first first on even iterations and second first on odd ones, so
// that the machine's load weighs on both alike.
func inTurn(i int, first, second func()) {
	if i%2 == 1 {
		first, second = second, first
	}
	first()
	second()
}
