// Package adopt finds the image units a repository already has (a
// Dockerfile that fetches an upstream and applies a patch directory) and
// writes a patchkit.yaml for each, pointing at the pin's source.
package adopt

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/patchkit/patchkit/internal/buildfile"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/txn"
)

// Statuses of a Unit.
const (
	// StatusNew is a unit whose spec Write will write.
	StatusNew = "new"
	// StatusWritten is a unit whose spec Write wrote.
	StatusWritten = "written"
	// StatusExists is a unit that already has a spec, left alone.
	StatusExists = "exists"
	// StatusUnreadable is a unit found but not understood: Problem says why.
	StatusUnreadable = "unreadable"
)

// KindImage is the Kind of an image unit.
const KindImage = "image"

// Unit is one image unit found in a repository.
type Unit struct {
	// Dir is the unit's directory relative to the root.
	Dir string `json:"dir"`
	// Kind is KindImage for an image unit (a Dockerfile's or a Makefile
	// release branch's), "chart" for a vendored chart unit (internal/chart).
	Kind string `json:"kind,omitempty"`
	// Spec is the spec path relative to the root.
	Spec string `json:"spec"`
	// Dockerfile is the Dockerfile relative to the root ("" for a unit a
	// Makefile defines).
	Dockerfile string `json:"dockerfile"`
	// Recipe is the Makefile that builds a release-branch unit, relative
	// to the root (see makeunits.go); "" for a Dockerfile unit.
	Recipe string `json:"recipe,omitempty"`
	// Upstream is the resolved upstream URL and pin.
	Upstream Upstream `json:"upstream"`
	// Patches is the patch directory relative to the root.
	Patches string `json:"patches"`
	// Status is new, written, exists or unreadable.
	Status string `json:"status"`
	// Problem says why an unreadable unit could not be read, naming file:line.
	Problem string `json:"problem,omitempty"`
	// Notes are things the user should know about a readable unit.
	Notes []string `json:"notes,omitempty"`
	// Versions are the other places that name the pinned version
	// (upstream.versions in the spec).
	Versions []VersionPlace `json:"versions,omitempty"`

	// ApplyDiffers says how the Dockerfile applies the series differently
	// from patchkit, "" when it does not (see ApplyDiffers).
	ApplyDiffers string `json:"-"`
	// Recount: the Dockerfile applies with git apply --recount (the spec
	// init writes says patches.recount: true).
	Recount bool `json:"-"`

	// releases is the tag glob of the package's own release filter, and
	// releasesWhere the Makefile line it was read from.
	releases, releasesWhere string

	yaml []byte
}

// Upstream is a unit's upstream URL and pin, and where the pin is read.
type Upstream struct {
	URL string `json:"url"`
	Ref string `json:"ref"`
	// From is the pin's source: "dockerfile-arg TAG (Dockerfile:7)".
	From string `json:"from,omitempty"`
}

// Scan finds the units under each of dirs (relative to root; none means the
// whole root): every Dockerfile or Containerfile that fetches an upstream
// or applies a patch directory, and every release branch of a Makefile that
// reads its pin from a file of the branch and applies the branch's patch
// directory (makeunits.go). A directory that does not exist or leaves the
// root is bad input. Nothing is written.
func Scan(root string, dirs []string) ([]Unit, error) {
	return ScanContext(context.Background(), root, dirs)
}

// ScanContext is Scan, with a context for the make runs.
func ScanContext(ctx context.Context, root string, dirs []string) ([]Unit, error) {
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	files := map[string]bool{}
	for _, d := range dirs {
		clean := path.Clean(filepath.ToSlash(d))
		if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return nil, &diag.InputError{File: d, Msg: "not a directory inside the repository root"}
		}
		if st, err := os.Stat(filepath.Join(root, filepath.FromSlash(clean))); err != nil || !st.IsDir() {
			return nil, &diag.InputError{File: d, Msg: "not a directory"}
		}
		if _, err := txn.Resolve(root, clean); err != nil {
			return nil, err // a symbolic link that leaves the repository
		}
		if err := walk(root, clean, files); err != nil {
			return nil, err
		}
	}
	var units []Unit
	for f := range files {
		if isMakefile(path.Base(f)) {
			units = append(units, makeUnits(ctx, root, f)...)
			continue
		}
		if u, ok := inspect(root, f); ok {
			units = append(units, u)
		}
	}
	sortUnits(units)
	return units, nil
}

