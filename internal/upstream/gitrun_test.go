package upstream

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

func TestCacheGit(t *testing.T) {
	f := newFixture(t)
	c := open(t, t.TempDir(), "file://"+f.repo.Dir)
	ctx := context.Background()
	if err := c.Ensure(ctx, "v1.2.0"); err != nil {
		t.Fatal(err)
	}

	out, err := c.Git(ctx, GitRun{Args: []string{"rev-parse", "v1.2.0^{commit}"}})
	if err != nil || strings.TrimSpace(string(out)) != f.c3 {
		t.Errorf("Git(rev-parse) = %q, %v; want %s", out, err, f.c3)
	}

	var streamed bytes.Buffer
	out, err = c.Git(ctx, GitRun{Args: []string{"cat-file", "--batch-check"}, Stdin: []byte(f.c1 + "\n"),
		Stdout: func(r io.Reader) error { _, err := io.Copy(&streamed, r); return err }})
	if err != nil || len(out) != 0 || !strings.HasPrefix(streamed.String(), f.c1+" commit ") {
		t.Errorf("Git(cat-file, streamed) = %q, %v, streamed %q", out, err, streamed.String())
	}

	// merge-base --is-ancestor answers "no" with exit 1: a GitError with the code.
	_, err = c.Git(ctx, GitRun{Args: []string{"merge-base", "--is-ancestor", f.c3, f.c1}})
	var ge *GitError
	if !errors.As(err, &ge) || ge.Code != 1 {
		t.Errorf("Git(merge-base --is-ancestor later earlier) = %v, want a GitError with code 1", err)
	}

	_, err = c.Git(ctx, GitRun{Args: []string{"version"}, Bin: filepath.Join(t.TempDir(), "no-git")})
	if !errors.Is(err, ErrNoGit) {
		t.Errorf("Git with a missing executable = %v, want ErrNoGit", err)
	}

	// git's complaint of a damaged object is a cache fault, not a GitError:
	// a scratch object directory (as backport's combine uses) holding a
	// loose object that does not inflate.
	objects := t.TempDir()
	bad := strings.Repeat("ab", 20)
	os.MkdirAll(filepath.Join(objects, bad[:2]), 0o755)
	os.WriteFile(filepath.Join(objects, bad[:2], bad[2:]), []byte("not zlib"), 0o444)
	_, err = c.Git(ctx, GitRun{Args: []string{"cat-file", "-p", bad}, Env: []string{"GIT_OBJECT_DIRECTORY=" + objects}})
	var cf *CacheFaultError
	if !errors.As(err, &cf) {
		t.Errorf("Git on a damaged object = %v, want a *CacheFaultError", err)
	}
}

// TestReadVerifiedHashCheck damages a blob so that it still inflates and
// parses: a loose object whose zlib stream is intact but whose content is
// another file's. Only the check that content hashes to the object id can
// tell; without it the snapshot would serve the wrong bytes as the pin's.
func TestReadVerifiedHashCheck(t *testing.T) {
	f := newFixture(t)
	c := open(t, t.TempDir(), "file://"+f.repo.Dir)
	if err := c.Ensure(context.Background(), "v1.2.0"); err != nil {
		t.Fatal(err)
	}
	id, _, err := gittest.Run(f.repo.Dir, nil, "rev-parse", f.c3+":README.md")
	if err != nil {
		t.Fatal(err)
	}
	id = strings.TrimSpace(id)
	// Every object loose, so that the damaged blob is the copy read.
	packs, _ := filepath.Glob(filepath.Join(c.Path(), "objects", "pack", "*.pack"))
	for _, p := range packs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		base := strings.TrimSuffix(p, ".pack")
		for _, ext := range []string{".pack", ".idx", ".rev"} {
			os.Remove(base + ext)
		}
		if _, errOut, err := gittest.Run(c.Path(), data, "unpack-objects", "-q"); err != nil {
			t.Fatalf("git unpack-objects: %v: %s", err, errOut)
		}
	}
	// The same length as "hello again\n", so that only the hash tells.
	fake := "HELLO AGAIN\n"
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte("blob " + strconv.Itoa(len(fake)) + "\x00" + fake))
	zw.Close()
	loose := filepath.Join(c.Path(), "objects", id[:2], id[2:])
	os.Chmod(loose, 0o644)
	if err := os.WriteFile(loose, z.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
	// A new Cache, so that nothing read before the damage is remembered.
	dir := filepath.Dir(c.Path())
	c.Close()
	c = open(t, dir, "file://"+f.repo.Dir, WithOffline(true))
	snap, err := c.Source(f.c3)
	if err != nil {
		t.Fatalf("Source() = %v", err)
	}
	file, _, err := snap.Read("README.md")
	var cf *CacheFaultError
	if !errors.As(err, &cf) || !errors.Is(err, errHashMismatch) {
		t.Fatalf("Read(README.md) of a blob whose content is another's = %v (file %v), want a cache fault for the hash mismatch", err, file)
	}
}
