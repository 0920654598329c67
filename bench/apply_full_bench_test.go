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

// fullPatches is the size of the full-history apply benchmark's series.
const fullPatches = 5

// setupApplyFull generates the kube-ovn-sized upstream of the memory
// benchmark (1,000 files, 3,000 one-line commits, 430 tags, repacked so most
// objects are deltas) and a series of fullPatches patches made with git diff
// at the pin, each changing one generated file. It returns the upstream and
// the patch repo root with the patches' paths.
func setupApplyFull(b *testing.B) (up, root string, patches []string) {
	b.Helper()
	up = fastImport(b, memStream())
	if out, err := exec.Command("git", "-C", up, "repack", "-adq").CombinedOutput(); err != nil {
		b.Fatalf("git repack: %v\n%s", err, out)
	}
	memDeltas(b, up)
	root = b.TempDir()
	writeSpec(b, root, memImage, "file://"+up, memTag(memPin), "v1.15.*")
	pdir := filepath.Join(root, "patches", memImage)
	os.MkdirAll(pdir, 0o755)
	wt := filepath.Join(b.TempDir(), "wt")
	if out, err := exec.Command("git", "-c", "advice.detachedHead=false", "clone", "-q", "--branch", memTag(memPin), up, wt).CombinedOutput(); err != nil {
		b.Fatalf("clone: %v %s", err, out)
	}
	for p := 0; p < fullPatches; p++ {
		f := p*197 + 3
		path := filepath.Join(wt, memPath(f))
		body, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		lines := strings.Split(string(body), "\n")
		lines[10] += " // patched"
		lines[60] += " // patched"
		os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644)
		cmd := exec.Command("git", "diff")
		cmd.Dir = wt
		diff, err := cmd.Output()
		if err != nil {
			b.Fatal(err)
		}
		name := filepath.Join(pdir, fmt.Sprintf("%04d-patch-%d.diff", p+1, f))
		os.WriteFile(name, append([]byte(fmt.Sprintf("Subject: patch %d\nOrigin: vendor\nForwarded: no\n\n", p)), diff...), 0o644)
		patches = append(patches, name)
		exec.Command("git", "-C", wt, "checkout", "-q", ".").Run()
	}
	return up, root, patches
}