func isMakefile(name string) bool { return name == "Makefile" || name == "GNUmakefile" }

// Source is the file that defines u: its Dockerfile, or the Makefile of a
// release-branch unit.
func (u Unit) Source() string {
	if u.Recipe != "" {
		return u.Recipe
	}
	return u.Dockerfile
}

func walk(root, dir string, files map[string]bool) error {
	return filepath.WalkDir(filepath.Join(root, filepath.FromSlash(dir)), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if slicesContains(spec.SkipDirs, d.Name()) && p != filepath.Join(root, dir) {
				return filepath.SkipDir
			}
			return nil
		}
		if (d.Name() == "Dockerfile" || d.Name() == "Containerfile" || isMakefile(d.Name())) && d.Type().IsRegular() {
			rel, err := filepath.Rel(root, p)
			if err == nil {
				files[filepath.ToSlash(rel)] = true
			}
		}
		return nil
	})
}

func slicesContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Inspect reads the Dockerfile file (relative to root) as init does: the
// upstream and pin its build uses, and its patch directory. ok is false
// for a Dockerfile that applies no patch directory.
func Inspect(root, file string) (Unit, bool) { return inspect(root, file) }

// inspect reads one Dockerfile; ok is false for one that neither fetches an
// upstream nor applies patches (not a patch unit).
func inspect(root, file string) (Unit, bool) {
	dir := path.Dir(file)
	u := Unit{Dir: dir, Kind: KindImage, Spec: path.Join(dir, spec.FileName), Dockerfile: file, Status: StatusNew}
	d, err := buildfile.ReadDockerfile(filepath.Join(root, filepath.FromSlash(file)), file)
	if err != nil {
		return unreadable(u, err), true
	}
	ap := findApply(d)
	fetch, ferr := findFetch(d)
	switch {
	case ap == nil && (fetch != nil || ferr != nil):
		return u, false // fetches an upstream but carries no patches
	case ap == nil:
		return u, false
	case ferr != nil:
		return unreadable(u, ferr), true
	case fetch == nil:
		return unreadable(u, fmt.Errorf("%s:%d: applies %s/ but fetches no upstream source (no git clone or GitHub archive URL)", file, ap.Line, ap.Dir)), true
	}
	u.Patches = path.Join(dir, ap.Dir)
	ctx := &unitCtx{root: root, dir: dir, dockerfile: file, d: d}
	ctx.findBuilder()
	if err := u.read(ctx, fetch, ap); err != nil {
		return unreadable(u, err), true
	}
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(u.Spec))); err == nil {
		u.Status = StatusExists
	}
	return u, true
}

func unreadable(u Unit, err error) Unit {
	u.Status, u.Problem = StatusUnreadable, err.Error()
	return u
}

// read resolves the unit's url and pin and renders its spec, checked by
// loading it as patchkit will.
func (u *Unit) read(ctx *unitCtx, f *Fetch, ap *Apply) error {
	url, err := ctx.resolve(f.URL, f.Line)
	if err != nil {
		return fmt.Errorf("upstream url: %w", err)
	}
	pin, err := ctx.resolve(f.Ref, f.RefLine)
	if err != nil {
		return err
	}
	if strings.ContainsAny(pin.Value, "$ ") || pin.Value == "" {
		return fmt.Errorf("%s: cannot read the pin %q", pin.Where, pin.Value)
	}
	u.Upstream = Upstream{URL: url.Value, Ref: pin.Value}
	if pin.Source != nil {
		u.Upstream.From = fmt.Sprintf("%s (%s)", describe(pin.Source), pin.Where)
	} else {
		u.Upstream.From = "copied from " + pin.Where
		u.Notes = append(u.Notes, fmt.Sprintf("the pin %s is written literally at %s, not in an ARG or Makefile variable: it is copied into the spec; verify's pin check keeps the two equal", pin.Value, pin.Where))
	}
	if err := u.checkApply(ctx.root, ap); err != nil {
		return err
	}
	stamps, notes := ctx.readStamps()
	u.Notes = append(u.Notes, notes...)
	u.Versions = ctx.findVersions(pin, u.Patches)
	if g, where, ok := ctx.releaseFilter(url.Value); ok {
		if m, _ := path.Match(g, pin.Value); m {
			u.releases, u.releasesWhere = g, where
		} else {
			u.Notes = append(u.Notes, fmt.Sprintf("%s: filters the releases with %s, which the pin %s does not match: releases is the pin's major line instead", where, g, pin.Value))
		}
	}
	u.yaml = render(u, url, pin, f, ap, stamps)
	s, err := spec.LoadUnitReader(bytes.NewReader(u.yaml), ctx.root, spec.Unit{Name: path.Base(u.Dir), Dir: u.Dir})
	if err != nil {
		return fmt.Errorf("the spec patchkit would write does not load: %w", err)
	}
	if s.Upstream.Ref != pin.Value || s.Upstream.URL != url.Value {
		return fmt.Errorf("the spec reads %s at %s, but the build uses %s at %s", s.Upstream.URL, s.Upstream.Ref, url.Value, pin.Value)
	}
	return nil
}

