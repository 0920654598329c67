package upstream

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// withMaxPacks sets maxPacks for one test.
func withMaxPacks(t *testing.T, n int) {
	old := maxPacks
	maxPacks = n
	t.Cleanup(func() { maxPacks = old })
}

// packsOf counts the packs of the cache at repo.
func packsOf(repo string) int { return countPacks(filepath.Join(repo, "objects", "pack")) }

// fetchReleases releases n unrelated commits upstream, each fetched into
// the cache in dir by a run of its own (Open, Fetch, Close): one pack each.
func fetchReleases(t *testing.T, f *fixture, dir string, from, n int) {
	t.Helper()
	ctx := context.Background()
	for i := from; i < from+n; i++ {
		f.repo.Write(fmt.Sprintf("releases/%d.txt", i), strings.Repeat("release\n", i+1))
		f.repo.Release(fmt.Sprintf("release %d", i), fmt.Sprintf("v3.%d.0", i))
		c, err := Open(ctx, dir, f.repo.URL())
		if err != nil {
			t.Fatalf("Open() = %v", err)
		}
		if err := c.Fetch(ctx); err != nil {
			t.Fatalf("Fetch() = %v", err)
		}
		c.Close()
	}
}

// checkCache opens the cache offline (and closes it) and checks that every tag of the
// upstream resolves to the upstream's commit and that git fsck finds
// nothing wrong.
func checkCache(t *testing.T, f *fixture, dir string) {
	t.Helper()
	c := open(t, dir, f.repo.URL(), WithOffline(true))
	defer c.Close()
	for _, line := range strings.Split(strings.TrimSpace(f.repo.Git("for-each-ref", "--format=%(refname:short) %(objectname)", "refs/tags")), "\n") {
		name, id, _ := strings.Cut(line, " ")
		if got, err := c.Resolve(name); err != nil || got != strings.TrimSpace(f.repo.Git("rev-parse", id+"^{commit}")) {
			t.Errorf("Resolve(%s) = %s, %v after the packs were merged", name, got, err)
		}
	}
	fsck(t, c)
}

// TestConsolidatePacks: a cache fetched into run after run holds one pack
// per fetch; once they are more than maxPacks, the next Open merges them with
// one git repack (counted through git's trace), and every ref still resolves
// and fsck passes. At or under the limit nothing runs.
func TestConsolidatePacks(t *testing.T) {
	withMaxPacks(t, 4)
	f := newFixture(t)
	dir := t.TempDir()
	open(t, dir, f.repo.URL()).Close()
	repo := filepath.Join(dir, cacheKey(f.repo.URL())+".git")
	fetchReleases(t, f, dir, 0, 3)
	if n := packsOf(repo); n != 4 {
		t.Fatalf("%d packs after a clone and 3 fetches of one commit each, want 4", n)
	}
	traced := traceFetches(t)
	checkCache(t, f, dir)
	if tr := traced(); count(tr.commands, "repack") != 0 || packsOf(repo) != 4 {
		t.Fatalf("at the limit (4 packs): repack ran %d times, %d packs; want none, 4", count(tr.commands, "repack"), packsOf(repo))
	}

	fetchReleases(t, f, dir, 3, 1) // its Open finds 4 packs, its fetch adds the 5th
	traced()
	checkCache(t, f, dir)
	tr := traced()
	if count(tr.commands, "repack") != 1 {
		t.Errorf("5 packs over a limit of 4: repack ran %d times, want once (commands %q)", count(tr.commands, "repack"), tr.commands)
	}
	if n := packsOf(repo); n > 2 {
		t.Errorf("%d packs after the merge, want the clone's and one of the four fetches' at most", n)
	}
	if got := leftovers(t, dir); len(got) != 0 {
		t.Errorf("cache dir holds %v after the merge", got)
	}
}

