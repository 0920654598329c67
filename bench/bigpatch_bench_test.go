package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// bigPatchLines sizes the large patch: a new text file of this many lines
// of 60 bytes, about 60 MB of patch.
const bigPatchLines = 1_000_000

// setupBigPatch generates a small upstream (tagged v1.0.0) and a one-patch
// series that adds a 60 MB text file and edits an existing file.
func setupBigPatch(b *testing.B) (up, root string, patches []string) {
	b.Helper()
	var stream bytes.Buffer
	commitStream(&stream, 1, 0, "v1.0.0", map[string]string{"README": "big patch benchmark\n", "src/a.txt": fileContent(0, nil)}, 1700000000)
	up = fastImport(b, stream.Bytes())
	root = b.TempDir()
	writeSpec(b, root, "big", "file://"+up, "v1.0.0", "v*")
	pdir := filepath.Join(root, "patches", "big")
	os.MkdirAll(pdir, 0o755)
	var p bytes.Buffer
	p.WriteString("Subject: add generated data\nOrigin: vendor\nForwarded: no\n\n")
	p.WriteString("--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1,3 +1,3 @@\n")
	p.WriteString(" file 0 line 0: some generated text for the benchmark\n-file 0 line 1: some generated text for the benchmark\n+file 0 line 1: patched\n file 0 line 2: some generated text for the benchmark\n")
	fmt.Fprintf(&p, "--- /dev/null\n+++ b/data/big.txt\n@@ -0,0 +1,%d @@\n", bigPatchLines)
	for i := 0; i < bigPatchLines; i++ {
		fmt.Fprintf(&p, "+generated line %09d of the large patch benchmark data!!\n", i)
	}
	path := filepath.Join(pdir, "0001-data.diff")
	if err := os.WriteFile(path, p.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	return up, root, []string{path}
}

// maxRSSPerPatch is the most peak memory patchkit may use for a large
// patch, as a multiple of the patch's size (issue L).
const maxRSSPerPatch = 3

// BenchmarkApplyBigPatch measures time and peak memory of a 60 MB patch:
//   - git: git clone --depth 1 --branch v1.0.0, then git apply;
//   - patchkit: patchkit apply --out from a warm cache, and apply --check.
//
// Both trees must be the same, and patchkit's peak resident set, in apply
// --out and in apply --check, at most maxRSSPerPatch times the patch's
// size; the benchmark fails otherwise. It reports that peak divided by the
// patch's size as pk-rss/patch.
func BenchmarkApplyBigPatch(b *testing.B) {
	up, root, patches := setupBigPatch(b)
	fi, err := os.Stat(patches[0])
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("patch size %d MiB", fi.Size()>>20)
	work := b.TempDir()
	cache := filepath.Join(work, "cache")
	pk := func(out string) int64 {
		return run(b, root, patchkitBin, "--cache-dir", cache, "apply", "big", "--out", out)
	}
	pkCheck := func() int64 {
		return run(b, root, patchkitBin, "--cache-dir", cache, "apply", "big", "--check")
	}
	gitWay := func(out string) int64 {
		rss := run(b, work, "git", "clone", "-q", "--depth", "1", "--branch", "v1.0.0", "file://"+up, out)
		return max(rss, run(b, out, "git", append([]string{"apply"}, patches...)...))
	}
	gitOut, pkOut := filepath.Join(work, "git-check"), filepath.Join(work, "pk-check")
	gitWay(gitOut)
	pk(pkOut)
	os.RemoveAll(filepath.Join(gitOut, ".git"))
	if out, err := exec.Command("diff", "-r", gitOut, pkOut).CombinedOutput(); err != nil {
		b.Fatalf("patchkit and git trees differ: %v\n%s", err, out)
	}
	var gitRuns, pkRuns, checkRuns []time.Duration
	var gitRSS, pkRSS, checkRSS int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := filepath.Join(work, fmt.Sprintf("git-%d", i))
		start := time.Now()
		gitRSS = max(gitRSS, gitWay(out))
		gitRuns = append(gitRuns, time.Since(start))
		out = filepath.Join(work, fmt.Sprintf("pk-%d", i))
		start = time.Now()
		pkRSS = max(pkRSS, pk(out))
		pkRuns = append(pkRuns, time.Since(start))
		start = time.Now()
		checkRSS = max(checkRSS, pkCheck())
		checkRuns = append(checkRuns, time.Since(start))
		b.StopTimer()
		os.RemoveAll(filepath.Join(work, fmt.Sprintf("git-%d", i)))
		os.RemoveAll(out)
		b.StartTimer()
	}
	b.StopTimer()
	spread(b, "git", gitRuns)
	spread(b, "patchkit", pkRuns)
	spread(b, "check", checkRuns)
	b.ReportMetric(float64(gitRSS), "git-maxRSS-KiB")
	b.ReportMetric(float64(pkRSS), "patchkit-maxRSS-KiB")
	b.ReportMetric(float64(checkRSS), "check-maxRSS-KiB")
	checkRSSPerPatch(b, fi.Size(), pkRSS, checkRSS)
}

// checkRSSPerPatch reports patchkit's peak resident set (KiB, apply --out
// and apply --check) per byte of patch, and fails beyond maxRSSPerPatch.
// Without GNU time there is no figure, which is a failure too: the
// benchmark exists to prove the bound.
func checkRSSPerPatch(b *testing.B, patchSize, outKiB, checkKiB int64) {
	b.Helper()
	if outKiB == 0 || checkKiB == 0 {
		b.Fatalf("no peak RSS measured: install GNU time (/usr/bin/time, Debian package time)")
	}
	outRatio := float64(outKiB<<10) / float64(patchSize)
	checkRatio := float64(checkKiB<<10) / float64(patchSize)
	b.ReportMetric(outRatio, "pk-rss/patch")
	b.ReportMetric(checkRatio, "check-rss/patch")
	if outRatio > maxRSSPerPatch || checkRatio > maxRSSPerPatch {
		b.Fatalf("patchkit peak RSS is %.2f (apply --out) and %.2f (apply --check) times the %d-byte patch, more than %d",
			outRatio, checkRatio, patchSize, maxRSSPerPatch)
	}
}
