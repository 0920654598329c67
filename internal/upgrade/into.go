package upgrade

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/txn"
)

// IntoDir resolves the DIR of `upgrade SRC --into DIR`, relative to the
// repository root: a DIR with no slash is a sibling of the unit's
// directory src (--into 1-37 beside projects/o/r/1-36), any other is
// relative to the root. DIR must be inside the root, not SRC nor inside
// it, and must not exist or be an empty directory: anything else is bad
// input.
func IntoDir(root, src, dir string) (string, error) {
	bad := func(format string, args ...any) error {
		return &diag.InputError{File: "--into", Msg: fmt.Sprintf(format, args...)}
	}
	dir = strings.TrimRight(dir, "/")
	clean := path.Clean(filepath.ToSlash(dir))
	switch {
	case dir == "":
		return "", bad("names no directory")
	case path.IsAbs(clean):
		rel, err := filepath.Rel(root, filepath.FromSlash(clean))
		if err != nil {
			return "", bad("%s is not inside the repository", dir)
		}
		clean = filepath.ToSlash(rel)
	case !strings.Contains(strings.TrimPrefix(dir, "./"), "/"):
		clean = path.Join(path.Dir(src), clean)
	}
	if clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", bad("%s is not a directory inside the repository", dir)
	}
	if clean == src || strings.HasPrefix(clean+"/", src+"/") || strings.HasPrefix(src+"/", clean+"/") {
		return "", bad("%s is %s, or holds it, or is inside it: the new unit is a directory of its own", dir, src)
	}
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(clean)))
	switch {
	case err == nil && len(entries) > 0:
		return "", bad("%s exists and is not empty: upgrade --into creates a new unit", clean)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", bad("%s: %v", clean, err)
	}
	return clean, nil
}

