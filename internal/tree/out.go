package tree

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/patchkit/patchkit/internal/diag"
)

// OwnerSuffix names the ownership record of a tree patchkit wrote: it sits
// beside the tree, outside it, as ".<name>" + OwnerSuffix (the tree
// _output/img/src has _output/img/.src.patchkit-out), so the tree is
// exactly the one `git apply` gives and nothing of patchkit's ends up in
// an image built from it.
const OwnerSuffix = ".patchkit-out"

// LegacyMarker is the marker file earlier versions wrote at the top of
// every tree. A tree holding it is still recognised as patchkit's; the
// next write replaces the tree with one without it.
const LegacyMarker = ".patchkit-out"

// OwnerRecord is the path of dir's ownership record.
func OwnerRecord(dir string) string {
	dir = filepath.Clean(dir)
	return filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+OwnerSuffix)
}

// owner is the content of an ownership record: the identities (device and
// inode) of the directories patchkit wrote at that name. It holds two
// while a replacement is being moved into place, so that a run killed in
// between leaves either tree recognised.
type owner struct {
	Note  string     `json:"note"`
	Trees []identity `json:"trees"`
}

type identity struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
	// Birth is the directory's creation time in nanoseconds (statx), so a
	// directory made later at the same path, which may reuse the inode
	// number, is another one; 0 where the filesystem keeps none.
	Birth int64 `json:"birth,omitempty"`
}

const ownerNote = "patchkit apply wrote the directory beside this file (its identity is below) and replaces it on the next run; remove this file and patchkit never replaces that directory"

// identityOf is the identity of the directory at path (not followed).
func identityOf(path string) (identity, bool) {
	var sx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_INO|unix.STATX_BTIME, &sx); err != nil {
		return identity{}, false
	}
	id := identity{Dev: unix.Mkdev(sx.Dev_major, sx.Dev_minor), Ino: sx.Ino}
	if sx.Mask&unix.STATX_BTIME != 0 {
		id.Birth = sx.Btime.Sec*1e9 + int64(sx.Btime.Nsec)
	}
	return id, true
}

// readOwner returns the identities dir's record names; none when it has no
// (readable) record.
func readOwner(dir string) []identity {
	b, err := os.ReadFile(OwnerRecord(dir))
	if err != nil {
		return nil
	}
	var o owner
	if json.Unmarshal(b, &o) != nil {
		return nil
	}
	return o.Trees
}

// Owned reports whether patchkit wrote dir: its ownership record names the
// directory now there, or (an earlier version's tree) it holds the
// LegacyMarker file.
func Owned(dir string) bool {
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() {
		return false
	}
	if id, ok := identityOf(dir); ok && slices.Contains(readOwner(dir), id) {
		return true
	}
	m, err := os.Lstat(filepath.Join(dir, LegacyMarker))
	return err == nil && m.Mode().IsRegular()
}

func writeOwner(dir string, ids []identity) error {
	b, err := json.MarshalIndent(owner{Note: ownerNote, Trees: ids}, "", "  ")
	if err != nil {
		return err
	}
	path := OwnerRecord(dir)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing the ownership record %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing the ownership record %s: %w", path, err)
	}
	return nil
}

// OutPolicy says where a patched tree may be written, and writes it there.
type OutPolicy struct {
	// Dir is where the tree goes; Root and CacheDir are never replaced, nor
	// any directory that holds them.
	Dir, Root, CacheDir string
	// Explicit says Dir was named by the user (--out): a tree patchkit
	// wrote there earlier is replaced only with Force, since the user may
	// have edited it. The default directory is patchkit's own and always
	// replaced when patchkit wrote it.
	Explicit, Force bool

	// moving, when set, is called once the record names both trees, just
	// before the new one is moved into place (a test seam).
	moving func(tmp string)
}

