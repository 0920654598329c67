package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/spec"
)

// unitRoot makes a repository root with one image unit "img" on a test
// upstream (tag v1), and returns it with a cache directory.
func unitRoot(t *testing.T, withPatches bool) Env {
	t.Helper()
	up := gittest.New(t)
	up.Write("greet.txt", "hello\n")
	up.Commit("v1")
	up.Tag("v1")
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{
		"images/img/patchkit.yaml": "upstream:\n  url: " + up.URL() + "\n  ref: v1\npatches: patches/img\n",
	})
	if withPatches {
		gittest.WriteFiles(t, root, map[string]string{"patches/img/0001-greet.diff": "Subject: greet\n\n" +
			"diff --git a/greet.txt b/greet.txt\n--- a/greet.txt\n+++ b/greet.txt\n@@ -1 +1 @@\n-hello\n+hello world\n"})
	}
	return Env{Root: root, CacheDir: t.TempDir(), Shallow: true}
}

func TestEachAloneReportsEachUnit(t *testing.T) {
	env := unitRoot(t, true)
	var told []string
	r := Runner{Env: env, Alone: true, Failed: func(name string, err error) { told = append(told, name+": "+err.Error()) }}
	calls := 0
	units, err := Each(context.Background(), r, []string{"bad", "img", "finding"}, func(_ context.Context, name string) (string, error) {
		calls++
		switch name {
		case "bad":
			return "", errors.New("no such upstream")
		case "finding":
			return "", fmt.Errorf("%w: a patch conflicts", diag.ErrFindings)
		}
		return "ok " + name, nil
	})
	if err != nil {
		t.Fatalf("Each() = %v, want the failures kept per unit", err)
	}
	if calls != 3 || len(units) != 3 {
		t.Fatalf("%d calls, %d units; want 3 and 3", calls, len(units))
	}
	if units[0].Err == nil || units[0].Dir != "" || units[0].File() != "bad" {
		t.Errorf("unit bad = %+v, want its error and no directory", units[0])
	}
	if units[1].Err != nil || units[1].Result != "ok img" || units[1].Dir != "" {
		t.Errorf("unit img = %+v", units[1])
	}
	if units[2].Err == nil {
		t.Errorf("unit finding = %+v, want its error", units[2])
	}
	if len(told) != 2 || !strings.HasPrefix(told[0], "bad: no such upstream") || !strings.HasPrefix(told[1], "finding: ") {
		t.Errorf("Failed was told %q", told)
	}
	if w := Worst(units); w != 2 {
		t.Errorf("Worst() = %d, want 2 (a unit could not be done)", w)
	}
	if w := Worst(units[1:]); w != 1 {
		t.Errorf("Worst() without the bad unit = %d, want 1 (a finding)", w)
	}
	if w := Worst(units[1:2]); w != 0 {
		t.Errorf("Worst() of a passing unit = %d, want 0", w)
	}
}

func TestEachFailedUnitNamesItsDirectory(t *testing.T) {
	env := unitRoot(t, true)
	units, err := Each(context.Background(), Runner{Env: env, Alone: true}, []string{"img"}, func(context.Context, string) (int, error) {
		return 0, errors.New("broken")
	})
	if err != nil || len(units) != 1 {
		t.Fatalf("Each() = %v, %v", units, err)
	}
	if units[0].Dir != "images/img" || units[0].File() != "images/img/patchkit.yaml" {
		t.Errorf("dir %q file %q, want images/img and its patchkit.yaml", units[0].Dir, units[0].File())
	}
}

// TestEachFailedUnitFromTheRunsWalk: a failed unit's directory comes from
// the run's one tree walk (Env.Units), not from a walk of its own: a unit
// of the same name added after the walk, which a new walk would find and
// call ambiguous, does not change it.
func TestEachFailedUnitFromTheRunsWalk(t *testing.T) {
	env := unitRoot(t, true)
	env.Units = spec.NewDiscovery(env.Root)
	if _, err := env.Units.Units(); err != nil {
		t.Fatal(err)
	}
	gittest.WriteFiles(t, env.Root, map[string]string{"other/img/patchkit.yaml": "upstream:\n  url: file:///nowhere\n  ref: v1\npatches: patches/img\n"})
	if _, err := spec.Find(env.Root, "img"); err == nil {
		t.Fatal("a new walk finds one img: the check below proves nothing")
	}
	units, err := Each(context.Background(), Runner{Env: env, Alone: true}, []string{"img"}, func(context.Context, string) (int, error) {
		return 0, errors.New("broken")
	})
	if err != nil || len(units) != 1 || units[0].Dir != "images/img" {
		t.Errorf("Each() = %+v, %v; want img failed in images/img", units, err)
	}
}

