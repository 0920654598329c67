package pipeline

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/sys/unix"

	"github.com/patchkit/patchkit/internal/gittest"
)

// opens counts, per unit, the caches prepare opens (Env.prepared).
type opens struct {
	mu sync.Mutex
	n  map[string]int
}

func (o *opens) count(name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.n[name]++
}

func (o *opens) get() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string]int{}
	for k, v := range o.n {
		out[k] = v
	}
	return out
}

// handoverRoot makes a repository root with three units: img (pinned at
// v1) and img3 (at v2) on one upstream, img2 on another. None of them is
// quick: every unit needs the full work. The env counts the caches
// prepare opens per unit.
func handoverRoot(t *testing.T) (Env, *opens, []string) {
	t.Helper()
	var ups []*gittest.Repo
	for range 2 {
		up := gittest.New(t)
		up.Write("greet.txt", "hello\n")
		up.Commit("v1")
		up.Tag("v1")
		up.Write("other.txt", "x\n")
		up.Commit("v2")
		up.Tag("v2")
		ups = append(ups, up)
	}
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{
		"images/img/patchkit.yaml":  "upstream:\n  url: " + ups[0].URL() + "\n  ref: v1\npatches: patches/img\n",
		"images/img2/patchkit.yaml": "upstream:\n  url: " + ups[1].URL() + "\n  ref: v1\npatches: patches/img\n",
		"images/img3/patchkit.yaml": "upstream:\n  url: " + ups[0].URL() + "\n  ref: v2\npatches: patches/img\n",
		"patches/img/0001-greet.diff": "Subject: greet\n\n" +
			"diff --git a/greet.txt b/greet.txt\n--- a/greet.txt\n+++ b/greet.txt\n@@ -1 +1 @@\n-hello\n+hello world\n",
	})
	o := &opens{n: map[string]int{}}
	return Env{Root: root, CacheDir: t.TempDir(), Shallow: true, prepared: o.count}, o, []string{"img", "img2", "img3"}
}

func notQuick(context.Context, string) (string, bool, error) { return "", false, nil }

// heldLocks names the readers locks of the caches under dir that a Cache
// still holds: an exclusive flock through a new open fails while any open
// Cache, of this process too, holds one shared.
func heldLocks(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.readers.lock"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no readers lock in %s (%v): the check below proves nothing", dir, err)
	}
	var held []string
	for _, p := range paths {
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			held = append(held, filepath.Base(p))
		}
		f.Close()
	}
	sort.Strings(held)
	return held
}

// handoverRun is obsolete-check's run in small: Prefetch, then each unit
// through Quick and With, the runner taking what Prefetch prepared.
func handoverRun(t *testing.T, env Env, names []string, work func(ctx context.Context, im *Image) (string, error)) ([]Unit[string], error) {
	t.Helper()
	ctx := context.Background()
	pre := Prefetch(ctx, env, names, 2, notQuick)
	defer pre.Close()
	r := Runner{Env: env, Repair: true, Alone: true, Prepared: pre.Take}
	units, err := Each(ctx, r, names, func(ctx context.Context, name string) (string, error) {
		if out, ok, err := pre.Quick(ctx, name); err != nil || ok {
			return out, err
		}
		return With(ctx, r, name, func(ctx context.Context, im *Image) (string, error) {
			if err := pre.Fetch(ctx, im); err != nil {
				return "", err
			}
			return work(ctx, im)
		})
	})
	if cerr := pre.Close(); cerr != nil {
		t.Errorf("Close() = %v", cerr)
	}
	return units, err
}

// applied is a unit's work: its series applied at its commit.
func applied(_ context.Context, im *Image) (string, error) {
	res, _, err := im.Apply()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s %s %s ok=%v", im.Name, im.Ref, im.Commit, res.OK), nil
}

