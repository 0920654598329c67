package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The memory benchmark's upstream has kube-ovn's size (issue L; v1.15.10 has
// 790 files, 8.4 MB, in 5,900 commits and 416 tags): a Go module of memFiles
// files of memLines generated functions each (9 MB at the tip) in 40
// packages, a history of memCommits one-line commits (so its pack is mostly
// deltas), memReleases release tags v1.15.0… (the pin is v1.15.10), and
// memOtherTags nightly tags the releases glob does not match.
const (
	memFiles     = 1000
	memLines     = 100
	memCommits   = 3000
	memReleases  = 30
	memPin       = 10 // the pin's release index
	memLand      = 20 // the release whose history carries patch 0002 as a cherry-pick
	memOtherTags = 400
	memLimitMiB  = 200 // issue L: no command above 200 MB
	// memFloorMiB bounds patchkit --version's peak RSS, the floor under
	// every command: the pages of the binary its package initialisers
	// touch, its runtime and initial heap (11.2–11.6 MiB static,
	// 2026-12-02; git --version: 3.4–3.7 MiB). Linking a template engine's
	// method lookup again (+2.8 MiB), compiling the package-level regexps
	// at start again (+1.1 MiB) with a little more, a heavy new dependency
	// or work at init crosses it; docs/benchmarks.md, "the process floor",
	// has the measurements.
	memFloorMiB = 13.5
	// memGitRatio is issue 24's bound on patchkit's peak against git's for
	// the same job, asserted on apply --check.
	memGitRatio = 1.3
	memImage    = "kubeish"
)

// memLine is line l (l ≥ 2) of generated file f at a revision: one function.
func memLine(f, l, rev int) string {
	return fmt.Sprintf("func F%04d_%03d(a int) int { return a*%d + %d } // generated line %d, revision %d", f, l, l, rev, l, rev)
}

// memFile renders generated file f with the revisions of its changed lines.
func memFile(f int, revs map[int]int) string {
	var s strings.Builder
	fmt.Fprintf(&s, "package pkg%02d\n\n", f/25)
	for l := 2; l < memLines; l++ {
		s.WriteString(memLine(f, l, revs[l]) + "\n")
	}
	return s.String()
}

func memPath(f int) string { return fmt.Sprintf("pkg%02d/f%04d.go", f/25, f) }

// memValue and memTarget are the files the series patches: patch 0001
// changes Value, patch 0002 the target's Name. Upstream history never
// touches them, except the cherry-pick of 0002 before release memLand.
func memValue(v int) string {
	return fmt.Sprintf("package pkg00\n\n// Value is what the gate's test checks.\nfunc Value() int { return %d }\n", v)
}

func memTarget(name string) string {
	return fmt.Sprintf("package target\n\nimport \"example.com/big/pkg00\"\n\n// Sum is pkg00's Value.\nfunc Sum() int { return pkg00.Value() }\n\n// Name is the target's name.\nfunc Name() string { return %q }\n", name)
}

func memTag(t int) string { return fmt.Sprintf("v1.15.%d", t) }

// memStream is the upstream's fast-import stream.
func memStream() []byte {
	var w bytes.Buffer
	files := map[string]string{
		"go.mod":           "module example.com/big\n\ngo 1.22\n",
		"pkg00/value.go":   memValue(1),
		"target/target.go": memTarget("plain"),
	}
	revs := make([]map[int]int, memFiles)
	for f := range revs {
		revs[f] = map[int]int{}
		files[memPath(f)] = memFile(f, nil)
	}
	perRelease := memCommits / memReleases
	otherPerRelease := memOtherTags / memReleases
	mark := 0
	for t := 0; t < memReleases; t++ {
		for n := 0; n < perRelease-1; n++ {
			c := t*perRelease + n
			f, l := (c*131)%memFiles, 2+(c*7)%(memLines-2)
			revs[f][l] = c + 1
			if files == nil {
				files = map[string]string{}
			}
			files[memPath(f)] = memFile(f, revs[f])
			mark++
			commitStream(&w, mark, mark-1, "", files, int64(1700000000+c*600))
			files = nil
			if n < otherPerRelease {
				fmt.Fprintf(&w, "reset refs/tags/nightly-%d-%d\nfrom :%d\n", t, n, mark)
			}
		}
		files = map[string]string{}
		if t == memLand {
			// upstream's own commit of patch 0002's change, before the release
			files["target/target.go"] = memTarget("patched")
		}
		mark++
		commitStream(&w, mark, mark-1, memTag(t), files, int64(1700000000+(t+1)*perRelease*600))
		files = nil
	}
	return w.Bytes()
}

// setupMemory generates the upstream, serves it with git daemon, and writes
// the unit: spec (test, native build of pkg00's files), the two-patch series
// with Test: headers, the injected test, and a Makefile whose build: target
// builds the unit (verify's unit check). It returns the upstream's URL, the
// root, the series' files, the first upstream commit after the pin, and a
// checkout of the patched tree with the test in place (git apply).
func setupMemory(b *testing.B) (url, root string, patches []string, next, patched string) {
	b.Helper()
	up := fastImport(b, memStream())
	for _, args := range [][]string{{"repack", "-adq"}, {"rev-list", "--reverse", memTag(memPin) + "..main"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = up
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
		next, _, _ = strings.Cut(string(out), "\n")
	}
	memDeltas(b, up)
	url = serve(b, up)
	root = b.TempDir()
	writeSpec(b, root, memImage, url, memTag(memPin), "v1.15.*")
	var spec strings.Builder
	spec.WriteString("test:\n  inject:\n    - from: patches/" + memImage + "/tests/patches_test.go\n      to: target/patches_test.go\n  package: ./target\n  run: '^TestPatches$'\n")
	spec.WriteString("build:\n  builder: native\n  base: scratch\n  files:\n")
	for f := 0; f < 25; f++ {
		fmt.Fprintf(&spec, "    - tree: %s\n      image: /src/%s\n", memPath(f), memPath(f))
	}
	spec.WriteString("image:\n  repository: " + memImage + "\n  tag: " + memTag(memPin) + "\n")
	appendFile(b, filepath.Join(root, "images", memImage, "patchkit.yaml"), spec.String())
	appendFile(b, filepath.Join(root, "Makefile"), "build:\n\t$(MAKE) image IMAGE="+memImage+"\n")
	pdir := filepath.Join(root, "patches", memImage)
	os.MkdirAll(filepath.Join(pdir, "tests"), 0o755)
	os.WriteFile(filepath.Join(pdir, "tests", "patches_test.go"), []byte(gateTest), 0o644)

	wt := filepath.Join(b.TempDir(), "wt")
	if out, err := exec.Command("git", "-c", "advice.detachedHead=false", "clone", "-q", "--branch", memTag(memPin), up, wt).CombinedOutput(); err != nil {
		b.Fatalf("clone: %v %s", err, out)
	}
	patches = writeTestedPatches(b, wt, pdir, []testedEdit{
		{"pkg00/value.go", memValue(2), "0001-value.diff", "TestPatches/value"},
		{"target/target.go", memTarget("patched"), "0002-name.diff", "TestPatches/name"},
	})
	if out, err := exec.Command("git", "-C", wt, "checkout", "-q", ".").CombinedOutput(); err != nil {
		b.Fatalf("git checkout: %v %s", err, out)
	}
	if out, err := exec.Command("git", append([]string{"-C", wt, "apply"}, patches...)...).CombinedOutput(); err != nil {
		b.Fatalf("git apply: %v %s", err, out)
	}
	os.WriteFile(filepath.Join(wt, "target", "patches_test.go"), []byte(gateTest), 0o644)
	return url, root, patches, next, wt
}

// memDeltas fails the benchmark unless most of the upstream's objects are
// stored as deltas, as a real history's are: the premise of the benchmark.
func memDeltas(b *testing.B, up string) {
	b.Helper()
	cmd := exec.Command("git", "cat-file", "--batch-all-objects", "--batch-check=%(deltabase)")
	cmd.Dir = up
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("git cat-file: %v", err)
	}
	all := strings.Fields(string(out))
	deltas := 0
	for _, base := range all {
		if strings.Trim(base, "0") != "" {
			deltas++
		}
	}
	b.Logf("upstream: %d objects, %d stored as deltas", len(all), deltas)
	if deltas < memCommits/2 {
		b.Fatalf("upstream: %d of %d objects are deltas, want at least %d", deltas, len(all), memCommits/2)
	}
}

func appendFile(b *testing.B, path, text string) {
	b.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		b.Fatal(err)
	}
}

