package obsolete

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/upstream"
)

// countingGit writes a git wrapper that appends its subcommand to a log file
// and runs the real git; calls returns the subcommands run so far, and
// forgets them.
func countingGit(t *testing.T) (bin string, calls func() []string) {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	bin = filepath.Join(dir, "git")
	script := "#!/bin/sh\necho \"$3\" >> " + log + "\nexec git \"$@\"\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, func() []string {
		b, _ := os.ReadFile(log)
		os.Remove(log)
		return strings.Fields(string(b))
	}
}

// memoFiles lists the memo entries of c.
func memoFiles(t *testing.T, c *upstream.Cache) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(c.DerivedDir(memoName), "*"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestHistoryMemo: a warm run reads what git said about the history from the
// cache's memo instead of running git, and reports exactly what a run that
// asks git reports; a damaged or truncated entry, a new release, or a moved
// shallow boundary makes the run ask git again.
func TestHistoryMemo(t *testing.T) {
	fx := newStatusFixture(t)
	c, pin := fx.openPinned(t)
	git, calls := countingGit(t)
	check := func() *Report {
		t.Helper()
		return checkAgain(t, c, pin, fx.patches, withGit(git))
	}
	askGit := []string{"rev-list", "log"}

	cold := check()
	if got := calls(); !reflect.DeepEqual(got, askGit) {
		t.Fatalf("cold run ran git %v, want %v", got, askGit)
	}
	if n := len(memoFiles(t, c)); n != 2 {
		t.Fatalf("memo holds %d entries after a cold run, want 2", n)
	}
	warm := check()
	if got := calls(); len(got) != 0 {
		t.Errorf("warm run ran git %v, want nothing", got)
	}
	if !reflect.DeepEqual(warm, cold) {
		t.Errorf("warm report differs from the cold one:\nwarm %+v\ncold %+v", warm, cold)
	}

	// Damage: one entry with a byte flipped, the other cut short (a
	// writer killed half-way would leave no entry at all; this is worse).
	files := memoFiles(t, c)
	gittest.FlipBit(t, files[0], -1)
	b, err := os.ReadFile(files[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(files[1], b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	// The verdict memo would spare the patch-ids' git log; this test is
	// the history memo's.
	os.RemoveAll(c.DerivedDir(verdictMemoName))
	damaged := check()
	if got := calls(); !reflect.DeepEqual(got, askGit) {
		t.Errorf("run on a damaged memo ran git %v, want %v", got, askGit)
	}
	if !reflect.DeepEqual(damaged, cold) {
		t.Errorf("report on a damaged memo differs from the cold one")
	}
	for _, f := range memoFiles(t, c) {
		if _, ok := readMemo(f); !ok {
			t.Errorf("memo entry %s was not rewritten whole", f)
		}
	}
	check()
	if got := calls(); len(got) != 0 {
		t.Errorf("run after the rewrite ran git %v, want nothing", got)
	}

	// Upstream moves on: a new release brings new commits.
	fx.release(t, c)
	moved := check()
	if got := calls(); !reflect.DeepEqual(got, askGit) {
		t.Errorf("run after a new release ran git %v, want %v", got, askGit)
	}
	if got, want := refNames(moved), "v1.1.0 v1.2.0"; got != want {
		t.Errorf("refs after a new release = %q, want %q", got, want)
	}

	// A shallow boundary changes what git reaches.
	if err := os.WriteFile(filepath.Join(c.Path(), "shallow"), []byte(fx.landD+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check()
	if got := calls(); !reflect.DeepEqual(got, askGit) {
		t.Errorf("run after the shallow boundary moved ran git %v, want %v", got, askGit)
	}
}

// TestMemoTempLeftovers: temporary files of killed writers are removed once
// they are old, and never taken for entries; entries unread for long are
// removed.
func TestMemoTempLeftovers(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "tmp-killed")
	fresh := filepath.Join(dir, "tmp-writing")
	unused := filepath.Join(dir, "unused-key")
	read := filepath.Join(dir, "read-key")
	for _, p := range []string{stale, fresh, unused, read} {
		if err := os.WriteFile(p, []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for p, age := range map[string]time.Duration{stale: 2 * staleTemp, unused: 2 * unusedEntry, read: 2 * unusedEntry} {
		old := time.Now().Add(-age)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	touchMemo(read)
	entry := filepath.Join(dir, "key")
	writeMemo(entry, []byte("payload"))
	if got, ok := readMemo(entry); !ok || string(got) != "payload" {
		t.Errorf("readMemo() = %q, %v; want the payload", got, ok)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a stale temporary file survived: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a fresh temporary file (another run's) was removed: %v", err)
	}
	if _, err := os.Stat(unused); !os.IsNotExist(err) {
		t.Errorf("an entry unread for long survived: %v", err)
	}
	if _, err := os.Stat(read); err != nil {
		t.Errorf("an entry just read was removed: %v", err)
	}
	if _, ok := readMemo(stale); ok {
		t.Errorf("a temporary file reads as an entry")
	}
}

// TestMemoSweptOncePerDir: a run that writes many entries (a cold run
// writes one per ref) sweeps each memo directory once, not before every
// write; every entry is written whole.
func TestMemoSweptOncePerDir(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	before := sweepCount.Load()
	for i := range 50 {
		for _, dir := range dirs {
			writeMemo(filepath.Join(dir, fmt.Sprintf("key-%02d", i)), []byte(fmt.Sprint("payload ", i)))
		}
	}
	if n := sweepCount.Load() - before; n != int64(len(dirs)) {
		t.Errorf("100 writes into 2 directories swept %d times, want 2", n)
	}
	for _, dir := range dirs {
		for i := range 50 {
			if got, ok := readMemo(filepath.Join(dir, fmt.Sprintf("key-%02d", i))); !ok || string(got) != fmt.Sprint("payload ", i) {
				t.Errorf("entry %d in %s = %q, %v", i, dir, got, ok)
			}
		}
	}
}
