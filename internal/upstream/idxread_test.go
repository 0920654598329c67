package upstream

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// countingFS counts the reads that reach pack index files.
type countingFS struct {
	billy.Filesystem
	reads *int
}

func (fs countingFS) Open(name string) (billy.File, error) {
	f, err := fs.Filesystem.Open(name)
	if err != nil || !strings.HasSuffix(name, ".idx") {
		return f, err
	}
	return countingFile{f, fs.reads}, nil
}

type countingFile struct {
	billy.File
	reads *int
}

func (f countingFile) Read(p []byte) (int, error) { *f.reads++; return f.File.Read(p) }

// TestIndexReadBuffered: loading a cache's pack index through bufferedIdx
// takes one read per idxBufSize of the file (and one for the end), not a
// read per 4-byte field as go-git's decoder asks; the objects it finds are
// the same. The unbuffered count is measured too, so that the bound is
// known to be something the buffer changes.
func TestIndexReadBuffered(t *testing.T) {
	f := newFixture(t)
	for i := 0; i < 300; i++ {
		f.repo.Write(fmt.Sprintf("many/f%03d.txt", i), fmt.Sprintf("file %d\n", i))
	}
	head := f.repo.Commit("three hundred files")
	c := open(t, t.TempDir(), f.repo.URL())
	idx, _ := filepath.Glob(filepath.Join(c.Path(), "objects", "pack", "*.idx"))
	if len(idx) != 1 {
		t.Fatalf("pack indexes %v, want one", idx)
	}
	fi, err := os.Stat(idx[0])
	if err != nil {
		t.Fatal(err)
	}
	load := func(fs billy.Filesystem) {
		t.Helper()
		st := filesystem.NewStorage(fs, cache.NewObjectLRUDefault())
		defer st.Close()
		if _, err := st.EncodedObject(plumbing.CommitObject, plumbing.NewHash(head)); err != nil {
			t.Fatalf("reading %s: %v", head, err)
		}
	}
	var plain, buffered int
	load(countingFS{osfs.New(c.Path()), &plain})
	load(bufferedIdx{countingFS{osfs.New(c.Path()), &buffered}})
	if most := int(fi.Size())/idxBufSize + 2; buffered < 1 || buffered > most {
		t.Errorf("the buffered index of %d bytes took %d reads, want 1 to %d", fi.Size(), buffered, most)
	}
	if plain < 256 {
		t.Errorf("go-git read the unbuffered index in %d reads: the buffer is no longer needed", plain)
	}
	t.Logf("index of %d bytes: %d reads unbuffered, %d buffered", fi.Size(), plain, buffered)
}
