package upgrade

import (
	"fmt"
	"os"
	"path/filepath"
)

// Apply writes the plan's files under root: each new content to a temporary
// sibling first, then every rename, then the deletions, so that a failure
// before the renames leaves the repository untouched.
func (r *Result) Apply(root string) error {
	type pending struct{ tmp, dst string }
	var done []pending
	cleanup := func() {
		for _, p := range done {
			os.Remove(p.tmp)
		}
	}
	for _, w := range r.Writes {
		if w.Delete {
			continue
		}
		dst := filepath.Join(root, filepath.FromSlash(w.Path))
		mode := os.FileMode(0o644)
		if st, err := os.Stat(dst); err == nil {
			mode = st.Mode().Perm()
		}
		f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
		if err != nil {
			cleanup()
			return fmt.Errorf("writing %s: %w", w.Path, err)
		}
		done = append(done, pending{f.Name(), dst})
		_, err = f.Write(w.Data)
		if err == nil {
			err = f.Chmod(mode)
		}
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			cleanup()
			return fmt.Errorf("writing %s: %w", w.Path, err)
		}
	}
	for _, p := range done {
		if err := os.Rename(p.tmp, p.dst); err != nil {
			cleanup()
			return fmt.Errorf("writing %s: %w", p.dst, err)
		}
	}
	for _, w := range r.Writes {
		if w.Delete {
			if err := os.Remove(filepath.Join(root, filepath.FromSlash(w.Path))); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("removing %s: %w", w.Path, err)
			}
		}
	}
	return nil
}