// TestConsolidateWaitsForReaders: packs are merged only when nobody reads
// the cache. A reader in another process (flock(1) holding the readers lock
// shared, as every open Cache does) or another open Cache of this process
// leaves the packs as they are, and the Open still succeeds; the first Open
// after they are gone merges.
func TestConsolidateWaitsForReaders(t *testing.T) {
	withMaxPacks(t, 2)
	f := newFixture(t)
	dir := t.TempDir()
	maxPacks = 100
	open(t, dir, f.repo.URL()).Close()
	fetchReleases(t, f, dir, 0, 3)
	maxPacks = 2
	repo := filepath.Join(dir, cacheKey(f.repo.URL())+".git")
	readers := filepath.Join(dir, cacheKey(f.repo.URL())+".readers.lock")

	flock := exec.Command("flock", "--shared", readers, "sh", "-c", "echo held; exec sleep 60")
	flock.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the sleep holds the lock too
	stop := func() { syscall.Kill(-flock.Process.Pid, syscall.SIGKILL); flock.Wait() }
	out, err := flock.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := flock.Start(); err != nil {
		t.Fatalf("flock: %v (util-linux's flock(1) is needed)", err)
	}
	t.Cleanup(stop)
	buf := make([]byte, 5)
	if _, err := out.Read(buf); err != nil || string(buf) != "held\n" {
		t.Fatalf("flock said %q, %v", buf, err)
	}
	checkCache(t, f, dir)
	if n := packsOf(repo); n != 4 {
		t.Errorf("another process reads the cache: %d packs, want the 4 left alone", n)
	}
	stop()

	maxPacks = 100
	c := open(t, dir, f.repo.URL(), WithOffline(true)) // this process's own reader
	maxPacks = 2
	checkCache(t, f, dir)
	if n := packsOf(repo); n != 4 {
		t.Errorf("another Cache of this process is open: %d packs, want the 4 left alone", n)
	}
	c.Close()

	checkCache(t, f, dir)
	if n := packsOf(repo); n > 2 {
		t.Errorf("no reader left: %d packs, want them merged", n)
	}
}

// TestConsolidateKilled kills -9 a run while its git repack runs. The
// repack dies with it (a git that went on deleting packs would pull them
// from under the next run's readers), and the next Open clears the
// temporary pack a killed repack leaves, merges, and reads every ref.
func TestConsolidateKilled(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	open(t, dir, f.repo.URL()).Close()
	fetchReleases(t, f, dir, 0, 3)
	repo := filepath.Join(dir, cacheKey(f.repo.URL())+".git")
	tmpPack := filepath.Join(repo, "objects", "pack", ".tmp-4242-pack-0123456789abcdef0123456789abcdef01234567.pack")
	if err := os.WriteFile(tmpPack, []byte("PACK half written"), 0o644); err != nil {
		t.Fatal(err)
	}

	killMidGit(t, dir, f.repo.URL(), "repack", helperPacksEnv+"=2")

	withMaxPacks(t, 2)
	checkCache(t, f, dir)
	if _, err := os.Stat(tmpPack); !os.IsNotExist(err) {
		t.Errorf("the killed repack's temporary pack is still there (%v)", err)
	}
	if n := packsOf(repo); n > 2 {
		t.Errorf("%d packs after the next Open, want them merged", n)
	}
}

// killMidGit runs the helper process (TestMain) on the cache in dir with a
// git on its PATH whose subcommand sub records its pid and hangs, kills the
// helper with SIGKILL once that git runs, and fails the test unless that git
// dies with it. env is added to the helper's environment.
func killMidGit(t *testing.T, dir, url, sub string, env ...string) {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin, pidFile := t.TempDir(), filepath.Join(t.TempDir(), sub+".pid")
	script := fmt.Sprintf("#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = %s ] && { echo $$ > %s.tmp; mv %s.tmp %s; exec sleep 60; }; done\nexec %s \"$@\"\n", sub, pidFile, pidFile, pidFile, real)
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(append(os.Environ(), helperEnv+"=1", helperDirEnv+"="+dir, helperURLEnv+"="+url,
		helperRefEnv+"=main", "PATH="+bin+":"+os.Getenv("PATH")), env...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for deadline := time.Now().Add(30 * time.Second); pid == 0; time.Sleep(20 * time.Millisecond) {
		if data, err := os.ReadFile(pidFile); err == nil {
			fmt.Sscan(string(data), &pid)
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the helper never ran git %s:\n%s", sub, out.String())
		}
	}
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	for deadline := time.Now().Add(10 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			killPID(pid)
			t.Fatalf("git %s (pid %d) outlived the killed run", sub, pid)
		}
	}
}

// alive reports whether the process pid runs (a zombie, which nobody reaped
// yet, has ended).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...
	i := strings.LastIndexByte(string(data), ')')
	return i < 0 || i+2 >= len(data) || data[i+2] != 'Z'
}

func killPID(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

// TestKilledFetchLeavesNoGit kills -9 a run while its git fetch runs: the
// git fetch dies with it, rather than go on writing into a cache that the
// next run finds interrupted and replaces. The next run then fetches.
func TestKilledFetchLeavesNoGit(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	open(t, dir, f.repo.URL()).Close()
	f.repo.Write("late.txt", "late\n")
	want := f.repo.Release("late", "v4.0.0")

	killMidGit(t, dir, f.repo.URL(), "fetch")

	c := open(t, dir, f.repo.URL())
	if err := c.Fetch(context.Background()); err != nil {
		t.Fatalf("Fetch() after the killed run = %v", err)
	}
	if got := resolveOK(t, c, "v4.0.0"); got != want {
		t.Errorf("Resolve(v4.0.0) = %s, want %s", got, want)
	}
	fsck(t, c)
}
