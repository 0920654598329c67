package bench

import (
	"bytes"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/gittest"
)

// coldHistory and coldBlob size the cold benchmark's upstream: 1,000 text
// files at the tip, and a history of coldHistory commits that each replace
// one incompressible blob of coldBlob bytes, so the history holds
// coldHistory × coldBlob bytes (200 MiB) while the tip tree stays small.
const (
	coldFiles   = 1000
	coldHistory = 100
	coldBlob    = 2 << 20
)

// setupCold generates the upstream, tagged v1.0.0 at the tip, and a
// one-patch series that applies to it.
func setupCold(b *testing.B) (up, root string, patches []string) {
	b.Helper()
	var stream bytes.Buffer
	files := map[string]string{}
	for i := 0; i < coldFiles; i++ {
		files[fmt.Sprintf("pkg%02d/file%04d.go", i%40, i)] = fileContent(i, nil)
	}
	rng := rand.New(rand.NewSource(1))
	blob := make([]byte, coldBlob)
	for c := 1; c <= coldHistory; c++ {
		rng.Read(blob)
		tag := ""
		if c == coldHistory {
			tag = "v1.0.0"
		}
		fmt.Fprintf(&stream, "commit refs/heads/main\nmark :%d\ncommitter Bench <bench@example.com> %d +0000\ndata 6\nrev %02d\n", c, 1700000000+c, c%100)
		if c > 1 {
			fmt.Fprintf(&stream, "from :%d\n", c-1)
		} else {
			for path, content := range files {
				fmt.Fprintf(&stream, "M 100644 inline %s\ndata %d\n%s\n", path, len(content), content)
			}
		}
		fmt.Fprintf(&stream, "M 100644 inline assets/blob.bin\ndata %d\n", len(blob))
		stream.Write(blob)
		stream.WriteString("\n")
		if tag != "" {
			fmt.Fprintf(&stream, "tag %s\nfrom :%d\ntagger Bench <bench@example.com> %d +0000\ndata 2\nv1\n", tag, c, 1700000000+c)
		}
	}
	up = serve(b, fastImport(b, stream.Bytes()))
	root = b.TempDir()
	writeSpec(b, root, "bench", up, "v1.0.0", "v*")
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
	return up, root, []string{p}
}

// serve serves the repository dir with git daemon on loopback and returns its
// git:// URL. Over file:// the upstream's pack-objects would run as a child
// of the fetching process and count in its peak memory; a real upstream's
// server does not.
func serve(b *testing.B, dir string) string {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("git", "daemon", "--export-all", "--reuseaddr", "--listen=127.0.0.1",
		fmt.Sprintf("--port=%d", port), "--base-path="+filepath.Dir(dir), dir)
	cmd.Env = gittest.Env()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", l.Addr().String()); err == nil {
			c.Close()
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Sprintf("git://127.0.0.1:%d/%s", port, filepath.Base(dir))
}

// BenchmarkColdApplyCheck is a CI runner's first run: no cache.
//   - git: git clone --depth 1 --branch v1.0.0, then git apply --check;
//   - patchkit: patchkit apply --check with an empty cache directory, which
//     fetches only the pin at depth 1 into a partial cache.
//
// Both must accept the series; the benchmark fails otherwise. Outside the
// timed comparison it also times what a later history-walking command pays
// once on that cache: patchkit obsolete-check deepening it to the whole
// history (deepen-ms), beside a full git clone --bare (clone-full-ms).
func BenchmarkColdApplyCheck(b *testing.B) {
	up, root, patches := setupCold(b)
	work := b.TempDir()
	var gitTime, pkTime time.Duration
	var gitRSS, pkRSS, deepRSS int64
	var gitRuns, pkRuns, deepRuns, fullRuns []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ways := []func(){
			func() {
				out := filepath.Join(work, fmt.Sprintf("git-%d", i))
				start := time.Now()
				rss := run(b, work, "git", "clone", "-q", "--depth", "1", "--branch", "v1.0.0", up, out)
				rss = max(rss, run(b, out, "git", append([]string{"apply", "--check", "--whitespace=error"}, patches...)...))
				gitTime += time.Since(start)
				gitRuns = append(gitRuns, time.Since(start))
				gitRSS = max(gitRSS, rss)
				b.StopTimer()
				os.RemoveAll(out)
				b.StartTimer()
			},
			func() {
				cache := filepath.Join(work, fmt.Sprintf("cache-%d", i))
				start := time.Now()
				pkRSS = max(pkRSS, run(b, root, patchkitBin, "--cache-dir", cache, "apply", "bench", "--check"))
				pkTime += time.Since(start)
				pkRuns = append(pkRuns, time.Since(start))
				b.StopTimer()
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
		}
		if i%2 == 1 {
			ways[0], ways[1] = ways[1], ways[0]
		}
		ways[0]()
		ways[1]()
	}
	n := float64(b.N)
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
