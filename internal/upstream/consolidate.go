package upstream

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Every fetch keeps what it brought as a pack of its own (fetch.unpackLimit
// is 1: no loose objects), and every later run reads every pack's index and
// looks an object up in each pack in turn. A cache that a CI job fetches
// into daily holds hundreds of packs within a year; at 51 packs a warm
// offline obsolete-check on kube-ovn's shape took 0.15 s, 0.12 s once they
// were merged (docs/benchmarks.md). Open
// therefore merges the packs once there are more than maxPacks of them,
// with git's geometric repack: the small packs the fetches left are
// rolled into one, and the large pack of the first fetch is kept as it is,
// so the merge costs what the fetches since the last one brought.
//
// Merging deletes packs, which a reader that listed them may still be about
// to open, so it happens only when nobody reads the cache: Open tries, before
// it takes the readers lock shared, to take it exclusive without waiting,
// then the exclusive lock without waiting. When either is held by another
// run (or by another Cache of this process), Open goes on without merging,
// and a later Open merges. git repack installs the merged pack before it
// deletes the packs it replaces, so a repack killed at any point leaves
// every object in place: at worst some twice (the new pack and an old one)
// and its temporary files, which removeLeftovers clears. The repack dies
// with the process that runs it (see runRepack), so a killed run leaves no
// git behind that deletes packs under the next run's readers.

// maxPacks is the number of packs above which Open merges them.
var maxPacks = 10

// repackArgs are the arguments of the merge: delete the packs merged (-d),
// only this repository's objects (-l), no server info (-n), quietly, each
// pack at least twice the size of the next smaller one once done, and no
// bitmap (a cache serves no fetches).
var repackArgs = []string{"-c", "repack.writeBitmaps=false", "-c", "pack.writeBitmaps=false",
	"repack", "-d", "-l", "-n", "-q", "--geometric=2"}

// consolidate merges the packs of the cache when there are more than
// maxPacks and nobody reads the cache (see above). It reports whether it
// ran git repack. A failed repack changes nothing (git installs a new pack
// whole or not at all), so its error is not the run's: the integrity check
// that follows in open still judges the cache, and a later Open tries again.
func (c *Cache) consolidate(ctx context.Context) bool {
	packDir := filepath.Join(c.Path(), "objects", "pack")
	if countPacks(packDir) <= maxPacks {
		return false
	}
	rl, ok := tryLock(c.readersLockPath())
	if !ok {
		return false
	}
	defer rl.unlock()
	lk, ok := tryLock(c.lockPath())
	if !ok {
		return false
	}
	defer lk.unlock()
	if _, err := os.Stat(c.markerPath()); err == nil {
		return false // an interrupted fetch: open repairs the cache (offline: reports it)
	}
	c.removeLeftovers()
	if countPacks(packDir) <= maxPacks {
		return false
	}
	runRepack(ctx, c.Path())
	return true
}

// countPacks counts the packs in dir (their .pack files).
func countPacks(dir string) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if name := e.Name(); strings.HasPrefix(name, "pack-") && strings.HasSuffix(name, ".pack") {
			n++
		}
	}
	return n
}

// tryLock takes an exclusive lock on path if nobody holds it, without
// waiting.
func tryLock(path string) (*fileLock, bool) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return &fileLock{f: f}, true
}

// runRepack runs git repack (repackArgs) on the bare repository at dir,
// tied to this process (runTied).
func runRepack(ctx context.Context, dir string) error {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir", dir}, repackArgs...)...)
	cmd.Env = append(GitEnv(), traceEnv...)
	var stderr tailBuffer
	cmd.Stderr = &stderr
	if err := runTied(cmd); err != nil {
		return errors.Join(err, errors.New(stderr.String()))
	}
	return nil
}

// runTied runs cmd, which writes the cache, so that it dies with this
// process: the kernel kills it when the thread that started it ends
// (Pdeathsig), which it does when this process dies; the thread is locked
// to the goroutine until cmd exits, so the Go runtime neither reuses nor
// ends it meanwhile. A killed run so leaves no git writing into a cache
// that the next run reads or replaces. (git fetch is tied the same way by
// idleWatch.run.)
func runTied(cmd *exec.Cmd) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	return cmd.Run()
}
