package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// applyFiles and applyPatches size the apply benchmark as issue A sets it:
// a 20-patch series on a generated upstream of 5,000 files.
const (
	applyFiles   = 5000
	applyPatches = 20
)

// setupApply generates the upstream (one tagged commit of 5,000 files, in
// 50 directories) and a 20-patch series, each patch changing two files with
// two hunks each. It returns the upstream dir and the patch repo root.
func setupApply(b *testing.B) (string, string) {
	b.Helper()
	var stream bytes.Buffer
	files := map[string]string{}
	for i := 0; i < applyFiles; i++ {
		files[fmt.Sprintf("pkg%02d/file%04d.txt", i%50, i)] = fileContent(i, nil)
	}
	commitStream(&stream, 1, 0, "v1.0.0", files, 1700000000)
	up := fastImport(b, stream.Bytes())

	root := b.TempDir()
	writeSpec(b, root, "bench", "file://"+up, "v1.0.0", "v*")
	pdir := filepath.Join(root, "patches", "bench")
	os.MkdirAll(pdir, 0o755)
	// Make each patch with git itself: edit in a work tree, git diff, reset.
	wt := b.TempDir()
	if out, err := exec.Command("git", "clone", "-q", up, wt).CombinedOutput(); err != nil {
		b.Fatalf("clone: %v %s", err, out)
	}
	for p := 0; p < applyPatches; p++ {
		for _, i := range []int{p * 97 % applyFiles, (p*97 + 31) % applyFiles} {
			path := filepath.Join(wt, fmt.Sprintf("pkg%02d/file%04d.txt", i%50, i))
			body, _ := os.ReadFile(path)
			s := strings.Replace(string(body), fmt.Sprintf("file %d line 5:", i), fmt.Sprintf("file %d line 5 (patched by %d):", i, p), 1)
			s = strings.Replace(s, fmt.Sprintf("file %d line 30:", i), fmt.Sprintf("file %d line 30 (patched by %d):", i, p), 1)
			os.WriteFile(path, []byte(s), 0o644)
		}
		cmd := exec.Command("git", "diff")
		cmd.Dir = wt
		diff, err := cmd.Output()
		if err != nil {
			b.Fatal(err)
		}
		name := fmt.Sprintf("%04d-change-%d.diff", p+1, p)
		os.WriteFile(filepath.Join(pdir, name), append([]byte(fmt.Sprintf("Subject: change %d\nOrigin: vendor\nForwarded: no\n\n", p)), diff...), 0o644)
		exec.Command("git", "-C", wt, "checkout", "-q", ".").Run()
	}
	return up, root
}

// BenchmarkApply applies the 20-patch series to the 5,000-file upstream and
// writes the patched tree:
//   - git: git clone --depth 1 of the tag, then one git apply of the glob;
//   - patchkit: patchkit apply --out from a warm cache.
//
// Both produce the same tree; the benchmark checks that before timing.
func BenchmarkApply(b *testing.B) {
	up, root := setupApply(b)
	cache := b.TempDir()
	patches, _ := filepath.Glob(filepath.Join(root, "patches/bench/*.diff"))
	work := b.TempDir()
	pk := func(out string) int64 {
		return run(b, root, patchkitBin, "--cache-dir", cache, "apply", "bench", "--out", out)
	}
	gitWay := func(out string) int64 {
		rss := run(b, work, "git", "clone", "-q", "--depth", "1", "--branch", "v1.0.0", "file://"+up, out)
		return max(rss, run(b, out, "git", append([]string{"apply", "--whitespace=error"}, patches...)...))
	}
	// Warm the cache and check both ways agree.
	pkOut, gitOut := filepath.Join(work, "pk-check"), filepath.Join(work, "git-check")
	pk(pkOut)
	gitWay(gitOut)
	os.RemoveAll(filepath.Join(gitOut, ".git"))
	if diff, err := exec.Command("diff", "-r", pkOut, gitOut).CombinedOutput(); err != nil {
		b.Fatalf("patchkit and git trees differ: %v\n%s", err, diff)
	}
	// The two ways alternate within each iteration, so that a load on this
	// shared machine weighs on both alike; each reports its own time.
	var gitTime, pkTime time.Duration
	var gitRuns, pkRuns []time.Duration
	var gitRSS, pkRSS int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		inTurn(i,
			func() {
				out := filepath.Join(work, fmt.Sprintf("git-%d", i))
				start := time.Now()
				gitRSS = max(gitRSS, gitWay(out))
				gitRuns = append(gitRuns, time.Since(start))
				gitTime += gitRuns[len(gitRuns)-1]
				b.StopTimer()
				os.RemoveAll(out)
				b.StartTimer()
			},
			func() {
				out := filepath.Join(work, fmt.Sprintf("pk-%d", i))
				start := time.Now()
				pkRSS = max(pkRSS, pk(out))
				pkRuns = append(pkRuns, time.Since(start))
				pkTime += pkRuns[len(pkRuns)-1]
				b.StopTimer()
				os.RemoveAll(out)
				b.StartTimer()
			},
		)
	}
	n := float64(b.N)
	b.ReportMetric(float64(gitTime.Milliseconds())/n, "git-ms/op")
	b.ReportMetric(float64(pkTime.Milliseconds())/n, "patchkit-ms/op")
	b.ReportMetric(float64(pkTime)/float64(gitTime), "patchkit/git")
	b.ReportMetric(float64(gitRSS), "git-maxRSS-KiB")
	b.ReportMetric(float64(pkRSS), "patchkit-maxRSS-KiB")
	spread(b, "git", gitRuns)
	spread(b, "patchkit", pkRuns)
}
