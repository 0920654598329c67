package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/gittest"
)

// obsShape sizes an obsolete-check benchmark's upstream: release tags
// v1.<t/20>.<t%20> (all matched by the spec's releases glob), files, and
// per release some untagged commits and some tags the glob does not match
// (nightly-<t>-<n>, loose refs in the cache, as a real upstream's many
// tags). A 10-patch series; some patches land upstream as cherry-picks
// (other context, same patch-id) at the releases land gives.
type obsShape struct {
	tags, files, commitsPerTag, extraTagsPerTag int
	land                                        map[int]int // patch -> release index
}

const obsPatches = 10

// issueB is the shape issue B set: 200 releases of 40 files.
var issueB = obsShape{tags: 200, files: 40, commitsPerTag: 0, extraTagsPerTag: 0,
	land: map[int]int{1: 15, 3: 60, 4: 60, 6: 120, 8: 185}}

// kubeOVN is kube-ovn's shape (issue L): about 1,000 files, a long history
// (2,400 commits), 24 release refs in the scan and 480 other tags.
var kubeOVN = obsShape{tags: 24, files: 1000, commitsPerTag: 99, extraTagsPerTag: 20,
	land: map[int]int{1: 3, 3: 8, 4: 8, 6: 14, 8: 20}}

// landsAt says at which tag index patch i lands upstream; -1 never.
func (sh obsShape) landsAt(i int) int {
	if t, ok := sh.land[i]; ok {
		return t
	}
	return -1
}

func obsLine(file, line int) string {
	return fmt.Sprintf("file %d line %d: generated upstream text", file, line)
}

// obsFile renders file f with a set of replaced lines.
func obsFile(f int, repl map[int]string) string {
	var s strings.Builder
	for l := 0; l < 80; l++ {
		if r, ok := repl[l]; ok {
			s.WriteString(r + "\n")
			continue
		}
		s.WriteString(obsLine(f, l) + "\n")
	}
	return s.String()
}

// The change patch i makes: two lines of file i (hunks far apart).
func patchRepl(i int) map[int]string {
	return map[int]string{
		10: fmt.Sprintf("file %d line 10: fixed by patch %d", i, i),
		60: fmt.Sprintf("file %d line 60: fixed by patch %d", i, i),
	}
}

// setupObsolete builds the upstream with fast-import and the series with git
// diff, and returns the upstream dir, the repo root and the tag names.
func setupObsolete(b *testing.B, sh obsShape) (string, string, []string) {
	b.Helper()
	up, tags := obsUpstream(b, sh)
	root := b.TempDir()
	writeSpec(b, root, "obs", "file://"+up, tags[0], "v1.*")
	writeObsPatches(b, up, tags[0], filepath.Join(root, "patches", "obs"), obsPatches)
	return up, root, tags
}

// obsUpstream builds an upstream of shape sh with fast-import and returns
// its dir and its release tags, oldest first.
func obsUpstream(b *testing.B, sh obsShape) (string, []string) {
	b.Helper()
	var stream bytes.Buffer
	state := make([]map[int]string, sh.files)
	for f := range state {
		state[f] = map[int]string{}
	}
	// render gives every file the first time, then only the changed ones.
	dirty := map[int]bool{}
	for f := 0; f < sh.files; f++ {
		dirty[f] = true
	}
	render := func() map[string]string {
		files := map[string]string{}
		for f := range dirty {
			files[obsPath(f)] = obsFile(f, state[f])
		}
		clear(dirty)
		return files
	}
	change := func(f, l int, text string) {
		state[f][l] = text
		dirty[f] = true
	}
	tags := make([]string, sh.tags)
	mark := 0
	for t := 0; t < sh.tags; t++ {
		tags[t] = fmt.Sprintf("v1.%d.%d", t/20, t%20)
		if t > 0 {
			// noise: every release changes a line of some file, away from the patched lines
			f := (t * 7) % sh.files
			change(f, 30+(t%20), fmt.Sprintf("file %d line %d: changed at release %d", f, 30+(t%20), t))
			// and untagged commits change lines of files no patch touches
			for n := 0; n < sh.commitsPerTag; n++ {
				f := obsPatches + (t*131+n*17)%(sh.files-obsPatches)
				change(f, (n*7)%80, fmt.Sprintf("file %d: commit %d of release %d", f, n, t))
				mark++
				commitStream(&stream, mark, mark-1, "", render(), int64(1700000000+t*3600-1800+n))
				for e := 0; e < sh.extraTagsPerTag && n == 0; e++ {
					fmt.Fprintf(&stream, "reset refs/tags/nightly-%d-%d\nfrom :%d\n", t, e, mark)
				}
			}
		}
		for i := 0; i < obsPatches; i++ {
			if sh.landsAt(i) == t {
				// the cherry-pick lands as its own commit, before the release
				for l, r := range patchRepl(i) {
					change(i, l, r)
				}
				mark++
				commitStream(&stream, mark, mark-1, "", render(), int64(1700000000+t*3600-60))
			}
			if sh.landsAt(i) >= 0 && sh.landsAt(i)+max(2, sh.tags/7) == t {
				// later, upstream edits the context of the landed change: only
				// the patch-id still finds it
				change(i, 12, fmt.Sprintf("file %d line 12: reworded after patch %d landed", i, i))
			}
		}
		mark++
		commitStream(&stream, mark, mark-1, tags[t], render(), int64(1700000000+t*3600))
	}
	return fastImport(b, stream.Bytes()), tags
}

