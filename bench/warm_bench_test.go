package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/gittest"
)

// BenchmarkObsoleteWarm reports obsolete-check's three cases separately on
// kube-ovn's shape, each beside the naive loop (checkout, then git apply -R
// --check || git apply --check per patch and ref) doing the same job:
//   - cold: an empty cache (patchkit fetches; the loop clones);
//   - warm: nothing new upstream (patchkit offline, on its cache and its
//     memos; the loop on its existing clone);
//   - warm-online: the same, online (patchkit lists the upstream's refs,
//     finds nothing new and fetches nothing): the baseline of "moved";
//   - moved: upstream has one new commit, an unrelated release (patchkit
//     fetches; the loop fetches and loops again).
//
// After each case patchkit's verdicts must agree with the loop's (see
// compareVerdicts); time is reported, never asserted. With -short (make
// bench-check) every case runs once.
//
// It runs five times: "file" serves the upstream over file:// (git runs
// the upload-pack itself), "git-daemon" over git:// from git daemon on
// loopback, the way a remote serves it, where each connection and round
// trip costs what a network adds, "http" over smart HTTP from git
// http-backend on loopback (gittest.HTTP), the transport GitHub serves,
// and "git-daemon-pulls" and "http-pulls" the same with the 5,862
// refs/pull/* that a mirror of kube-ovn's GitHub repository lists
// (kubePulls): every listing of patchkit's carries them, git clone and
// fetch --tags ask for tags and branches only. With -short only "file"
// runs: the agreement checks are the same.
func BenchmarkObsoleteWarm(b *testing.B) {
	b.Run("file", func(b *testing.B) { benchWarm(b, nil, 0) })
	if !testing.Short() {
		b.Run("git-daemon", func(b *testing.B) { benchWarm(b, serve, 0) })
		b.Run("git-daemon-pulls", func(b *testing.B) { benchWarm(b, serve, kubePulls) })
		b.Run("http", func(b *testing.B) { benchWarm(b, serveHTTP, 0) })
		b.Run("http-pulls", func(b *testing.B) { benchWarm(b, serveHTTP, kubePulls) })
	}
}

// serveHTTP serves the repository dir over smart HTTP on loopback and
// returns its URL.
func serveHTTP(b *testing.B, dir string) string { return gittest.HTTP(b, dir) }

// kubePulls is how many refs/pull/* the kube-ovn mirror of
// docs/benchmarks.md lists.
const kubePulls = 5862

// benchWarm is BenchmarkObsoleteWarm over file://, or over what server
// serves the upstream with when it is not nil, with pulls refs/pull/*
// upstream; the naive loop clones and fetches from the same place.
func benchWarm(b *testing.B, server func(*testing.B, string) string, pulls int) {
	up, root, tags := setupObsolete(b, kubeOVN)
	if pulls > 0 {
		addPulls(b, up, pulls)
	}
	origin := up
	if server != nil {
		origin = server(b, up)
		writeSpec(b, root, "obs", origin, tags[0], "v1.*")
	}
	work := b.TempDir()
	var pkCold, pkWarm, pkWarmOnline, pkMoved, gitCold, gitWarm, gitMoved []time.Duration
	timed := func(ds *[]time.Duration, f func()) {
		start := time.Now()
		f()
		*ds = append(*ds, time.Since(start))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cache := filepath.Join(work, fmt.Sprintf("cache-%d", i))
		wt := filepath.Join(work, fmt.Sprintf("wt-%d", i))
		var got, want verdicts
		timed(&pkCold, func() { got = patchkitOnline(b, root, cache) })
		timed(&gitCold, func() {
			run(b, "", "git", "clone", "-q", origin, wt)
			want = naiveLoop(b, wt, root, tags)
		})
		compareVerdicts(b, got, want)

		timed(&pkWarm, func() { got, _ = patchkitObsolete(b, root, cache) })
		timed(&gitWarm, func() { want = naiveLoop(b, wt, root, tags) })
		compareVerdicts(b, got, want)
		timed(&pkWarmOnline, func() { got = patchkitOnline(b, root, cache) })
		compareVerdicts(b, got, want)

		b.StopTimer()
		tag := fmt.Sprintf("v1.99.%d", i) // a release after every other, matching "v1.*"
		tags = append(tags, tag)
		commitUnrelated(b, up, tag, i)
		b.StartTimer()
		timed(&pkMoved, func() { got = patchkitOnline(b, root, cache) })
		timed(&gitMoved, func() {
			run(b, wt, "git", "fetch", "-q", "--tags", "origin")
			want = naiveLoop(b, wt, root, tags)
		})
		compareVerdicts(b, got, want)
		b.StopTimer()
		os.RemoveAll(cache)
		os.RemoveAll(wt)
		b.StartTimer()
	}
	b.StopTimer()
	for _, s := range []struct {
		name string
		ds   []time.Duration
	}{{"cold", pkCold}, {"naive-cold", gitCold}, {"warm", pkWarm}, {"naive-warm", gitWarm}, {"warm-online", pkWarmOnline}, {"moved", pkMoved}, {"naive-moved", gitMoved}} {
		spread(b, s.name, s.ds)
	}
}

// patchkitOnline runs obsolete-check with fetching allowed and returns its
// verdicts.
func patchkitOnline(b *testing.B, root, cache string) verdicts {
	b.Helper()
	v, _ := patchkitVerdicts(b, root, cache)
	return v
}

// naiveLoop is naive's loop on an existing clone wt.
func naiveLoop(b *testing.B, wt, root string, tags []string) verdicts {
	b.Helper()
	patches, _ := filepath.Glob(filepath.Join(root, "patches/obs/*.diff"))
	v := verdicts{}
	for _, tag := range tags[1:] {
		run(b, wt, "git", "-c", "advice.detachedHead=false", "checkout", "-q", tag)
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
	return v
}

// commitUnrelated commits, on up's main branch, a new file no patch
// touches, and tags it (fast-import: up has no work tree).
func commitUnrelated(b *testing.B, up, tag string, i int) {
	b.Helper()
	msg := "unrelated " + tag
	stream := fmt.Sprintf("commit refs/heads/main\ncommitter Bench <bench@example.com> %d +0000\ndata %d\n%s\nfrom refs/heads/main^0\n"+
		"M 100644 inline unrelated-%d.txt\ndata 6\nmoved\n\nreset refs/tags/%s\nfrom refs/heads/main\n\n",
		1800000000+i, len(msg), msg, i, tag)
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = up
	cmd.Env = gittest.Env()
	cmd.Stdin = strings.NewReader(stream)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git fast-import: %v\n%s", err, out)
	}
}

// addPulls gives the upstream up n refs/pull/<i>/head and /merge refs, as
// GitHub keeps for every pull request, pointing at its commits in turn,
// packed as git pack-refs leaves them.
func addPulls(b *testing.B, up string, n int) {
	b.Helper()
	git := func(stdin []byte, args ...string) string {
		out, e, err := gittest.Run(up, stdin, args...)
		if err != nil {
			b.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, e)
		}
		return out
	}
	commits := strings.Fields(git(nil, "rev-list", "--all"))
	var in strings.Builder
	for i := range n / 2 {
		c := commits[i%len(commits)]
		fmt.Fprintf(&in, "create refs/pull/%d/head %s\ncreate refs/pull/%d/merge %s\n", i+1, c, i+1, c)
	}
	git([]byte(in.String()), "update-ref", "--stdin")
	git(nil, "pack-refs", "--all")
}
