package upstream

import (
	"bufio"
	"errors"
	"os"
	"strings"

	"github.com/go-git/go-billy/v5"
)

// idxBufSize is the read buffer of a pack index file: one read for a
// typical cache's index (a few thousand objects, 28 bytes each plus the
// 1 KiB fan-out).
const idxBufSize = 256 << 10

// bufferedIdx is the cache's file system, except that a pack index (*.idx)
// is read through a buffer. go-git decodes an index with reads of 4 bytes
// at a time (the fan-out's 256 entries, then a CRC and an offset per
// object), each a system call on an unbuffered file: opening a cache cost
// about 1,300 reads of its index, and a warm monorepo run opens one cache
// per unit. The index is only ever read from start to end by that decoder
// (dotgit.ObjectPackIdx): the buffered file does not seek.
type bufferedIdx struct{ billy.Filesystem }

// Open opens name, buffered when it is a pack index.
func (fs bufferedIdx) Open(name string) (billy.File, error) {
	f, err := fs.Filesystem.Open(name)
	if err != nil || !strings.HasSuffix(name, ".idx") {
		return f, err
	}
	return &bufferedFile{File: f, r: bufio.NewReaderSize(f, idxBufSize)}, nil
}

// Chmod is the file system's own (go-git sets a written pack's mode with
// it when the file system has it).
func (fs bufferedIdx) Chmod(name string, mode os.FileMode) error {
	if c, ok := fs.Filesystem.(billy.Chmod); ok {
		return c.Chmod(name, mode)
	}
	return errors.New("chmod: not supported by the cache's file system")
}

// bufferedFile reads a file from start to end through a buffer.
type bufferedFile struct {
	billy.File
	r *bufio.Reader
}

func (f *bufferedFile) Read(p []byte) (int, error) { return f.r.Read(p) }

// Seek and ReadAt would see the file's offset, not the buffer's: the index
// decoder uses neither, and they fail rather than read the wrong bytes.
func (f *bufferedFile) Seek(int64, int) (int64, error) {
	return 0, errors.New("seek on a buffered pack index")
}

func (f *bufferedFile) ReadAt([]byte, int64) (int, error) {
	return 0, errors.New("read at an offset of a buffered pack index")
}