// TestPrefetchHandsOverItsImage: in an online run of several units, the
// unit Prefetch prepared and fetched runs on that image: its cache is
// opened once, not again by the run. A second unit on the same upstream
// (which Prefetch does not prepare) is opened once, by the run. The
// results are those of a run that prepares every unit itself, and no
// cache is left open.
func TestPrefetchHandsOverItsImage(t *testing.T) {
	env, o, names := handoverRoot(t)
	units, err := handoverRun(t, env, names, applied)
	if err != nil {
		t.Fatal(err)
	}
	if got := o.get(); got["img"] != 1 || got["img2"] != 1 || got["img3"] != 1 || len(got) != 3 {
		t.Errorf("caches opened per unit: %v, want each once", got)
	}
	// The same run, every unit prepared by the runner itself (offline:
	// the caches are fetched, and nothing is prefetched).
	off := env
	off.Offline = true
	want, err := Run(context.Background(), Runner{Env: off, Alone: true}, names, applied)
	if err != nil {
		t.Fatal(err)
	}
	if len(units) != len(want) {
		t.Fatalf("%d units, want %d", len(units), len(want))
	}
	for i := range want {
		if units[i].Name != want[i].Name || units[i].Result != want[i].Result || units[i].Err != nil || want[i].Err != nil {
			t.Errorf("unit %d = %+v, want %+v", i, units[i], want[i])
		}
	}
	if held := heldLocks(t, env.CacheDir); len(held) != 0 {
		t.Errorf("caches still open after the run: %v", held)
	}
}

// TestPrefetchCloseClosesWhatWasNotTaken: a run that ends before a unit
// takes its image (a unit that stops the run, a cancelled run) leaves it
// to Close, which releases its cache.
func TestPrefetchCloseClosesWhatWasNotTaken(t *testing.T) {
	env, _, names := handoverRoot(t)
	pre := Prefetch(context.Background(), env, names, 2, notQuick)
	pre.Wait()
	if held := heldLocks(t, env.CacheDir); len(held) != 2 {
		t.Errorf("Prefetch holds %v, want the caches of img and img2 open for their runs", held)
	}
	if im := pre.Take("img"); im == nil || im.Name != "img" || im.Commit == "" {
		t.Errorf("Take(img) = %+v, want img prepared", im)
	} else {
		im.Close()
	}
	if im := pre.Take("img"); im != nil {
		t.Errorf("Take(img) again = %+v, want nil (handed over once)", im)
	}
	if im := pre.Take("img3"); im != nil {
		t.Errorf("Take(img3) = %+v, want nil (Prefetch prepares one unit per upstream)", im)
	}
	if err := pre.Close(); err != nil {
		t.Fatal(err)
	}
	if held := heldLocks(t, env.CacheDir); len(held) != 0 {
		t.Errorf("caches still open after Close: %v", held)
	}
	if err := pre.Close(); err != nil {
		t.Errorf("Close() again = %v", err)
	}
}