// timedRun runs a command under GNU time and returns its wall time, its CPU
// time (user + system, with the children it waited for) and its peak RSS
// in KiB.
func timedRun(b *testing.B, dir, name string, args ...string) (wall, cpu time.Duration, rss int64) {
	b.Helper()
	cmd, peak := measured(name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	wall = time.Since(start)
	cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return wall, cpu, peak()
}

// BenchmarkApplyFullHistory is issue 24 item 5: apply --out from a cache
// that holds the upstream's whole history (as obsolete-check leaves it), so
// the pin's blobs are deltas in long chains against later revisions:
//   - git: `git worktree add --detach` of the pin from a copy of that same
//     cache, then one `git apply` of the series;
//   - patchkit: `patchkit apply --out` from the cache.
//
// Both produce the same tree (diff -r, checked before timing); the two
// alternate within each iteration, and each side's wall time, CPU time
// (user + system) and peak RSS are reported.
func BenchmarkApplyFullHistory(b *testing.B) {
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		b.Fatal("this benchmark measures with GNU time: apt-get install time")
	}
	_, root, patches := setupApplyFull(b)
	work := b.TempDir()
	cache := filepath.Join(work, "cache")
	// obsolete-check reads the history: the cache it leaves is a full one.
	memRun(b, root, nil, []int{0, 1}, patchkitBin, "--root", root, "--cache-dir", cache, "obsolete-check", memImage, "-o", "json")
	repo := fullCacheRepo(b, cache)
	full := filepath.Join(work, "git-full")
	if out, err := exec.Command("cp", "-a", repo, full).CombinedOutput(); err != nil {
		b.Fatalf("cp: %v %s", err, out)
	}
	pk := func(out string) (time.Duration, time.Duration, int64) {
		return timedRun(b, root, patchkitBin, "--root", root, "--cache-dir", cache, "apply", memImage, "--out", out)
	}
	gitWay := func(out string) (time.Duration, time.Duration, int64) {
		w1, c1, r1 := timedRun(b, work, "git", "--git-dir", full, "worktree", "add", "-q", "--detach", out, memTag(memPin))
		w2, c2, r2 := timedRun(b, out, "git", append([]string{"apply"}, patches...)...)
		return w1 + w2, c1 + c2, max(r1, r2)
	}
	cleanGit := func(out string) {
		os.RemoveAll(out)
		if o, err := exec.Command("git", "--git-dir", full, "worktree", "prune").CombinedOutput(); err != nil {
			b.Fatalf("git worktree prune: %v %s", err, o)
		}
	}
	pkOut, gitOut := filepath.Join(work, "pk-check"), filepath.Join(work, "git-check")
	pk(pkOut)
	gitWay(gitOut)
	os.Remove(filepath.Join(gitOut, ".git")) // the worktree's link to its repository
	if diff, err := exec.Command("diff", "-r", pkOut, gitOut).CombinedOutput(); err != nil {
		b.Fatalf("patchkit and git trees differ: %v\n%s", err, diff)
	}
	os.RemoveAll(pkOut)
	cleanGit(gitOut)

	type side struct {
		runs      []time.Duration
		wall, cpu time.Duration
		rss       int64
	}
	var g, p side
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		inTurn(i,
			func() {
				out := filepath.Join(work, fmt.Sprintf("git-%d", i))
				w, c, r := gitWay(out)
				g.runs, g.wall, g.cpu, g.rss = append(g.runs, w), g.wall+w, g.cpu+c, max(g.rss, r)
				b.StopTimer()
				cleanGit(out)
				b.StartTimer()
			},
			func() {
				out := filepath.Join(work, fmt.Sprintf("pk-%d", i))
				w, c, r := pk(out)
				p.runs, p.wall, p.cpu, p.rss = append(p.runs, w), p.wall+w, p.cpu+c, max(p.rss, r)
				b.StopTimer()
				os.RemoveAll(out)
				b.StartTimer()
			},
		)
	}
	b.StopTimer()
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / n }
	b.ReportMetric(ms(g.wall), "git-ms/op")
	b.ReportMetric(ms(p.wall), "patchkit-ms/op")
	b.ReportMetric(float64(p.wall)/float64(g.wall), "patchkit/git")
	b.ReportMetric(ms(g.cpu), "git-cpu-ms/op")
	b.ReportMetric(ms(p.cpu), "patchkit-cpu-ms/op")
	b.ReportMetric(float64(g.rss)/1024, "git-maxRSS-MiB")
	b.ReportMetric(float64(p.rss)/1024, "patchkit-maxRSS-MiB")
	spread(b, "git", g.runs)
	spread(b, "patchkit", p.runs)
}

// fullCacheRepo returns the one upstream repository under the cache
// directory, failing unless it holds the pin's history (not a partial,
// pin-only cache).
func fullCacheRepo(b *testing.B, cache string) string {
	b.Helper()
	heads, _ := filepath.Glob(filepath.Join(cache, "*", "HEAD"))
	heads2, _ := filepath.Glob(filepath.Join(cache, "*", "*", "HEAD"))
	heads = append(heads, heads2...)
	if len(heads) != 1 {
		b.Fatalf("want one repository in the cache %s, found %v", cache, heads)
	}
	repo := filepath.Dir(heads[0])
	out, err := exec.Command("git", "--git-dir", repo, "rev-list", "--count", memTag(memPin)).Output()
	if err != nil {
		b.Fatalf("git rev-list in the cache: %v", err)
	}
	if n := strings.TrimSpace(string(out)); n == "1" {
		b.Fatalf("the cache %s holds only the pin, not its history", repo)
	}
	return repo
}
