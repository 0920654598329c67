package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/gittest"
)

// The cold benchmark's upstream looks like a real one with a long release
// history: coldFiles small text files at the tip, coldGen generated files of
// about coldGenSize bytes each, and coldHistory commits, each tagged as a
// release (v1.<c/10>.<c%10>), that edit a few lines of every generated file
// and of coldTouch small files. Every version of a generated file is a small
// delta of the one before, so the history is delta-heavy: about coldHistory
// × coldGen × coldGenSize bytes uncompressed (235 MiB) in a pack of a few MiB;
// with -short (make bench-check) coldGens() is 12 files, 141 MiB, still
// more history than coldRSSLimit.
// Fetching every tag at depth 1 means resolving all of those versions; the
// pin alone is one tree.
const (
	coldFiles   = 1000
	coldGen     = 20
	coldGenSize = 100 << 10
	coldHistory = 120
	coldTouch   = 10
	coldPin     = "v1.12.0"
)

// coldGens is the number of generated files: coldGen, fewer with -short.
func coldGens() int {
	if testing.Short() {
		return 12
	}
	return coldGen
}

// coldTag is the release tag of commit c (1-based).
func coldTag(c int) string { return fmt.Sprintf("v1.%d.%d", c/10, c%10) }

// genContent is generated file g at revision rev: coldGenSize bytes of
// lines, of which rev revisions each rewrote one.
func genContent(g, rev int) []byte {
	const lineLen = 64
	n := coldGenSize / lineLen
	edited := map[int]int{}
	for r := 1; r <= rev; r++ {
		edited[(r*7919+g*31)%n] = r
	}
	var buf bytes.Buffer
	for l := 0; l < n; l++ {
		line := fmt.Sprintf("// zz_generated %02d line %05d: deepcopy of a generated type", g, l)
		if r, ok := edited[l]; ok {
			line = fmt.Sprintf("// zz_generated %02d line %05d: regenerated at revision %03d", g, l, r)
		}
		fmt.Fprintf(&buf, "%-*s\n", lineLen-1, line)
	}
	return buf.Bytes()
}

// setupCold generates the upstream (see coldHistory), pinned at its last
// release, and a one-patch series that applies to it. It returns the number
// of uncompressed bytes of its history's blobs too.
func setupCold(b *testing.B) (up, root string, patches []string, history int64) {
	b.Helper()
	var stream bytes.Buffer
	// The versions of each generated file come one after another, so that
	// fast-import stores each as a delta of the one before, as a packed
	// upstream does.
	for g := 0; g < coldGens(); g++ {
		for c := 1; c <= coldHistory; c++ {
			data := genContent(g, c)
			history += int64(len(data))
			fmt.Fprintf(&stream, "blob\nmark :%d\ndata %d\n", 1000000+g*1000+c, len(data))
			stream.Write(data)
			stream.WriteString("\n")
		}
	}
	rev := map[int]map[int]int{} // small file -> line -> revision
	for c := 1; c <= coldHistory; c++ {
		fmt.Fprintf(&stream, "commit refs/heads/main\nmark :%d\ncommitter Bench <bench@example.com> %d +0000\ndata %d\n%s\n",
			c, 1700000000+c*3600, len(coldTag(c)), coldTag(c))
		if c > 1 {
			fmt.Fprintf(&stream, "from :%d\n", c-1)
		}
		touched := map[int]bool{}
		if c == 1 {
			for i := 0; i < coldFiles; i++ {
				touched[i] = true
			}
		}
		for k := 0; k < coldTouch; k++ {
			// File 0, which the series patches, is never edited.
			i := 1 + (c*coldTouch+k)*37%(coldFiles-1)
			if rev[i] == nil {
				rev[i] = map[int]int{}
			}
			rev[i][(c+k)%40] = c
			touched[i] = true
		}
		for i := range touched {
			content := fileContent(i, rev[i])
			history += int64(len(content))
			fmt.Fprintf(&stream, "M 100644 inline pkg%02d/file%04d.go\ndata %d\n%s\n", i%40, i, len(content), content)
		}
		for g := 0; g < coldGens(); g++ {
			fmt.Fprintf(&stream, "M 100644 :%d gen/zz_generated_%02d.go\n", 1000000+g*1000+c, g)
		}
		fmt.Fprintf(&stream, "tag %s\nfrom :%d\ntagger Bench <bench@example.com> %d +0000\ndata 8\nrelease\n",
			coldTag(c), c, 1700000000+c*3600)
	}
	up = serve(b, fastImport(b, stream.Bytes()))
	root = b.TempDir()
	writeSpec(b, root, "bench", up, coldPin, "v*")
	pdir := filepath.Join(root, "patches", "bench")
	os.MkdirAll(pdir, 0o755)
	diff := "Subject: one change\nOrigin: vendor\nForwarded: no\n\n" +
		"--- a/pkg00/file0000.go\n+++ b/pkg00/file0000.go\n@@ -1,3 +1,3 @@\n" +
		" file 0 line 0: some generated text for the benchmark\n" +
		"-file 0 line 1: some generated text for the benchmark\n" +
		"+file 0 line 1: patched\n" +
		" file 0 line 2: some generated text for the benchmark\n"
	p := filepath.Join(pdir, "0001-one.diff")
	if err := os.WriteFile(p, []byte(diff), 0o644); err != nil {
		b.Fatal(err)
	}
	return up, root, []string{p}, history
}

// serve serves the repository dir with git daemon on loopback and returns its
// git:// URL. Over file:// the upstream's pack-objects would run as a child
// of the fetching process and count in its peak memory; a real upstream's
// server does not.
func serve(b *testing.B, dir string) string {
	b.Helper()
	url := gittest.Daemon(b, dir)
	served[url] = dir
	return url
}

