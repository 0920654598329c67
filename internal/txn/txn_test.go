package txn

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func repo(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func read(t *testing.T, root, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if os.IsNotExist(err) {
		return "<absent>"
	}
	return string(b)
}

func TestCommit(t *testing.T) {
	root := repo(t, map[string]string{"a": "a0", "d/b": "b0", "d/c": "c0", "d/keep": "k"})
	s := New(root)
	s.Write("a", []byte("a1"), []byte("a0"))
	s.Delete("d/b", []byte("b0"))
	s.Create("d/new", []byte("n1"))
	s.Expect("d/c", []byte("c0"))
	s.ExpectDir("d", []string{"b", "c"}, func(n string) bool { return n == "b" || n == "c" })
	done, err := s.Commit(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 3 || read(t, root, "a") != "a1" || read(t, root, "d/b") != "<absent>" || read(t, root, "d/new") != "n1" {
		t.Errorf("Commit() = %v; files a=%q b=%q new=%q", done, read(t, root, "a"), read(t, root, "d/b"), read(t, root, "d/new"))
	}
	if _, err := os.Stat(JournalPath(root)); !os.IsNotExist(err) {
		t.Error("the journal stayed")
	}
}

// TestCommitRefusesChanges: a file that no longer holds what was read, one
// created or removed since, and a directory whose listing changed refuse
// the whole set; nothing is written.
func TestCommitRefusesChanges(t *testing.T) {
	cases := map[string]func(s *Set){
		"written file edited":  func(s *Set) { s.Write("a", []byte("a1"), []byte("other")) },
		"expected file edited": func(s *Set) { s.Expect("b", []byte("other")) },
		"created meanwhile":    func(s *Set) { s.Create("b", []byte("x")) },
		"removed meanwhile":    func(s *Set) { s.Delete("gone", []byte("x")) },
		"listing changed":      func(s *Set) { s.ExpectDir(".", []string{"a"}, func(n string) bool { return n == "a" || n == "b" }) },
	}
	for name, add := range cases {
		t.Run(name, func(t *testing.T) {
			root := repo(t, map[string]string{"a": "a0", "b": "b0"})
			s := New(root)
			s.Write("a", []byte("a1"), []byte("a0"))
			add(s)
			_, err := s.Commit(context.Background(), Options{})
			if !errors.Is(err, ErrChanged) {
				t.Errorf("Commit() = %v, want ErrChanged", err)
			}
			if read(t, root, "a") != "a0" || read(t, root, "b") != "b0" {
				t.Error("a file was written")
			}
		})
	}
}

// TestRecover: a journal in its commit state is completed (renames and
// deletions done, each only where the file still holds its old content); in
// its prepare state, the temporary files are removed and nothing else
// changes.
func TestRecover(t *testing.T) {
	root := repo(t, map[string]string{"a": "a0", "b": "b0", ".a.tmp-x": "a1", "c": "c0", ".c.tmp-x": "c1"})
	j := journal{Version: 1, State: stateCommit, Ops: []journalOp{
		{Path: "a", Tmp: ".a.tmp-x", Old: sum([]byte("a0")), New: sum([]byte("a1"))},
		{Path: "b", Delete: true, Old: sum([]byte("b0"))},
		{Path: "c", Tmp: ".c.tmp-x", Old: sum([]byte("c0")), New: sum([]byte("c1"))},
	}}
	put := func(j journal) {
		b, _ := json.Marshal(j)
		os.WriteFile(JournalPath(root), b, 0o644)
	}
	put(j)
	os.Rename(filepath.Join(root, ".c.tmp-x"), filepath.Join(root, "c")) // c was renamed before the kill
	rec, err := Recover(context.Background(), root)
	if err != nil || rec == nil || !rec.Forward {
		t.Fatalf("Recover() = %+v, %v", rec, err)
	}
	if read(t, root, "a") != "a1" || read(t, root, "b") != "<absent>" || read(t, root, "c") != "c1" || read(t, root, ".a.tmp-x") != "<absent>" {
		t.Errorf("after roll forward: a=%q b=%q c=%q", read(t, root, "a"), read(t, root, "b"), read(t, root, "c"))
	}

	root = repo(t, map[string]string{"a": "a0", ".a.tmp-x": "a1"})
	j.State, j.Ops = statePrepare, j.Ops[:1]
	put(j)
	if rec, err := Recover(context.Background(), root); err != nil || rec == nil || rec.Forward {
		t.Fatalf("Recover() = %+v, %v", rec, err)
	}
	if read(t, root, "a") != "a0" || read(t, root, ".a.tmp-x") != "<absent>" {
		t.Error("roll back changed a or kept its temporary file")
	}

	// A file edited after the kill is not overwritten: the journal stays.
	root = repo(t, map[string]string{"a": "edited", ".a.tmp-x": "a1"})
	j.State = stateCommit
	put(j)
	if _, err := Recover(context.Background(), root); err == nil || !strings.Contains(err.Error(), "changed since") {
		t.Errorf("Recover() over an edited file = %v, want a refusal", err)
	}
	if read(t, root, "a") != "edited" {
		t.Error("the edit was overwritten")
	}
}

func TestLockCancelled(t *testing.T) {
	root := repo(t, nil)
	l, err := Acquire(context.Background(), root, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	ctx, cancel := context.WithCancel(context.Background())
	waited := false
	s := New(root)
	s.Create("x", []byte("x"))
	_, err = s.Commit(ctx, Options{Waiting: func(string) { waited = true; cancel() }})
	if err == nil || !waited || read(t, root, "x") != "<absent>" {
		t.Errorf("Commit() while the lock is held and the context ends = %v (waited %v), want an error and nothing written", err, waited)
	}
}

// TestCommitLocked: a caller that holds the lock commits under it (a
// second Acquire would wait on its own lock), completing a journal a
// killed run left first; without the lock it is refused, nothing written.
func TestCommitLocked(t *testing.T) {
	root := repo(t, map[string]string{"a": "a0"})
	s := New(root)
	s.Write("a", []byte("a1"), []byte("a0"))
	if _, err := s.CommitLocked(context.Background(), nil); err == nil || read(t, root, "a") != "a0" {
		t.Fatalf("CommitLocked(nil) = %v, a = %q; want an error and nothing written", err, read(t, root, "a"))
	}
	lk, err := Acquire(context.Background(), root, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release()
	// A journal left by a killed run that had reached its commit point.
	os.WriteFile(filepath.Join(root, ".b.tmp-x"), []byte("b1"), 0o644)
	j := journal{Version: 1, State: stateCommit, Ops: []journalOp{{Path: "b", Tmp: ".b.tmp-x", Old: "", New: sum([]byte("b1"))}}}
	if err := writeJournal(JournalPath(root), j); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitLocked(context.Background(), lk); err != nil {
		t.Fatal(err)
	}
	if read(t, root, "a") != "a1" || read(t, root, "b") != "b1" {
		t.Errorf("a = %q, b = %q; want a1 and the journal completed (b1)", read(t, root, "a"), read(t, root, "b"))
	}
	if _, err := os.Stat(JournalPath(root)); !os.IsNotExist(err) {
		t.Errorf("the journal stayed: %v", err)
	}
}
