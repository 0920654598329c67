package spec

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/patchkit/patchkit/internal/diag"
)

// SkipDirs are the directories discovery never walks into.
var SkipDirs = []string{".git", "_output", "vendor", "node_modules"}

// Unit is an image unit: a directory holding a patchkit.yaml.
type Unit struct {
	// Name is the directory's base name, the image's name.
	Name string
	// Dir is the directory relative to the repository root, slash-separated.
	Dir string
}

// File is the unit's spec path relative to the root.
func (u Unit) File() string { return path.Join(u.Dir, FileName) }

// Discover returns every image unit under root, sorted by directory: each
// directory holding a patchkit.yaml, skipping SkipDirs, symlinks, and
// nested repositories: a directory below root holding its own
// RepoFileName is another repository's root, like a nested Go module.
func Discover(root string) ([]Unit, error) {
	w := walk(root)
	return w.units, w.err
}

// ChartFileName is the spec file of a directory's chart units
// (chart.FileName). The walk that finds the image units finds these too,
// so that a run over both walks the tree once.
const ChartFileName = "patchkit-charts.yaml"

// walked is what one walk of a tree found.
type walked struct {
	units []Unit
	err   error // why the units could not be found
	// charts are the ChartFileName files under the root (slash-separated,
	// relative to it, sorted), nested repositories included; chartsErr is
	// the first directory the walk could not read, which the chart units
	// do not skip.
	charts    []string
	chartsErr error
}

// walk walks root once for image units (see Discover) and chart spec
// files: it reads each directory once (a nested repository is known from
// its directory's listing, with no further system call) and visits the
// entries in lexical order, as filepath.WalkDir does.
func walk(root string) (w walked) {
	walks.Add(1)
	fi, err := os.Lstat(root)
	if err != nil {
		return walked{err: fmt.Errorf("finding image units: %w", err), chartsErr: err}
	}
	if !fi.IsDir() {
		return w // as filepath.WalkDir: a root that is no directory (a symlink too) holds nothing
	}
	if err := w.dir(root, "", false); err != nil {
		return walked{err: fmt.Errorf("finding image units: %w", err), chartsErr: err}
	}
	sort.Slice(w.units, func(i, j int) bool { return w.units[i].Dir < w.units[j].Dir })
	sort.Strings(w.charts)
	return w
}

// dir walks the directory p (rel below the root, "" for the root itself);
// nested says p is inside a nested repository, whose image units are not
// the root's. Only the root's own listing failing is an error; another
// directory that cannot be read holds no unit (and fails the chart units,
// chartsErr).
func (w *walked) dir(p, rel string, nested bool) error {
	entries, err := os.ReadDir(p)
	if err != nil {
		if rel == "" {
			return err
		}
		if w.chartsErr == nil {
			w.chartsErr = err
		}
	}
	if rel != "" && !nested {
		for _, e := range entries {
			nested = nested || e.Name() == RepoFileName
		}
	}
	for _, e := range entries {
		name := e.Name()
		sub := path.Join(rel, name)
		switch {
		case e.IsDir():
			if contains(SkipDirs, name) {
				continue
			}
			if err := w.dir(filepath.Join(p, name), sub, nested); err != nil {
				return err
			}
		case name == ChartFileName:
			w.charts = append(w.charts, sub)
		case name == FileName && rel != "" && !nested && e.Type().IsRegular():
			w.units = append(w.units, Unit{Name: path.Base(rel), Dir: rel})
		}
	}
	return nil
}

// Find resolves an IMAGE argument: a unit's directory relative to the root
// (images/kubeovn, packages/system/kubeovn/images/kubeovn), or a unit's name
// when exactly one unit has it. An unknown or ambiguous argument is bad
// input; an ambiguous name's error lists the paths to use instead.
func Find(root, arg string) (Unit, error) {
	return find(root, arg, func() ([]Unit, error) { return Discover(root) })
}

// find is Find with the units from discover, which it calls only for a
// name.
func find(root, arg string, discover func() ([]Unit, error)) (Unit, error) {
	clean := path.Clean(strings.TrimPrefix(filepath.ToSlash(arg), "./"))
	if arg == "" || path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return Unit{}, &diag.InputError{File: arg, Msg: fmt.Sprintf("image %q is not a unit directory inside the repository or a unit name", arg)}
	}
	if strings.Contains(clean, "/") {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(clean), FileName)); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return Unit{}, &diag.InputError{File: path.Join(clean, FileName), Msg: fmt.Sprintf("no image %q (no %s)", arg, path.Join(clean, FileName))}
			}
			return Unit{}, &diag.InputError{File: path.Join(clean, FileName), Msg: "reading spec", Err: err}
		}
		return Unit{Name: path.Base(clean), Dir: clean}, nil
	}
	if !nameRE.MatchString(clean) {
		return Unit{}, &diag.InputError{File: Path(clean), Msg: fmt.Sprintf("image name %q is not a valid image unit name", arg)}
	}
	units, err := discover()
	if err != nil {
		return Unit{}, err
	}
	var found []Unit
	for _, u := range units {
		if u.Name == clean {
			found = append(found, u)
		}
	}
	switch len(found) {
	case 0:
		return Unit{}, &diag.InputError{File: arg, Msg: noUnit(arg, clean, units)}
	case 1:
		return found[0], nil
	}
	dirs := make([]string, len(found))
	for i, u := range found {
		dirs[i] = u.Dir
	}
	return Unit{}, &diag.InputError{File: clean, Msg: fmt.Sprintf("image name %q is ambiguous: name one of %s", arg, strings.Join(dirs, ", "))}
}

// Args returns an IMAGE argument for each unit: its name when no other unit
// has it, else its directory. Sorted.
func Args(units []Unit) []string {
	count := map[string]int{}
	for _, u := range units {
		count[u.Name]++
	}
	out := make([]string, 0, len(units))
	for _, u := range units {
		if count[u.Name] == 1 {
			out = append(out, u.Name)
		} else {
			out = append(out, u.Dir)
		}
	}
	sort.Strings(out)
	return out
}

// noUnit says that no unit is named name, with the units it may have meant
// (a name or directory that holds it, or one a typo away) and how many
// there are: an adopter's units live anywhere, so patchkit's own
// images/<name>/ layout is no hint.
func noUnit(arg, name string, units []Unit) string {
	msg := fmt.Sprintf("no image %q: no unit is named %s", arg, name)
	var near []string
	for _, u := range units {
		if strings.Contains(u.Name, name) || strings.Contains(name, u.Name) || strings.Contains(u.Dir, name) || editDistance(u.Name, name) <= 2 {
			near = append(near, u.Dir)
		}
	}
	switch {
	case len(units) == 0:
		return msg + ": the repository has no unit (no patchkit.yaml; patchkit init writes them)"
	case len(near) > 0:
		if len(near) > 5 {
			near = append(near[:5], "…")
		}
		msg += ": did you mean " + strings.Join(near, ", ") + "?"
	}
	return fmt.Sprintf("%s (the repository has %d units; name one by its directory or its name)", msg, len(units))
}