// writeObsPatches writes into pdir the series of n patches (patch i makes
// patchRepl(i) in file i), each a git diff against up's tag pin.
func writeObsPatches(b *testing.B, up, pin, pdir string, n int) {
	b.Helper()
	os.MkdirAll(pdir, 0o755)
	wt := b.TempDir()
	if out, err := exec.Command("git", "-c", "advice.detachedHead=false", "clone", "-q", "--branch", pin, up, wt).CombinedOutput(); err != nil {
		b.Fatalf("clone: %v %s", err, out)
	}
	for i := 0; i < n; i++ {
		os.WriteFile(filepath.Join(wt, obsPath(i)), []byte(obsFile(i, patchRepl(i))), 0o644)
		cmd := exec.Command("git", "diff")
		cmd.Dir = wt
		diff, err := cmd.Output()
		if err != nil {
			b.Fatal(err)
		}
		os.WriteFile(filepath.Join(pdir, fmt.Sprintf("%04d-fix-%d.diff", i+1, i)), append([]byte(fmt.Sprintf("Subject: fix %d\nOrigin: vendor\nForwarded: no\n\n", i)), diff...), 0o644)
		exec.Command("git", "-C", wt, "checkout", "-q", ".").Run()
	}
}

// obsPath is generated file f's path: 25 files a directory.
func obsPath(f int) string {
	if f < 40 {
		return fmt.Sprintf("src/f%02d.txt", f) // issue B's layout
	}
	return fmt.Sprintf("pkg%02d/f%04d.txt", f/25, f)
}

// verdicts maps "patch@tag" to applies or present.
type verdicts map[string]string

// reportPatches is the "patches" of one unit in obsolete-check's JSON report:
// what the benchmarks read of it.
type reportPatches []struct {
	File    string `json:"file"`
	Results []struct {
		Ref    string `json:"ref"`
		Status string `json:"status"`
	} `json:"results"`
}

// add puts the patches' verdicts into v, each under prefix, the patch's
// file name, '@' and the ref.
func (ps reportPatches) add(v verdicts, prefix string) {
	for _, p := range ps {
		for _, r := range p.Results {
			v[prefix+filepath.Base(p.File)+"@"+r.Ref] = r.Status
		}
	}
}

// naive is the loop a reviewer would script: for each tag, check out, then
// for each patch git apply -R --check (present) and git apply --check (applies).
func naive(b *testing.B, up, root string, tags []string) (verdicts, int64) {
	wt := filepath.Join(b.TempDir(), "wt")
	rss := run(b, "", "git", "clone", "-q", up, wt)
	patches, _ := filepath.Glob(filepath.Join(root, "patches/obs/*.diff"))
	v := verdicts{}
	for _, tag := range tags[1:] {
		rss = max(rss, run(b, wt, "git", "-c", "advice.detachedHead=false", "checkout", "-q", tag))
		for _, p := range patches {
			key := filepath.Base(p) + "@" + tag
			if exec.Command("git", "-C", wt, "apply", "-R", "--check", p).Run() == nil {
				v[key] = "present"
			} else if exec.Command("git", "-C", wt, "apply", "--check", p).Run() == nil {
				v[key] = "applies"
			} else {
				v[key] = "conflict"
			}
		}
	}
	return v, rss
}

