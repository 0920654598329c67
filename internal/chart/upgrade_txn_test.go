package chart

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/patchkit/patchkit/internal/txn"
)

// TestUpgradeWritesUnderTheLock: a chart unit's upgrade is a repository
// transaction. While another patchkit holds the repository lock it waits
// (Waiting is told) and, cancelled, writes nothing: neither the vendored
// files nor the pin. Once the lock is free it writes both, and a file of
// the vendored directory that is a symbolic link (which a whole-directory
// replace dropped) stays a link.
func TestUpgradeWritesUnderTheLock(t *testing.T) {
	m := adoptedMonorepo(t)
	f := newFetcher(t, m)
	dir := "packages/system/reloader/charts/reloader"
	u := mustFind(t, m.Root, dir)
	link := filepath.Join(m.Root, dir, "LINK")
	if err := os.Symlink("Chart.yaml", link); err != nil {
		t.Fatal(err)
	}
	up, want, err := f.PlanUpgrade(context.Background(), u, "")
	if err != nil || len(up.Problems) > 0 {
		t.Fatalf("plan: %v %+v", err, up)
	}
	before, _ := ReadDir(m.Root, dir)
	mk, _ := os.ReadFile(m.Pkg("reloader", "Makefile"))

	held, err := txn.Acquire(context.Background(), m.Root, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	waited := false
	err = f.WriteUpgradeContext(ctx, u, up, want, txn.Options{Waiting: func(string) { waited = true; cancel() }})
	if !waited || !errors.Is(err, context.Canceled) {
		t.Errorf("WriteUpgradeContext while the lock is held = %v (waited %v), want it to wait and be cancelled", err, waited)
	}
	after, _ := ReadDir(m.Root, dir)
	mk2, _ := os.ReadFile(m.Pkg("reloader", "Makefile"))
	if len(Diff(before, after)) != 0 || string(mk) != string(mk2) {
		t.Fatal("a cancelled upgrade wrote")
	}
	held.Release()

	up, want, _ = f.PlanUpgrade(context.Background(), u, "")
	if err := f.WriteUpgradeContext(context.Background(), u, up, want, txn.Options{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := ReadDir(m.Root, dir); len(Diff(want, got)) != 0 {
		t.Errorf("the vendored directory differs from the plan: %v", Diff(want, got))
	}
	if mk3, _ := os.ReadFile(m.Pkg("reloader", "Makefile")); string(mk3) == string(mk) {
		t.Error("the pin did not move")
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the vendored symlink is gone or replaced: %v %v", st, err)
	}
}
