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

	"github.com/patchkit/patchkit/internal/gittest"
)

// The obsolete-check benchmark, as issue B sets it: an upstream with 200
// release tags and a 10-patch series, some of whose patches land upstream as
// cherry-picks (other context, same patch-id) at different releases.
const (
	obsTags    = 200
	obsPatches = 10
	obsFiles   = 40
)

// landsAt says at which tag index patch i lands upstream; -1 never.
func landsAt(i int) int {
	switch i {
	case 1:
		return 15
	case 3:
		return 60
	case 4:
		return 60
	case 6:
		return 120
	case 8:
		return 185
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
func setupObsolete(b *testing.B) (string, string, []string) {
	b.Helper()
	var stream bytes.Buffer
	state := make([]map[int]string, obsFiles)
	for f := range state {
		state[f] = map[int]string{}
	}
	render := func() map[string]string {
		files := map[string]string{}
		for f := 0; f < obsFiles; f++ {
			files[fmt.Sprintf("src/f%02d.txt", f)] = obsFile(f, state[f])
		}
		return files
	}
	tags := make([]string, obsTags)
	mark := 0
	for t := 0; t < obsTags; t++ {
		tags[t] = fmt.Sprintf("v1.%d.%d", t/20, t%20)
		if t > 0 {
			// noise: every release changes a line of some file, away from the patched lines
			f := (t * 7) % obsFiles
			state[f][30+(t%20)] = fmt.Sprintf("file %d line %d: changed at release %d", f, 30+(t%20), t)
		}
		for i := 0; i < obsPatches; i++ {
			if landsAt(i) == t {
				// the cherry-pick lands as its own commit, before the release
				for l, r := range patchRepl(i) {
					state[i][l] = r
				}
				mark++
				commitStream(&stream, mark, mark-1, "", render(), int64(1700000000+t*3600-60))
			}
			if landsAt(i) >= 0 && landsAt(i)+30 == t {
				// later, upstream edits the context of the landed change: only
				// the patch-id still finds it
				state[i][12] = fmt.Sprintf("file %d line 12: reworded after patch %d landed", i, i)
			}
		}
		mark++
		commitStream(&stream, mark, mark-1, tags[t], render(), int64(1700000000+t*3600))
	}
	up := fastImport(b, stream.Bytes())

	root := b.TempDir()
	writeSpec(b, root, "obs", "file://"+up, tags[0], "v1.*")
	pdir := filepath.Join(root, "patches", "obs")
	os.MkdirAll(pdir, 0o755)
	wt := b.TempDir()
	if out, err := exec.Command("git", "-c", "advice.detachedHead=false", "clone", "-q", "--branch", tags[0], up, wt).CombinedOutput(); err != nil {
		b.Fatalf("clone: %v %s", err, out)
	}
	for i := 0; i < obsPatches; i++ {
		os.WriteFile(filepath.Join(wt, fmt.Sprintf("src/f%02d.txt", i)), []byte(obsFile(i, patchRepl(i))), 0o644)
		cmd := exec.Command("git", "diff")
		cmd.Dir = wt
		diff, err := cmd.Output()
		if err != nil {
			b.Fatal(err)
		}
		os.WriteFile(filepath.Join(pdir, fmt.Sprintf("%04d-fix-%d.diff", i+1, i)), append([]byte(fmt.Sprintf("Subject: fix %d\nOrigin: vendor\nForwarded: no\n\n", i)), diff...), 0o644)
		exec.Command("git", "-C", wt, "checkout", "-q", ".").Run()
	}
	return up, root, tags
}

// verdicts maps "patch@tag" to applies or present.
type verdicts map[string]string

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
	cmd, rss := measured(patchkitBin, "--root", root, "--cache-dir", cache, "--offline", "obsolete-check", "obs", "-o", "json")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() != 1 {
		b.Fatalf("patchkit obsolete-check: %v\n%s", err, errOut.String())
	}
	var rep struct {
		Patches []struct {
			File    string `json:"file"`
			Results []struct {
				Ref    string `json:"ref"`
				Status string `json:"status"`
			} `json:"results"`
		} `json:"patches"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		b.Fatalf("decoding obsolete-check json: %v\n%s", err, out.String())
	}
	v := verdicts{}
	for _, p := range rep.Patches {
		for _, r := range p.Results {
			v[filepath.Base(p.File)+"@"+r.Ref] = r.Status
		}
	}
	return v, rss()
}

// BenchmarkObsoleteCheck runs (a) patchkit obsolete-check and (b) the naive
// checkout-and-git-apply loop over 200 tags and 10 patches, and checks that
// they agree on every verdict the naive loop can give.
func BenchmarkObsoleteCheck(b *testing.B) {
	up, root, tags := setupObsolete(b)
	cache := b.TempDir()
	// warm the cache (online), then compare verdicts
	warm := exec.Command(patchkitBin, "--root", root, "--cache-dir", cache, "obsolete-check", "obs")
	warm.Env = gittest.Env()
	warm.Run()
	got, _ := patchkitObsolete(b, root, cache)
	want, _ := naive(b, up, root, tags)
	if len(got) != len(want) {
		b.Fatalf("patchkit gave %d verdicts, the naive loop %d", len(got), len(want))
	}
	// Where the naive loop has a verdict (present or applies) patchkit must
	// give the same one. Where it only sees a conflict, patchkit knows more:
	// the change is present by patch-id, or superseded.
	landed, onlyPatchID := 0, 0
	for k, w := range want {
		switch {
		case w != "conflict" && got[k] != w:
			b.Errorf("%s: patchkit %s, naive loop %s", k, got[k], w)
		case w == "conflict" && got[k] == "present":
			onlyPatchID++
		case w == "conflict" && got[k] != "conflict" && got[k] != "superseded":
			b.Errorf("%s: patchkit %s, naive loop conflict", k, got[k])
		}
		if w == "present" {
			landed++
		}
	}
	if landed == 0 || onlyPatchID == 0 {
		b.Fatalf("landed %d, found only by patch-id %d: the benchmark misses a case", landed, onlyPatchID)
	}
	b.Logf("%d verdicts agree; %d present by reverse apply, %d present only by patch-id", len(want), landed, onlyPatchID)

	b.Run("naive-git-loop", func(b *testing.B) {
		var rss int64
		for i := 0; i < b.N; i++ {
			_, r := naive(b, up, root, tags)
			rss = max(rss, r)
		}
		b.ReportMetric(float64(rss), "maxRSS-KiB")
	})
	b.Run("patchkit", func(b *testing.B) {
		var rss int64
		for i := 0; i < b.N; i++ {
			_, r := patchkitObsolete(b, root, cache)
			rss = max(rss, r)
		}
		b.ReportMetric(float64(rss), "maxRSS-KiB")
	})
}
