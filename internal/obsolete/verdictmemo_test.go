package obsolete

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// TestVerdictMemo counts the refs Check evaluates rather than reads from the
// verdict memo: a warm run evaluates none and reports what the cold run
// did; a new release is the only ref evaluated; a damaged entry is a miss
// and is rewritten; a changed patch, the last or the first of the series,
// is a new key at every ref, and the old series' entries still hit.
func TestVerdictMemo(t *testing.T) {
	fx := newStatusFixture(t)
	fx.up.Tag("v1.1.1") // the unrelated commit after v1.1.0
	c, pin := fx.openPinned(t)
	check := func(patches []string) (*Report, string) {
		t.Helper()
		var evaluated []string
		rep := checkAgain(t, c, pin, patches, withEvaluated(func(r Ref) { evaluated = append(evaluated, r.Name) }))
		return rep, strings.Join(evaluated, " ")
	}
	glob := func(pattern string) []string {
		t.Helper()
		files, err := filepath.Glob(filepath.Join(c.DerivedDir(verdictMemoName), pattern))
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	entries := func() []string { return glob("[0-9a-f]*") }
	bundles := func() []string { return glob(bundlePrefix + "*") }

	cold, ev := check(fx.patches)
	if ev != "v1.1.0 v1.1.1" {
		t.Fatalf("cold run evaluated %q, want every ref", ev)
	}
	if got := statuses(cold, 1); got != "v1.1.0=present v1.1.1=present" {
		t.Fatalf("patch 2 = %q: the fixture changed", got)
	}
	if n, b := len(entries()), len(bundles()); n != 2 || b != 1 {
		t.Fatalf("verdict memo holds %d entries and %d bundles after a cold run, want 2 and 1", n, b)
	}
	reads := verdictReads.Load()
	warm, ev := check(fx.patches)
	if ev != "" {
		t.Errorf("warm run evaluated %q, want nothing", ev)
	}
	if n := verdictReads.Load() - reads; n != 1 {
		t.Errorf("warm run read %d verdict memo files, want 1 (the bundle)", n)
	}
	if !reflect.DeepEqual(warm, cold) {
		t.Errorf("warm report differs from the cold one:\nwarm %+v\ncold %+v", warm, cold)
	}

	// A damaged bundle (one byte flipped) is a miss: the entries answer,
	// and the bundle is rewritten whole.
	gittest.FlipBit(t, bundles()[0], -1)
	damaged, ev := check(fx.patches)
	if ev != "" {
		t.Errorf("run on a damaged bundle evaluated %q, want nothing", ev)
	}
	if !reflect.DeepEqual(damaged, cold) {
		t.Errorf("report on a damaged bundle differs from the cold one")
	}
	if _, ok := readMemo(bundles()[0]); !ok {
		t.Errorf("the bundle was not rewritten whole")
	}
	// Without the bundle, a damaged entry is a miss, evaluated again and
	// rewritten whole.
	os.Remove(bundles()[0])
	gittest.FlipBit(t, entries()[0], -1)
	damaged, ev = check(fx.patches)
	if strings.Count(ev, "v") != 1 {
		t.Errorf("run on a damaged entry evaluated %q, want one ref", ev)
	}
	if !reflect.DeepEqual(damaged, cold) {
		t.Errorf("report on a damaged entry differs from the cold one")
	}
	for _, f := range append(entries(), bundles()...) {
		if _, ok := readMemo(f); !ok {
			t.Errorf("entry %s was not rewritten whole", f)
		}
	}

	// A changed patch is a new key at every ref: the last one, or the
	// first one, which the others' verdicts come after.
	for _, k := range []int{len(fx.patches) - 1, 0} {
		changed := append([]string(nil), fx.patches...)
		changed[k] = strings.Replace(changed[k], "Subject: ", "Subject: reworded ", 1)
		if _, ev := check(changed); ev != "v1.1.0 v1.1.1" {
			t.Errorf("run with patch %d changed evaluated %q, want every ref", k+1, ev)
		}
	}
	if _, ev := check(fx.patches); ev != "" {
		t.Errorf("run with the series back evaluated %q, want nothing", ev)
	}

	// A new release is the only ref evaluated.
	fx.release(t, c)
	moved, ev := check(fx.patches)
	if ev != "v1.2.0" {
		t.Errorf("run after a new release evaluated %q, want v1.2.0", ev)
	}
	if got, want := refNames(moved), "v1.1.0 v1.1.1 v1.2.0"; got != want {
		t.Errorf("refs after a new release = %q, want %q", got, want)
	}

	// A shallow boundary changes what a ref's history holds: every ref again.
	if err := os.WriteFile(filepath.Join(c.Path(), "shallow"), []byte(fx.landD+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ev := check(fx.patches); ev != "v1.1.0 v1.1.1 v1.2.0" {
		t.Errorf("run after the shallow boundary moved evaluated %q, want every ref", ev)
	}
}