// patchkitObsolete runs patchkit obsolete-check --offline on a warm cache.
func patchkitObsolete(b *testing.B, root, cache string) (verdicts, int64) {
	return patchkitVerdicts(b, root, cache, "--offline")
}

// patchkitVerdicts runs patchkit obsolete-check -o json with the global
// flags given (none: it may fetch) and returns its verdicts.
func patchkitVerdicts(b *testing.B, root, cache string, flags ...string) (verdicts, int64) {
	cmd, rss := measured(patchkitBin, append(append([]string{"--root", root, "--cache-dir", cache}, flags...), "obsolete-check", "obs", "-o", "json")...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() != 1 {
		b.Fatalf("patchkit obsolete-check: %v\n%s", err, errOut.String())
	}
	var rep struct {
		Patches reportPatches `json:"patches"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		b.Fatalf("decoding obsolete-check json: %v\n%s", err, out.String())
	}
	v := verdicts{}
	rep.Patches.add(v, "")
	return v, rss()
}

// BenchmarkObsoleteCheck runs (a) patchkit obsolete-check and (b) the naive
// checkout-and-git-apply loop over 200 tags and 10 patches (issue B's
// shape), and checks that they agree on every verdict the naive loop can
// give.
func BenchmarkObsoleteCheck(b *testing.B) { benchObsolete(b, issueB) }

// BenchmarkObsoleteKubeOVN is the same on kube-ovn's shape: 1,000 files,
// 2,400 commits, 24 releases in the scan, 480 other tags (issue L).
func BenchmarkObsoleteKubeOVN(b *testing.B) { benchObsolete(b, kubeOVN) }

func benchObsolete(b *testing.B, sh obsShape) {
	up, root, tags := setupObsolete(b, sh)
	cache := b.TempDir()
	// warm the cache (online), then compare verdicts
	warm := exec.Command(patchkitBin, "--root", root, "--cache-dir", cache, "obsolete-check", "obs")
	warm.Env = gittest.Env()
	warm.Run()
	got, _ := patchkitObsolete(b, root, cache)
	want, _ := naive(b, up, root, tags)
	compareVerdicts(b, got, want)
	if testing.Short() {
		return // make bench-check: the agreement above; the timed runs below are make bench's
	}

	var naiveRuns, pkRuns []time.Duration
	b.Run("naive-git-loop", func(b *testing.B) {
		var rss int64
		for i := 0; i < b.N; i++ {
			start := time.Now()
			_, r := naive(b, up, root, tags)
			naiveRuns = append(naiveRuns, time.Since(start))
			rss = max(rss, r)
		}
		b.ReportMetric(float64(rss), "maxRSS-KiB")
		spread(b, "naive", naiveRuns)
	})
	b.Run("patchkit", func(b *testing.B) {
		var rss int64
		for i := 0; i < b.N; i++ {
			start := time.Now()
			_, r := patchkitObsolete(b, root, cache)
			pkRuns = append(pkRuns, time.Since(start))
			rss = max(rss, r)
		}
		b.ReportMetric(float64(rss), "maxRSS-KiB")
		spread(b, "patchkit", pkRuns)
	})
}

// compareVerdicts fails the benchmark unless patchkit gives the naive loop's
// verdict wherever the loop has one (present or applies). Where the loop only
// sees a conflict, patchkit knows more: the change is present by patch-id, or
// superseded.
func compareVerdicts(b *testing.B, got, want verdicts) {
	b.Helper()
	if len(got) != len(want) {
		b.Fatalf("patchkit gave %d verdicts, the naive loop %d", len(got), len(want))
	}
	landed, onlyPatchID := 0, 0
	for k, w := range want {
		switch {
		case w != "conflict" && got[k] != w:
			b.Fatalf("%s: patchkit %s, naive loop %s", k, got[k], w)
		case w == "conflict" && got[k] == "present":
			onlyPatchID++
		case w == "conflict" && got[k] != "conflict" && got[k] != "superseded":
			b.Fatalf("%s: patchkit %s, naive loop conflict", k, got[k])
		}
		if w == "present" {
			landed++
		}
	}
	if landed == 0 || onlyPatchID == 0 {
		b.Fatalf("landed %d, found only by patch-id %d: the benchmark misses a case", landed, onlyPatchID)
	}
	b.Logf("%d verdicts agree; %d present by reverse apply, %d present only by patch-id", len(want), landed, onlyPatchID)
}