// served maps the URLs serve returned to their repositories.
var served = map[string]string{}

// coldRSSLimit is the most memory patchkit's cold apply may take: the
// largest process of its tree (patchkit, or the git fetch and index-pack it
// runs), as GNU time reports it.
const coldRSSLimit = 100 << 10 // KiB

// BenchmarkColdApplyCheck is a CI runner's first run: no cache.
//   - git: git clone --depth 1 --branch <pin>, then git apply --check;
//   - patchkit: patchkit apply --check with an empty cache directory, which
//     fetches only the pin at depth 1 into a partial cache.
//
// It fails when their verdicts differ, and when patchkit's peak memory is
// over coldRSSLimit; time is reported, not asserted. Outside the timed
// comparison it also times what a later history-walking command pays once
// on that cache: patchkit obsolete-check deepening it to the whole history
// (deepen-ms), beside a full git clone --bare (clone-full-ms); not with
// -short (make bench-check), which keeps the verdict and memory checks.
func BenchmarkColdApplyCheck(b *testing.B) {
	start := time.Now()
	up, root, patches, history := setupCold(b)
	generate := time.Since(start)
	if history < coldRSSLimit<<10 {
		b.Fatalf("the history holds %d bytes, less than the %d KiB bound: the benchmark would prove nothing", history, coldRSSLimit)
	}
	work := b.TempDir()
	var gitTime, pkTime time.Duration
	var gitRSS, pkRSS, deepRSS int64
	var gitRuns, pkRuns, deepRuns, fullRuns []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var gitOK, pkOK bool
		inTurn(i,
			func() {
				out := filepath.Join(work, fmt.Sprintf("git-%d", i))
				start := time.Now()
				rss := run(b, work, "git", "clone", "-q", "--depth", "1", "--branch", coldPin, up, out)
				code, arss := runCode(b, out, "git", append([]string{"apply", "--check", "--whitespace=error"}, patches...)...)
				gitTime += time.Since(start)
				gitRuns = append(gitRuns, time.Since(start))
				gitRSS = max(gitRSS, rss, arss)
				gitOK = code == 0
				b.StopTimer()
				os.RemoveAll(out)
				b.StartTimer()
			},
			func() {
				cache := filepath.Join(work, fmt.Sprintf("cache-%d", i))
				start := time.Now()
				code, rss := runCode(b, root, patchkitBin, "--cache-dir", cache, "apply", "bench", "--check")
				pkTime += time.Since(start)
				pkRuns = append(pkRuns, time.Since(start))
				pkRSS = max(pkRSS, rss)
				pkOK = code == 0
				b.StopTimer()
				if rss == 0 {
					b.Fatalf("cannot check patchkit's peak memory: GNU time (/usr/bin/time, Debian package time) is missing")
				}
				if rss > coldRSSLimit {
					b.Fatalf("patchkit apply --check on a cold cache peaked at %d KiB, over %d KiB", rss, coldRSSLimit)
				}
				if testing.Short() {
					// make bench-check: the deepening and the full clone below are timed only
					os.RemoveAll(cache)
					b.StartTimer()
					return
				}
				start = time.Now()
				deepRSS = max(deepRSS, run(b, root, patchkitBin, "--cache-dir", cache, "obsolete-check", "bench", "-o", "json"))
				deepRuns = append(deepRuns, time.Since(start))
				os.RemoveAll(cache)
				full := filepath.Join(work, fmt.Sprintf("full-%d", i))
				start = time.Now()
				run(b, work, "git", "clone", "-q", "--bare", up, full)
				fullRuns = append(fullRuns, time.Since(start))
				os.RemoveAll(full)
				b.StartTimer()
			},
		)
		if gitOK != pkOK {
			b.Fatalf("verdicts differ: git apply --check ok = %v, patchkit apply --check ok = %v", gitOK, pkOK)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(generate.Milliseconds()), "generate-ms")
	b.ReportMetric(float64(history)/(1<<20), "history-MiB")
	b.ReportMetric(float64(packSize(b, up))/(1<<20), "upstream-pack-MiB")
	b.ReportMetric(float64(gitTime.Milliseconds())/n, "git-ms/op")
	b.ReportMetric(float64(pkTime.Milliseconds())/n, "patchkit-ms/op")
	b.ReportMetric(float64(pkTime)/float64(gitTime), "patchkit/git")
	b.ReportMetric(float64(gitRSS), "git-maxRSS-KiB")
	b.ReportMetric(float64(pkRSS), "patchkit-maxRSS-KiB")
	b.ReportMetric(float64(deepRSS), "deepen-maxRSS-KiB")
	spread(b, "git", gitRuns)
	spread(b, "patchkit", pkRuns)
	spread(b, "deepen", deepRuns)
	spread(b, "clone-full", fullRuns)
}

// runCode runs name in dir like run, and returns its exit code, 0 (ok) or 1
// (a finding, as git apply --check and patchkit apply --check report a patch
// that does not apply), with its peak RSS in KiB. Any other code fails b.
func runCode(b *testing.B, dir string, name string, args ...string) (int, int64) {
	b.Helper()
	cmd, rss := measured(name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code != 1 {
		b.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return code, rss()
}

// packSize is the size of the packs of the upstream served at url (see serve).
func packSize(b *testing.B, url string) int64 {
	b.Helper()
	var size int64
	packs, _ := filepath.Glob(filepath.Join(served[url], ".git", "objects", "pack", "*.pack"))
	for _, p := range packs {
		if fi, err := os.Stat(p); err == nil {
			size += fi.Size()
		}
	}
	return size
}
