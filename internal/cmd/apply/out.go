package apply

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/tree"
)

// MarkerFile sits at the top of every tree apply writes: it says patchkit
// wrote the directory, so that a later run may replace it.
const MarkerFile = ".patchkit-out"

// markerText is MarkerFile's content. It is the same on every run, so the
// tree stays reproducible.
const markerText = `This directory was written by patchkit apply. patchkit replaces it on the
next run (with --out DIR, only with --force). Remove this file and patchkit
will never replace the directory.
`

// outTarget says where the patched tree may go.
type outTarget struct {
	// Dir is where the tree goes; Root and CacheDir are never replaced, nor
	// any directory that holds them.
	Dir, Root, CacheDir string
	// Explicit says Dir was given with --out: a tree patchkit wrote there
	// earlier is replaced only with Force, since the user may have edited it.
	// The default _output/IMAGE/src is patchkit's own and always replaced.
	Explicit, Force bool
}

// check refuses a Dir whose replacement could lose something: the
// filesystem root, a directory that is or holds the repository root or the
// cache directory, one inside the cache or inside a .git directory, a
// symbolic link or a file, and a non-empty directory that patchkit did not
// write (no MarkerFile). An empty or missing directory is fine. It touches
// nothing.
func (o outTarget) check() error {
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return refuse(o.Dir, err.Error())
	}
	real := resolve(abs)
	if real == string(filepath.Separator) {
		return refuse(o.Dir, "it is the filesystem root")
	}
	for _, p := range []struct{ what, dir string }{{"the repository root", o.Root}, {"the cache directory", o.CacheDir}} {
		if p.dir == "" {
			continue
		}
		pd := resolve(p.dir)
		if within(pd, real) {
			return refuse(o.Dir, fmt.Sprintf("it holds %s %s", p.what, p.dir))
		}
		if p.what == "the cache directory" && within(real, pd) {
			return refuse(o.Dir, fmt.Sprintf("it is inside %s %s", p.what, p.dir))
		}
	}
	if !o.Explicit && o.Root != "" && !within(real, resolve(o.Root)) {
		// A committed symbolic link (_output -> elsewhere) must not carry
		// the default tree out of the repository.
		return refuse(o.Dir, fmt.Sprintf("it resolves to %s, outside the repository (a symbolic link): name a directory with --out", real))
	}
	for _, el := range strings.Split(filepath.ToSlash(real), "/") {
		if strings.EqualFold(el, ".git") {
			return refuse(o.Dir, "it is inside a .git directory")
		}
	}
	return o.checkExisting(abs)
}

// checkExisting looks at what abs holds now.
func (o outTarget) checkExisting(abs string) error {
	st, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return refuse(o.Dir, err.Error())
	case st.Mode()&fs.ModeSymlink != 0:
		return refuse(o.Dir, "it is a symbolic link; name the directory itself")
	case !st.IsDir():
		return refuse(o.Dir, "it is not a directory")
	}
	empty, err := isEmpty(abs)
	if err != nil {
		return refuse(o.Dir, err.Error())
	}
	if empty {
		return nil
	}
	if m, err := os.Lstat(filepath.Join(abs, MarkerFile)); err != nil || !m.Mode().IsRegular() {
		return refuse(o.Dir, "it is not empty and patchkit did not write it (no "+MarkerFile+"); name a new or empty directory")
	}
	if o.Explicit && !o.Force {
		return refuse(o.Dir, "it holds a tree patchkit wrote earlier, which may have been edited since; --force replaces it")
	}
	return nil
}

func refuse(dir, why string) error {
	return &cmdutil.UsageError{Err: fmt.Errorf("--out %s: refusing to replace it: %s", dir, why)}
}

// resolve returns abs with the symbolic links of its existing part
// resolved, so that a link to the repository is seen for what it is.
func resolve(abs string) string {
	abs = filepath.Clean(abs)
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		if p == filepath.Dir(p) {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// within reports whether p is dir or lies under it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func isEmpty(dir string) (bool, error) {
	f, err := os.Open(dir)
	if err != nil {
		return false, err
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	return false, err
}

// withMarker returns changes plus MarkerFile, leaving changes as it was.
func withMarker(changes map[string]*tree.File) map[string]*tree.File {
	out := make(map[string]*tree.File, len(changes)+1)
	for k, v := range changes {
		out[k] = v
	}
	out[MarkerFile] = &tree.File{Mode: tree.Regular, Data: []byte(markerText)}
	return out
}
