package forward

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/upstream"
)

// Submission is one `patchkit forward PATCH`: the unit's prepared series
// and where the change goes.
type Submission struct {
	Root      string
	Cache     *upstream.Cache
	Spec      *spec.Spec
	PinCommit string
	Patches   []*series.Patch
	// Patch is the patch file, relative to the root (FindPatch).
	Patch string
	// To is the upstream ref to carry it to; "" is the default branch.
	To string
	// Out is the directory written; "" is _output/forward under Root.
	Out string
	// Author is "Name <email>"; "" is the header's Author.
	Author   string
	WithTest bool
}

// Submit carries the change to its branch (Prepare) and, when it does
// not conflict there, writes the format-patch file and the pull request
// body into Out, both or neither. It returns the files written; a change
// that conflicts (Result.Mail nil) writes nothing and is no error.
func Submit(ctx context.Context, sub Submission) (*Result, []string, error) {
	index := -1
	for i, p := range sub.Patches {
		if p.Path == sub.Patch {
			index = i
		}
	}
	if index < 0 {
		return nil, nil, &diag.InputError{File: sub.Patch, Msg: fmt.Sprintf("not a patch of the series of %s", sub.Spec.Dir)}
	}
	to := sub.To
	if to == "" {
		to = "HEAD"
	}
	c := sub.Cache
	if err := c.Fetch(ctx); err != nil {
		return nil, nil, err
	}
	if err := c.Ensure(ctx, to); err != nil {
		return nil, nil, fmt.Errorf("--to %s: %w", to, err)
	}
	toCommit, err := c.Resolve(to)
	if err != nil {
		return nil, nil, fmt.Errorf("--to %s: %w", to, err)
	}
	if to == "HEAD" {
		// Name the default branch.
		if b := c.DefaultBranch(); b != "" {
			to = b
		}
	}
	date, err := sourceDate()
	if err != nil {
		return nil, nil, &diag.UsageError{Err: err}
	}
	res, err := Prepare(ctx, Input{Cache: c, Spec: sub.Spec, PinCommit: sub.PinCommit,
		Patches: sub.Patches, Index: index, To: to, ToCommit: toCommit, Author: sub.Author, Date: date,
		WithTest: sub.WithTest, Root: sub.Root})
	if err != nil {
		return nil, nil, c.AsFault(err)
	}
	if res.Mail == nil {
		return res, nil, nil
	}
	dir := sub.Out
	if dir == "" {
		dir = filepath.Join(sub.Root, "_output", "forward")
	}
	body := strings.TrimSuffix(res.Name, ".patch") + ".pr.md"
	var files []string
	for _, w := range []struct {
		name string
		data []byte
	}{{res.Name, res.Mail}, {body, []byte(res.Body)}} {
		file := filepath.Join(dir, w.name)
		if err := writeAtomic(file, w.data); err != nil {
			// Leave no half a submission: take back what this run wrote.
			for _, done := range files {
				os.Remove(done)
			}
			return nil, nil, err
		}
		files = append(files, file)
	}
	return res, files, nil
}

// Record sets Forwarded: url in the patch file rel (relative to root) of
// the unit s, and says whether the file changed.
func Record(root string, s *spec.Spec, rel, url string, opts ...series.Option) (bool, error) {
	file := filepath.Join(root, filepath.FromSlash(rel))
	raw, err := os.ReadFile(file)
	if err != nil {
		return false, &diag.InputError{File: rel, Msg: "cannot read the patch", Err: err}
	}
	p, err := series.Parse(rel, raw, opts...)
	if err != nil {
		return false, err
	}
	if p.IsReference() {
		return false, &diag.InputError{File: rel, Msg: "a reference to an upstream commit: there is nothing to forward"}
	}
	data, changed, err := SetForwarded(p, url)
	if err != nil {
		return false, err
	}
	if changed {
		if err := writeAtomic(file, data); err != nil {
			return false, err
		}
	}
	return changed, nil
}

// FindPatch finds the unit whose series holds patch (a path relative to
// the root, or an absolute path inside it), and the patch's path relative
// to the root.
func FindPatch(root, patch string) (*spec.Spec, string, error) {
	rel := patch
	if filepath.IsAbs(patch) {
		r, err := filepath.Rel(root, patch)
		if err != nil || strings.HasPrefix(r, "..") {
			return nil, "", &diag.UsageError{Err: fmt.Errorf("PATCH %s is outside the repository %s", patch, root)}
		}
		rel = r
	}
	rel = path.Clean(filepath.ToSlash(rel))
	dirs, err := spec.List(root)
	if err != nil {
		return nil, "", err
	}
	for _, d := range dirs {
		s, err := spec.Load(root, d)
		if err != nil {
			return nil, "", err
		}
		if path.Dir(rel) == path.Clean(s.Patches) {
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
				return nil, "", &diag.InputError{File: rel, Msg: "no such patch file", Err: err}
			}
			return s, rel, nil
		}
	}
	return nil, "", &diag.InputError{File: rel, Msg: "not in the patch directory of any unit"}
}

// sourceDate is SOURCE_DATE_EPOCH when set, else zero (now).
func sourceDate() (time.Time, error) {
	v := os.Getenv("SOURCE_DATE_EPOCH")
	if v == "" {
		return time.Time{}, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: want seconds since 1970", v)
	}
	return time.Unix(n, 0).UTC(), nil
}

// writeAtomic writes data to file through a temporary sibling renamed over
// it, creating the directory.
func writeAtomic(file string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if st, err := os.Stat(file); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}
