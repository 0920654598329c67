package image

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/patchkit/patchkit/internal/image/caps"
)

// fileLayer is a gzipped tar layer kept in a file, its digests computed
// while it was written: one pass over the data, however large.
type fileLayer struct {
	path   string
	digest v1.Hash
	diffID v1.Hash
	size   int64
	mt     types.MediaType
}

var _ v1.Layer = (*fileLayer)(nil)

func (l *fileLayer) Digest() (v1.Hash, error)            { return l.digest, nil }
func (l *fileLayer) DiffID() (v1.Hash, error)            { return l.diffID, nil }
func (l *fileLayer) Size() (int64, error)                { return l.size, nil }
func (l *fileLayer) MediaType() (types.MediaType, error) { return l.mt, nil }
func (l *fileLayer) Compressed() (io.ReadCloser, error)  { return os.Open(l.path) }

func (l *fileLayer) Uncompressed() (io.ReadCloser, error) {
	f, err := os.Open(l.path)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &readCloser{Reader: zr, close: func() error { zr.Close(); return f.Close() }}, nil
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r *readCloser) Close() error { return r.close() }

// counter counts bytes written through it.
type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// entry is one tar entry of the layer.
type entry struct {
	name string // without a leading slash; directories end in /
	file *File  // nil for a directory
}

// writeLayer writes the files of req from root into a gzipped tar in dir,
// reproducibly: entries in path order, each parent directory once, owner
// root, every time set to created, and capabilities in PAX records as
// SCHILY.xattr.security.capability.
func writeLayer(ctx context.Context, root *os.Root, files []File, created time.Time, dir string, mt types.MediaType) (_ *fileLayer, err error) {
	entries, err := layerEntries(files)
	if err != nil {
		return nil, err
	}
	out, err := os.CreateTemp(dir, "patchkit-layer-*.tar.gz")
	if err != nil {
		return nil, fmt.Errorf("creating the layer file: %w", err)
	}
	defer func() {
		if cerr := out.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			os.Remove(out.Name())
		}
	}()
	var (
		digest = sha256.New()
		diffID = sha256.New()
		size   counter
		zw, _  = gzip.NewWriterLevel(io.MultiWriter(out, digest, &size), gzip.BestSpeed)
		tw     = tar.NewWriter(io.MultiWriter(zw, diffID))
	)
	created = created.Truncate(time.Second)
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if e.file == nil {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: e.name, Mode: 0o755, ModTime: created, Format: tar.FormatPAX}); err != nil {
				return nil, err
			}
			continue
		}
		if err := addFile(tw, root, e, created); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return &fileLayer{
		path:   out.Name(),
		digest: hashOf(digest),
		diffID: hashOf(diffID),
		size:   size.n,
		mt:     mt,
	}, nil
}

func addFile(tw *tar.Writer, root *os.Root, e entry, created time.Time) error {
	f := e.file
	src, err := root.Open(f.From)
	if err != nil {
		return fmt.Errorf("build.files: opening %s in the patched tree: %w", f.From, err)
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return fmt.Errorf("build.files: %s: %w", f.From, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("build.files: %s in the patched tree is not a regular file", f.From)
	}
	mode := f.Mode
	if mode == 0 {
		mode = DefaultFileMode
		if st.Mode().Perm()&0o111 != 0 {
			mode = DefaultExecMode
		}
	}
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     e.name,
		Mode:     tarMode(mode),
		Size:     st.Size(),
		ModTime:  created,
		Format:   tar.FormatPAX,
	}
	xattr, err := caps.Xattr(f.Capabilities)
	if err != nil {
		return fmt.Errorf("build.files: %s: %w", f.To, err)
	}
	if xattr != nil {
		hdr.PAXRecords = map[string]string{caps.PAXKey: string(xattr)}
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	n, err := io.Copy(tw, src)
	if err != nil {
		return fmt.Errorf("build.files: reading %s: %w", f.From, err)
	}
	if n != st.Size() {
		return fmt.Errorf("build.files: %s changed size while it was read", f.From)
	}
	return nil
}

// tarMode turns an os.FileMode into tar's mode bits.
func tarMode(m os.FileMode) int64 {
	v := int64(m.Perm())
	if m&os.ModeSetuid != 0 {
		v |= 0o4000
	}
	if m&os.ModeSetgid != 0 {
		v |= 0o2000
	}
	if m&os.ModeSticky != 0 {
		v |= 0o1000
	}
	return v
}

// layerEntries orders the files and their parent directories by path.
func layerEntries(files []File) ([]entry, error) {
	byName := map[string]entry{}
	for i := range files {
		f := &files[i]
		to := path.Clean("/" + f.To)
		if to == "/" || to != f.To {
			return nil, fmt.Errorf("build.files: %q is not a clean absolute path", f.To)
		}
		if !fs.ValidPath(f.From) {
			return nil, fmt.Errorf("build.files: %q is not a path inside the tree", f.From)
		}
		name := strings.TrimPrefix(to, "/")
		if _, dup := byName[name]; dup {
			return nil, fmt.Errorf("build.files: %s is named twice", f.To)
		}
		byName[name] = entry{name: name, file: f}
	}
	for name, e := range byName {
		if e.file == nil {
			continue
		}
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			if other, ok := byName[d]; ok && other.file != nil {
				return nil, fmt.Errorf("build.files: /%s is a file and a directory", d)
			}
			byName[d] = entry{name: d + "/"}
		}
	}
	out := make([]entry, 0, len(byName))
	for _, e := range byName {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		return strings.TrimSuffix(out[i].name, "/") < strings.TrimSuffix(out[j].name, "/")
	})
	return out, nil
}

func hashOf(h hash.Hash) v1.Hash {
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(h.Sum(nil))}
}