// Into turns the plan of an upgrade of the unit s into the writes of its
// copy in dst (see IntoDir): every file of the unit's directory (its spec,
// the pin's file, the version places, the patch directory and the others)
// is created under dst, in the content the plan gives it (a carried patch,
// the moved pin) or as it is; a dropped patch is not copied. The unit's
// own files are only read: each is a dependency of the set, so an edit
// made while upgrade ran refuses it. A plan that writes outside the unit's
// directory (a version place shared with other units), or a spec that
// names a path of its own directory from the root rather than from the
// spec (./), cannot be copied: bad input. Into rewrites r's paths to dst.
func (r *Result) Into(root string, s *spec.Spec, patches []*series.Patch, dst string) (*txn.Set, error) {
	src := s.Dir
	inSrc := func(p string) bool { return strings.HasPrefix(p, src+"/") }
	moved := func(p string) string { return dst + strings.TrimPrefix(p, src) }
	if !inSrc(s.Patches) {
		return nil, &diag.InputError{File: s.File, Key: "patches", Msg: fmt.Sprintf("the patch directory %s is not inside %s: upgrade --into copies a unit whose series is its own", s.Patches, src)}
	}
	if err := checkOwnPaths(root, s); err != nil {
		return nil, err
	}
	writes := map[string]Write{}
	for _, w := range r.Writes {
		if !inSrc(w.Path) {
			return nil, &diag.InputError{File: w.Path, Msg: fmt.Sprintf("upgrade --into would change %s, which is outside %s: the units would share it", w.Path, src)}
		}
		writes[w.Path] = w
	}
	set := txn.New(root)
	if err := Depends(set, root, s, patches, map[string]bool{}); err != nil {
		return nil, err
	}
	var created []Write
	seen, modes := map[string]bool{}, map[string]fs.FileMode{}
	err := filepath.WalkDir(filepath.Join(root, filepath.FromSlash(src)), func(full string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, full)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != src && slices.Contains(spec.SkipDirs, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return &diag.InputError{File: rel, Msg: fmt.Sprintf("not a regular file (%v): upgrade --into copies regular files only; copy it by hand", d.Type())}
		}
		seen[rel] = true
		data, err := os.ReadFile(full)
		if err != nil {
			return err
		}
		set.Expect(rel, data)
		w, ok := writes[rel]
		switch {
		case ok && w.Delete:
			return nil
		case ok:
			data = w.Data
		}
		created = append(created, Write{Path: moved(rel), Data: data})
		if info, err := d.Info(); err == nil && info.Mode().Perm() != 0o644 {
			modes[moved(rel)] = info.Mode().Perm()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, w := range r.Writes {
		if !seen[w.Path] && !w.Delete {
			created = append(created, Write{Path: moved(w.Path), Data: w.Data})
		}
	}
	for _, w := range created {
		set.Create(w.Path, w.Data)
	}
	r.Writes, r.modes, r.NewUnit = created, modes, dst
	r.Pin.File = moved(r.Pin.File)
	for i := range r.Patches {
		r.Patches[i].File = moved(r.Patches[i].File)
	}
	return set, nil
}

// checkOwnPaths refuses a spec that writes a path inside its own directory
// from the root (patches: projects/o/r/1-36/patches): its copy would name
// the old unit's files. init writes them relative to the spec (./patches).
func checkOwnPaths(root string, s *spec.Spec) error {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(s.File)))
	if err != nil {
		return err
	}
	var raw struct {
		Upstream struct {
			Ref      yaml.Node `yaml:"ref"`
			Versions []struct {
				File string `yaml:"file"`
			} `yaml:"versions"`
		} `yaml:"upstream"`
		Patches yaml.Node `yaml:"patches"`
	}
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return &diag.InputError{File: s.File, Msg: "reading spec", Err: err}
	}
	type named struct{ key, value string }
	var paths []named
	if raw.Patches.Kind == yaml.ScalarNode {
		paths = append(paths, named{"patches", raw.Patches.Value})
	}
	if raw.Patches.Kind == yaml.MappingNode || raw.Upstream.Ref.Kind == yaml.MappingNode {
		for _, n := range []struct {
			key  string
			node *yaml.Node
			want []string
		}{{"patches", &raw.Patches, []string{"dir"}}, {"upstream.ref", &raw.Upstream.Ref, []string{"file", "dockerfile", "makefile"}}} {
			for i := 0; n.node.Kind == yaml.MappingNode && i+1 < len(n.node.Content); i += 2 {
				if slices.Contains(n.want, n.node.Content[i].Value) {
					paths = append(paths, named{n.key + "." + n.node.Content[i].Value, n.node.Content[i+1].Value})
				}
			}
		}
	}
	for _, v := range raw.Upstream.Versions {
		paths = append(paths, named{"upstream.versions", v.File})
	}
	for _, p := range paths {
		relative := p.value == "." || strings.HasPrefix(p.value, "./") || strings.HasPrefix(p.value, "../")
		if !relative && (p.value == s.Dir || strings.HasPrefix(path.Clean(p.value), s.Dir+"/")) {
			return &diag.InputError{File: s.File, Key: p.key, Msg: fmt.Sprintf("%s names %s from the repository root: a copy of the unit would still name it; write it relative to the spec (./%s) for upgrade --into", p.key, p.value, strings.TrimPrefix(path.Clean(p.value), s.Dir+"/"))}
		}
	}
	return nil
}

// mkdirs creates the directories of r's writes that do not exist, and
// returns what removes them again (each when empty, deepest first) for a
// set that was refused.
func (r *Result) mkdirs(root string) (undo func(), err error) {
	var made []string
	undo = func() {
		for i := len(made) - 1; i >= 0; i-- {
			os.Remove(made[i])
		}
	}
	for _, w := range r.Writes {
		var missing []string
		for d := filepath.Dir(filepath.Join(root, filepath.FromSlash(w.Path))); ; d = filepath.Dir(d) {
			if _, err := os.Lstat(d); err == nil {
				break
			} else if !errors.Is(err, fs.ErrNotExist) {
				undo()
				return nil, err
			}
			missing = append(missing, d)
		}
		for i := len(missing) - 1; i >= 0; i-- {
			if err := os.Mkdir(missing[i], 0o755); err != nil {
				undo()
				return nil, err
			}
			made = append(made, missing[i])
		}
	}
	return undo, nil
}

// chmodCopies gives each file Into created the mode of the file it copies
// (txn creates files 0644).
func (r *Result) chmodCopies(root string) error {
	for p, mode := range r.modes {
		if err := os.Chmod(filepath.Join(root, filepath.FromSlash(p)), mode); err != nil {
			return err
		}
	}
	return nil
}