func TestEachWithoutAloneStopsAtFirstError(t *testing.T) {
	env := unitRoot(t, true)
	boom := errors.New("boom")
	var ran []string
	units, err := Each(context.Background(), Runner{Env: env}, []string{"a", "b"}, func(_ context.Context, name string) (int, error) {
		ran = append(ran, name)
		return 0, boom
	})
	if !errors.Is(err, boom) || len(units) != 0 || strings.Join(ran, ",") != "a" {
		t.Errorf("Each() = %v, %v after %v; want boom after a alone", units, err, ran)
	}
}

func TestEachStopEndsAnAloneRun(t *testing.T) {
	env := unitRoot(t, true)
	written := errors.New("write failed")
	var ran []string
	units, err := Each(context.Background(), Runner{Env: env, Alone: true}, []string{"a", "b", "c"}, func(_ context.Context, name string) (int, error) {
		ran = append(ran, name)
		if name == "b" {
			return 0, Stop(written)
		}
		return 1, nil
	})
	var stop *stopError
	if err != written || errors.As(err, &stop) {
		t.Errorf("Each() error = %#v, want the stopping error itself, unwrapped", err)
	}
	if len(units) != 1 || strings.Join(ran, ",") != "a,b" {
		t.Errorf("units %v after %v; want a done, c never run", units, ran)
	}
	if Stop(nil) != nil {
		t.Error("Stop(nil) is not nil")
	}
}

func TestEachCancelledEndsAnAloneRun(t *testing.T) {
	env := unitRoot(t, true)
	ctx, cancel := context.WithCancel(context.Background())
	var ran []string
	_, err := Each(ctx, Runner{Env: env, Alone: true}, []string{"a", "b"}, func(ctx context.Context, name string) (int, error) {
		ran = append(ran, name)
		cancel()
		return 0, ctx.Err()
	})
	if !errors.Is(err, context.Canceled) || len(ran) != 1 {
		t.Errorf("Each() = %v after %v; want the cancellation, after one unit", err, ran)
	}
}

func TestEachRepairRetriesOnlyCacheFaults(t *testing.T) {
	env := unitRoot(t, true)
	calls := 0
	_, err := Each(context.Background(), Runner{Env: env, Repair: true}, []string{"img"}, func(context.Context, string) (int, error) {
		calls++
		return 0, errors.New("not the cache's fault")
	})
	if err == nil || calls != 1 {
		t.Errorf("Each() = %v after %d calls; want the error after one call", err, calls)
	}
}

func TestRunPreparesEachUnit(t *testing.T) {
	env := unitRoot(t, true)
	units, err := Run(context.Background(), Runner{Env: env}, []string{"img"}, func(_ context.Context, im *Image) (string, error) {
		res, _, err := im.Apply()
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %s %d ok=%v", im.Name, im.Ref, len(im.Patches), res.OK), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(units) != 1 || units[0].Result != "img v1 1 ok=true" {
		t.Errorf("units = %+v", units)
	}
	// Ref prepares every unit at that ref instead of the pin.
	commit, err := One(context.Background(), Runner{Env: env, Ref: "v1"}, "img", func(_ context.Context, im *Image) (string, error) { return im.Ref + " " + im.Commit, nil })
	if err != nil || !strings.HasPrefix(commit, "v1 ") || len(commit) != 3+40 {
		t.Errorf("One(Ref v1) = %q, %v", commit, err)
	}
}

func TestRunEmptySeries(t *testing.T) {
	env := unitRoot(t, false)
	work := func(_ context.Context, im *Image) (int, error) { return len(im.Patches), nil }
	if _, err := One(context.Background(), Runner{Env: env}, "img", work); err == nil {
		t.Error("a unit without its patch directory prepared without EmptySeries")
	}
	n, err := One(context.Background(), Runner{Env: env, EmptySeries: true}, "img", work)
	if err != nil || n != 0 {
		t.Errorf("One(EmptySeries) = %d, %v; want an empty series", n, err)
	}
	if _, err := os.Stat(filepath.Join(env.Root, "patches")); !os.IsNotExist(err) {
		t.Errorf("the runner made the patch directory: %v", err)
	}
}

func TestOneIgnoresAlone(t *testing.T) {
	env := unitRoot(t, true)
	boom := errors.New("boom")
	_, err := One(context.Background(), Runner{Env: env, Alone: true}, "img", func(context.Context, *Image) (int, error) { return 0, boom })
	if !errors.Is(err, boom) {
		t.Errorf("One() = %v, want the unit's error", err)
	}
}