// Check refuses a Dir whose replacement could lose something: the
// filesystem root, a directory that is or holds the repository root or the
// cache directory, one inside the cache or inside a .git directory, a
// symbolic link or a file, a default Dir that a symbolic link carries out of
// the repository, and a non-empty directory that patchkit did not write
// (see Owned). An empty or missing directory is fine. It touches nothing;
// a refusal is a *diag.UsageError.
func (o OutPolicy) Check() error {
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return o.refuse(err.Error())
	}
	real := resolveExisting(abs)
	if real == string(filepath.Separator) {
		return o.refuse("it is the filesystem root")
	}
	for _, p := range []struct{ what, dir string }{{"the repository root", o.Root}, {"the cache directory", o.CacheDir}} {
		if p.dir == "" {
			continue
		}
		pd := resolveExisting(p.dir)
		if within(pd, real) {
			return o.refuse(fmt.Sprintf("it holds %s %s", p.what, p.dir))
		}
		if p.what == "the cache directory" && within(real, pd) {
			return o.refuse(fmt.Sprintf("it is inside %s %s", p.what, p.dir))
		}
	}
	if !o.Explicit && o.Root != "" && !within(real, resolveExisting(o.Root)) {
		// A committed symbolic link (_output -> elsewhere) must not carry
		// the default tree out of the repository.
		return o.refuse(fmt.Sprintf("it resolves to %s, outside the repository (a symbolic link): name a directory with --out", real))
	}
	for _, el := range strings.Split(filepath.ToSlash(real), "/") {
		if strings.EqualFold(el, ".git") {
			return o.refuse("it is inside a .git directory")
		}
	}
	return o.checkExisting(abs)
}

// checkExisting looks at what abs holds now.
func (o OutPolicy) checkExisting(abs string) error {
	st, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return o.refuse(err.Error())
	case st.Mode()&fs.ModeSymlink != 0:
		return o.refuse("it is a symbolic link; name the directory itself")
	case !st.IsDir():
		return o.refuse("it is not a directory")
	}
	empty, err := isEmpty(abs)
	if err != nil {
		return o.refuse(err.Error())
	}
	if empty {
		return nil
	}
	if !Owned(abs) {
		return o.refuse("it is not empty and patchkit did not write it (no ownership record " + filepath.Base(OwnerRecord(abs)) + " beside it); name a new or empty directory")
	}
	if o.Explicit && !o.Force {
		return o.refuse("it holds a tree patchkit wrote earlier, which may have been edited since; --force replaces it")
	}
	return nil
}

func (o OutPolicy) refuse(why string) error {
	return &diag.UsageError{Err: fmt.Errorf("--out %s: refusing to replace it: %s", o.Dir, why)}
}

// Write writes base with changes laid over it into Dir, as WriteAtomic
// does, and records beside it that patchkit wrote it. The record names
// both the tree being replaced and the new one until the new one is in
// place, so a run killed at any point leaves a tree a later run may
// replace. The caller has run Check.
func (o OutPolicy) Write(base Walker, changes map[string]*File) error {
	var keep []identity
	if Owned(o.Dir) {
		if id, ok := identityOf(o.Dir); ok {
			keep = append(keep, id)
		}
	}
	var fresh identity
	err := writeAtomic(o.Dir, base, changes, func(tmp string) error {
		id, ok := identityOf(tmp)
		if !ok {
			return fmt.Errorf("reading the identity of %s: statx failed", tmp)
		}
		fresh = id
		if err := writeOwner(o.Dir, append(keep, id)); err != nil {
			return err
		}
		if o.moving != nil {
			o.moving(tmp)
		}
		return nil
	})
	if err != nil {
		if len(keep) == 0 && fresh != (identity{}) {
			os.Remove(OwnerRecord(o.Dir)) // it named only a tree that was never moved in
		}
		return err
	}
	return writeOwner(o.Dir, []identity{fresh})
}

// resolveExisting returns abs with the symbolic links of its existing part
// resolved, so that a link to the repository is seen for what it is.
func resolveExisting(abs string) string {
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
