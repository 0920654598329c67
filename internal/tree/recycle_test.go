package tree

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// recycling is a Map that records the files WriteAtomic gives back, and
// whether each was on disk with its content by then.
type recycling struct {
	Map
	dir  string
	mu   sync.Mutex
	back map[string]bool // path → written before it came back
}

func (r *recycling) Recycle(f *File) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for p, g := range r.Map {
		if g == f {
			_, dup := r.back[p]
			r.back[p] = !dup && r.onDisk(p, f)
		}
	}
}

// onDisk reports whether the temporary tree holds p with f's content.
func (r *recycling) onDisk(p string, f *File) bool {
	tmps, _ := filepath.Glob(filepath.Join(r.dir, ".*"))
	for _, tmp := range tmps {
		if b, err := os.ReadFile(filepath.Join(tmp, p)); err == nil && string(b) == string(f.Data) {
			return true
		}
	}
	return false
}

// TestWriteAtomicRecycles: WriteAtomic gives a Recycler base back each file
// it wrote from it, once, after writing it, and never a file of the
// changes nor one the changes replaced.
func TestWriteAtomicRecycles(t *testing.T) {
	parent := t.TempDir()
	base := &recycling{dir: parent, back: map[string]bool{}, Map: Map{
		"a.txt":     {Mode: Regular, Data: []byte("a\n")},
		"d/b.txt":   {Mode: Regular, Data: []byte("b\n")},
		"d/c.sh":    {Mode: Executable, Data: []byte("#!/bin/sh\n")},
		"patched":   {Mode: Regular, Data: []byte("old\n")},
		"d/removed": {Mode: Regular, Data: []byte("gone\n")},
	}}
	changes := map[string]*File{"patched": {Mode: Regular, Data: []byte("new\n")}, "d/removed": nil, "added": {Mode: Regular, Data: []byte("added\n")}}
	if err := WriteAtomic(filepath.Join(parent, "out"), base, changes); err != nil {
		t.Fatal(err)
	}
	want := []string{"a.txt", "d/b.txt", "d/c.sh"}
	if len(base.back) != len(want) {
		t.Errorf("recycled %v, want exactly %v", base.back, want)
	}
	for _, p := range want {
		if ok, back := base.back[p]; !back || !ok {
			t.Errorf("%s: recycled %v, written before %v; want it given back once, after it was written", p, back, ok)
		}
	}
}