// TestHandedOverImageRepaired: a unit whose run on the handed-over image
// finds its cache damaged has the cache repaired (which waits for no
// reader of this process: the handed-over image is closed) and is done
// again on an image prepared afresh, never on the one handed over.
func TestHandedOverImageRepaired(t *testing.T) {
	env, o, names := handoverRoot(t)
	var seen []*Image
	units, err := handoverRun(t, env, names, func(ctx context.Context, im *Image) (string, error) {
		if im.Name != "img" {
			return applied(ctx, im)
		}
		seen = append(seen, im)
		if len(seen) == 1 {
			return "", im.Cache.AsFault(fmt.Errorf("reading %s: %w", im.Commit, plumbing.ErrObjectNotFound))
		}
		return applied(ctx, im)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0] == seen[1] {
		t.Fatalf("img done on %v, want twice, the second time on a new image", seen)
	}
	if units[0].Err != nil || !strings.HasPrefix(units[0].Result, "img v1 ") {
		t.Errorf("img = %+v, want checked again once repaired", units[0])
	}
	if got := o.get(); got["img"] != 2 || got["img2"] != 1 || got["img3"] != 1 {
		t.Errorf("caches opened per unit: %v, want img twice (Prefetch, then after the repair), the others once", got)
	}
	if held := heldLocks(t, env.CacheDir); len(held) != 0 {
		t.Errorf("caches still open after the run: %v", held)
	}
}

// TestHandedOverImageUnitFails: a unit whose work fails on the handed-over
// image fails alone, once, with its own error (no retry: it is not the
// cache's fault), its cache closed; the next units still run on theirs.
func TestHandedOverImageUnitFails(t *testing.T) {
	env, o, names := handoverRoot(t)
	broken := errors.New("broken")
	calls := 0
	units, err := handoverRun(t, env, names, func(ctx context.Context, im *Image) (string, error) {
		if im.Name == "img" {
			calls++
			return "", broken
		}
		return applied(ctx, im)
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || len(units) != 3 || units[0].Err != broken || units[0].Dir != "images/img" {
		t.Errorf("img done %d times, units %+v; want its error once", calls, units)
	}
	if units[1].Err != nil || units[2].Err != nil {
		t.Errorf("units after the failure: %+v", units[1:])
	}
	if got := o.get(); got["img"] != 1 || got["img2"] != 1 || got["img3"] != 1 {
		t.Errorf("caches opened per unit: %v, want each once", got)
	}
	if held := heldLocks(t, env.CacheDir); len(held) != 0 {
		t.Errorf("caches still open after the run: %v", held)
	}
}

// TestWithTakesOnlyAtThePin: a runner that prepares at another ref, or
// with EmptySeries, never takes a handed-over image (it was prepared at
// the pin, its series required).
func TestWithTakesOnlyAtThePin(t *testing.T) {
	env := unitRoot(t, true)
	taken := 0
	take := func(string) *Image { taken++; return nil }
	work := func(_ context.Context, im *Image) (string, error) { return im.Ref, nil }
	for _, r := range []Runner{{Env: env, Ref: "v1", Prepared: take}, {Env: env, EmptySeries: true, Prepared: take}} {
		if _, err := With(context.Background(), r, "img", work); err != nil {
			t.Fatal(err)
		}
	}
	if taken != 0 {
		t.Errorf("Prepared asked %d times, want never", taken)
	}
	if ref, err := With(context.Background(), Runner{Env: env, Prepared: take}, "img", work); err != nil || ref != "v1" || taken != 1 {
		t.Errorf("With() at the pin = %q, %v, Prepared asked %d times; want it asked once, then prepared", ref, err, taken)
	}
}

// TestPrefetchKeepsNoMovedPin: a pin that the fetch moves (a branch) is
// not handed over at the commit it was prepared at: the unit runs at the
// commit a fresh Prepare resolves after the fetch, as before.
func TestPrefetchKeepsNoMovedPin(t *testing.T) {
	env, _, names := handoverRoot(t)
	up := gittest.New(t)
	up.Write("greet.txt", "hello\n")
	up.Commit("one")
	gittest.WriteFiles(t, env.Root, map[string]string{
		"images/img/patchkit.yaml": "upstream:\n  url: " + up.URL() + "\n  ref: main\npatches: patches/img\n",
	})
	branch := strings.TrimSpace(up.Git("branch", "--show-current"))
	if branch != "main" {
		up.Git("branch", "-m", branch, "main")
	}
	// A first run clones the cache at commit one.
	if _, err := handoverRun(t, env, names, applied); err != nil {
		t.Fatal(err)
	}
	up.Write("other.txt", "x\n")
	moved := up.Commit("two")
	units, err := handoverRun(t, env, names, applied)
	if err != nil {
		t.Fatal(err)
	}
	if units[0].Err != nil || !strings.Contains(units[0].Result, " main "+moved+" ") {
		t.Errorf("img = %+v, want it run at %s, where main is after the fetch", units[0], moved)
	}
}

// TestPrefetchKeepsNoSharedCache: two upstream URLs that share a cache
// (the same repository, with and without credentials) are prepared by two
// workers, and neither image is kept: a repair of the cache waits until no
// Cache of this process has it open, so an image held for a later unit
// would make an earlier unit's repair fail. Their units open the cache
// themselves, as before, and a damaged cache is repaired.
func TestPrefetchKeepsNoSharedCache(t *testing.T) {
	up := gittest.New(t)
	up.Write("greet.txt", "hello\n")
	up.Commit("v1")
	up.Tag("v1")
	project := t.TempDir()
	if _, stderr, err := gittest.Run(project, nil, "clone", "-q", "--bare", up.Dir, "up.git"); err != nil {
		t.Fatalf("git clone: %v\n%s", err, stderr)
	}
	srv := httptest.NewServer(gittest.HTTPBackend(t, project, "/git"))
	defer srv.Close()
	plain := srv.URL + "/git/up.git"
	withUser := strings.Replace(plain, "://", "://someone@", 1)
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{
		"images/a/patchkit.yaml": "upstream:\n  url: " + plain + "\n  ref: v1\npatches: patches/img\n",
		"images/b/patchkit.yaml": "upstream:\n  url: " + withUser + "\n  ref: v1\npatches: patches/img\n",
		"patches/img/0001-greet.diff": "Subject: greet\n\n" +
			"diff --git a/greet.txt b/greet.txt\n--- a/greet.txt\n+++ b/greet.txt\n@@ -1 +1 @@\n-hello\n+hello world\n",
	})
	o := &opens{n: map[string]int{}}
	env := Env{Root: root, CacheDir: t.TempDir(), prepared: o.count}
	pre := Prefetch(context.Background(), env, []string{"a", "b"}, 2, notQuick)
	kept := 0
	for _, name := range []string{"a", "b"} {
		if im := pre.Take(name); im != nil {
			kept++
			im.Close()
		}
	}
	pre.Close()
	if got := o.get(); kept != 0 || got["a"] != 1 || got["b"] != 1 {
		t.Errorf("Prefetch prepared %v and kept %d images of the one cache, want both prepared, none kept", got, kept)
	}
	// The run: the first unit's cache found damaged is repaired.
	faults := 0
	units, err := handoverRun(t, env, []string{"a", "b"}, func(ctx context.Context, im *Image) (string, error) {
		if im.Name == "a" && faults == 0 {
			faults++
			return "", im.Cache.AsFault(fmt.Errorf("reading %s: %w", im.Commit, plumbing.ErrObjectNotFound))
		}
		return applied(ctx, im)
	})
	if err != nil || len(units) != 2 || units[0].Err != nil || units[1].Err != nil {
		t.Errorf("run = %+v, %v; want a repaired and checked again, b checked", units, err)
	}
}

// TestPrefetchKeepsOnlyWhatIsCheap: Prefetch keeps at most bound images
// at once, and none whose cache's pack indexes exceed keepIdxBytes (an
// open cache holds them in memory): their units open the cache again, and
// report the same.
func TestPrefetchKeepsOnlyWhatIsCheap(t *testing.T) {
	env, _, names := handoverRoot(t)
	pre := Prefetch(context.Background(), env, names, 1, notQuick)
	pre.Wait()
	first, second := pre.Take("img"), pre.Take("img2")
	if first == nil || second != nil {
		t.Errorf("bound 1: Take(img) = %v, Take(img2) = %v; want img's image kept, not img2's", first, second)
	}
	if first != nil {
		first.Close()
	}
	pre.Close()

	want, err := handoverRun(t, env, names, applied)
	if err != nil {
		t.Fatal(err)
	}
	defer func(old int64) { keepIdxBytes = old }(keepIdxBytes)
	keepIdxBytes = 0
	o := &opens{n: map[string]int{}}
	env.prepared = o.count
	units, err := handoverRun(t, env, names, applied)
	if err != nil {
		t.Fatal(err)
	}
	if got := o.get(); got["img"] != 2 || got["img2"] != 2 || got["img3"] != 1 {
		t.Errorf("caches opened per unit with no index small enough: %v, want img and img2 twice (none kept), img3 once", got)
	}
	for i := range want {
		if units[i].Result != want[i].Result || units[i].Err != nil {
			t.Errorf("unit %d = %+v, want %+v", i, units[i], want[i])
		}
	}
	if held := heldLocks(t, env.CacheDir); len(held) != 0 {
		t.Errorf("caches still open after the run: %v", held)
	}
}