// memRun runs a command under GNU time in dir with env and returns its peak
// RSS in KiB. An exit code outside ok fails the benchmark; a nil ok means 0.
func memRun(b *testing.B, dir string, env []string, ok []int, name string, args ...string) int64 {
	b.Helper()
	cmd, rss := measured(name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = env
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if err != nil && !containsInt(ok, code) {
		b.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return rss()
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// copyRoot copies the unit's root (images, patches, Makefile) for the
// commands that write into it.
func copyRoot(b *testing.B, root string) string {
	b.Helper()
	dst := filepath.Join(b.TempDir(), "root")
	if out, err := exec.Command("cp", "-a", root, dst).CombinedOutput(); err != nil {
		b.Fatalf("cp: %v %s", err, out)
	}
	return dst
}

// memPeaks is each command's largest peak RSS in KiB over the iterations.
type memPeaks map[string]int64

func (m memPeaks) add(name string, kib int64) { m[name] = max(m[name], kib) }

// BenchmarkMemoryKubeOVN runs every patchkit command a user runs on a
// kube-ovn-sized unit, each as its own process under GNU time, and fails when
// one's peak RSS passes 200 MiB (issue L). Beside each, where one exists, the
// git CLI's way of doing the same job (git- metrics), and for the gate one
// plain go test of the patched tree (go-test). Each iteration starts from an
// empty upstream cache. GNU time's %M is the peak RSS of the largest single
// process in the tree: patchkit itself, or a child it waited for (git, go,
// the compiler, the test binary); not their sum. So that the gate, build and
// upgrade figures are patchkit's and not the go toolchain's compiling the
// standard library into an empty build cache (about 300 MiB, whoever runs
// it), one go test fills the private GOCACHE first: go-test-cold. With
// -short (make bench-check) it leaves out upgrade --dry-run (which runs the
// gate), gate, build and the plain go test:
// the 200 MiB bound is then checked on every command that reads the history.
// First it measures the floor, patchkit --version beside git --version
// (floor-MiB, git-floor-MiB), and fails when patchkit's passes memFloorMiB,
// or when apply --check passes memGitRatio times git's.
func BenchmarkMemoryKubeOVN(b *testing.B) {
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		b.Fatal("this benchmark measures with GNU time: apt-get install time")
	}
	url, root, patches, next, patched := setupMemory(b)
	work := b.TempDir()
	env := goEnv(filepath.Join(work, "gocache"))
	pk, git, gotest := memPeaks{}, memPeaks{}, memPeaks{}
	pk.add("floor", memRun(b, work, env, nil, patchkitBin, "--version"))
	git.add("floor", memRun(b, work, env, nil, "git", "--version"))
	goTest := []string{"test", "-count=1", "-trimpath", "-run", "^TestPatches$", "./target"}
	if !testing.Short() {
		gotest.add("cold", memRun(b, patched, env, nil, "go", goTest...))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		memIteration(b, filepath.Join(work, fmt.Sprint(i)), env, url, root, patches, next, pk, git)
		if !testing.Short() {
			gotest.add("warm", memRun(b, patched, env, nil, "go", goTest...))
		}
	}
	b.StopTimer()
	var over []string
	for _, side := range []struct {
		prefix string
		peaks  memPeaks
	}{{"", pk}, {"git-", git}, {"go-test-", gotest}} {
		for name, kib := range side.peaks {
			metric := side.prefix + name + "-MiB"
			if side.prefix == "go-test-" {
				metric = "go-test-" + name + "-MiB"
			}
			mib := float64(kib) / 1024
			b.ReportMetric(mib, metric)
			b.Logf("%s %.1f", metric, mib)
			if side.prefix == "" && mib > memLimitMiB {
				over = append(over, fmt.Sprintf("%s %.0f MiB", name, mib))
			}
		}
	}
	if len(over) > 0 {
		b.Fatalf("over %d MiB: %s", memLimitMiB, strings.Join(over, ", "))
	}
	// Issue 24's goal, met by apply --check with 2 MiB to spare (14.8–15.1
	// MiB beside git's 12.9–13.1): a regression of its cold path fails
	// here. obsolete-check meets it by 0–1 MiB, too close to bound;
	// docs/benchmarks.md has both.
	if r := float64(pk["apply-check"]) / float64(git["apply-check"]); git["apply-check"] > 0 && r > memGitRatio {
		b.Fatalf("apply --check peaks at %.1f MiB, %.2f× git's %.1f MiB: over issue 24's %g×", float64(pk["apply-check"])/1024, r, float64(git["apply-check"])/1024, memGitRatio)
	}
	if mib := float64(pk["floor"]) / 1024; mib > memFloorMiB {
		b.Fatalf("patchkit --version peaks at %.1f MiB, over the %g MiB floor bound (memFloorMiB says what it covers)", mib, memFloorMiB)
	}
}

// memIteration runs each command once with a new cache under dir.
func memIteration(b *testing.B, dir string, env []string, url, root string, patches []string, next string, pk, git memPeaks) {
	b.Helper()
	os.MkdirAll(dir, 0o755)
	cache := filepath.Join(dir, "cache")
	p := func(name string, ok []int, r string, args ...string) {
		pk.add(name, memRun(b, r, env, ok, patchkitBin, append([]string{"--root", r, "--cache-dir", cache}, args...)...))
	}
	g := func(name, d string, args ...string) { git.add(name, memRun(b, d, env, nil, "git", args...)) }

	p("apply-check", nil, root, "apply", memImage, "--check")
	shallow := filepath.Join(dir, "shallow")
	g("apply-check", dir, "clone", "-q", "--depth", "1", "--branch", memTag(memPin), url, shallow)
	g("apply-check", shallow, append([]string{"apply", "--check"}, patches...)...)

	p("apply-out", nil, root, "apply", memImage, "--out", filepath.Join(dir, "out"))
	full := filepath.Join(dir, "full")
	g("clone-bare", dir, "clone", "-q", "--bare", url, full)
	tree := filepath.Join(dir, "tree")
	g("apply-out", dir, "--git-dir", full, "worktree", "add", "-q", "--detach", tree, memTag(memPin))
	g("apply-out", tree, append([]string{"apply"}, patches...)...)

	p("obsolete-check", []int{0, 1}, root, "obsolete-check", memImage, "-o", "json")
	git.add("obsolete-check", max(git["clone-bare"], memNaive(b, dir, env, full, patches)))

	p("verify", nil, root, "verify", memImage)
	g("verify", shallow, append([]string{"apply", "--check", "--whitespace=error"}, patches...)...)

	r := copyRoot(b, root)
	p("backport", nil, r, "backport", memImage, next, "--name", "next")
	g("backport", dir, "--git-dir", full, "format-patch", "-1", "--stdout", next)
	p("refresh", nil, r, "refresh", memImage)
	if testing.Short() {
		// make bench-check: the commands above hold the unit's history and
		// trees; upgrade (which runs the gate), gate and build add the go
		// toolchain's compiling, the toolchain's memory and most of this
		// benchmark's time, and short mode does not warm GOCACHE for them.
		return
	}
	p("upgrade-dry-run", []int{0, 1}, r, "upgrade", memImage, "--dry-run")
	p("gate", nil, root, "gate", memImage)
	p("build-native", nil, root, "build", memImage, "--oci-layout", filepath.Join(dir, "oci"))
}

// memNaive is obsolete-check the git way on the full clone: for each release
// after the pin, a worktree checked out at it, then per patch git apply -R
// --check (present) and git apply --check (applies). It returns the largest
// peak RSS.
func memNaive(b *testing.B, dir string, env []string, full string, patches []string) int64 {
	b.Helper()
	wt := filepath.Join(dir, "naive")
	rss := memRun(b, dir, env, nil, "git", "--git-dir", full, "worktree", "add", "-q", "--detach", wt, memTag(memPin))
	for t := memPin + 1; t < memReleases; t++ {
		rss = max(rss, memRun(b, wt, env, nil, "git", "checkout", "-q", memTag(t)))
		for _, p := range patches {
			rss = max(rss, memRun(b, wt, env, []int{0, 1}, "git", "apply", "-R", "--check", p))
			rss = max(rss, memRun(b, wt, env, []int{0, 1}, "git", "apply", "--check", p))
		}
	}
	return rss
}