// checkApply checks the patch directory and notes where the Dockerfile
// applies it differently from patchkit (every *.diff and *.patch, by name,
// in one git apply).
func (u *Unit) checkApply(root string, ap *Apply) error {
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(u.Patches)))
	if err != nil {
		return fmt.Errorf("%s:%d: copies %s, which is not a directory", u.Dockerfile, ap.CopyLine, u.Patches)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() && (strings.HasSuffix(e.Name(), ".diff") || strings.HasSuffix(e.Name(), ".patch")) {
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("%s: holds no *.diff or *.patch file", u.Patches)
	}
	u.Recount = Recounts(ap)
	if note := ApplyDiffers(ap); note != "" {
		u.ApplyDiffers = note
		u.Notes = append(u.Notes, fmt.Sprintf("%s:%d: %s", u.Dockerfile, ap.Line, note))
	}
	return nil
}

// Recounts reports whether the Dockerfile applies with git apply --recount,
// which the spec says with patches.recount: true.
func Recounts(ap *Apply) bool {
	for _, f := range ap.Flags {
		if f == "--recount" {
			return true
		}
	}
	return false
}

// ApplyDiffers says how the Dockerfile's way of applying the series differs
// from patchkit's (one git apply of every *.diff and *.patch in the
// directory, --recount when patches.recount is set), or "" when it does
// not.
func ApplyDiffers(ap *Apply) string {
	var why []string
	if ap.Tool != "git apply" {
		why = append(why, fmt.Sprintf("applies with %s, not git apply", ap.Tool))
	}
	if ap.Glob != "*.diff" && ap.Glob != "*.patch" && ap.Glob != "*" {
		why = append(why, fmt.Sprintf("applies %s, not the whole directory", ap.Glob))
	}
	for _, f := range ap.Flags {
		if f == "--recount" {
			continue // patches.recount says it (see Recounts)
		}
		if f == "-C0" || strings.HasPrefix(f, "--fuzz") || f == "--3way" || f == "-3" {
			why = append(why, fmt.Sprintf("uses %s, which patchkit does not", f))
		}
	}
	return strings.Join(why, "; ")
}

func describe(src *spec.Source) string {
	s := src.String()
	if src.DockerfileArg != "" && src.Dockerfile == "" {
		s = "dockerfile-arg " + src.DockerfileArg
	}
	if src.Prefix != "" || src.Suffix != "" {
		s = fmt.Sprintf("%s, as %s%s%s", s, src.Prefix, "<value>", src.Suffix)
	}
	return s
}

// Write writes the spec of every new unit (and, with force, replaces the
// specs of units that have one) in one transaction (internal/txn): under
// the repository lock, all or none, a spec that appeared or changed since
// the scan refusing the whole set, a link written through inside the
// repository and refused outside it.
func Write(ctx context.Context, root string, units []Unit, force bool, o txn.Options) error {
	set := txn.New(root)
	var wrote []*Unit
	for i := range units {
		u := &units[i]
		if u.Status != StatusNew && !(force && u.Status == StatusExists) {
			continue
		}
		prior, absent, err := txn.Snapshot(root, u.Spec)
		if err != nil {
			return fmt.Errorf("reading %s: %w", u.Spec, err)
		}
		switch {
		case u.Status == StatusNew && !absent:
			u.Status = StatusExists
			continue
		case absent:
			set.Create(u.Spec, u.yaml)
		default:
			set.Write(u.Spec, u.yaml, prior)
		}
		wrote = append(wrote, u)
	}
	if _, err := set.Commit(ctx, o); err != nil {
		return txn.Explain(err)
	}
	for _, u := range wrote {
		u.Status = StatusWritten
	}
	return nil
}

// SpecYAML is the spec Write writes for u.
func (u *Unit) SpecYAML() []byte { return u.yaml }
