// Package matrix turns a list of changed files into the image units CI must
// build. A unit's inputs come from the unit itself (its directory, series,
// injected tests, Dockerfile, pin sources, stamp targets, declared inputs and
// the Makefile that builds it); the repository config (.patchkit.yaml) adds
// the shared inputs and names the build entry, whose lines decide which
// units CI builds at all.
package matrix

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/stamp"
)

// Full is the argument that selects every unit.
const Full = "FULL"

// How the matrix names what it selects.
const (
	// ByUnit prints unit directories (the default).
	ByUnit = "unit"
	// ByBuildDir prints the directory each build line names (`make -C
	// DIR image`), so the matrix replaces a script that emits those.
	ByBuildDir = "build-dir"
)

// Plan is what the matrix decides from: the build entry and every unit
// with its inputs.
type Plan struct {
	Repo  *spec.Repo
	Entry *Entry
	Units []Unit
}

// Unit is an image unit, what builds it and what it is built from.
type Unit struct {
	spec.Unit
	// Line builds it; Built is false when no line of the entry does.
	Line  Line
	Built bool
	// Inputs are the paths and globs whose change rebuilds it (see Match).
	Inputs []string
	// Chart marks a chart unit (internal/chart): it is named by the
	// directory of the package line that builds it.
	Chart bool
}

// Load reads the build entry and every unit's spec under root. A spec that
// does not load is bad input.
func Load(root string, repo *spec.Repo) (*Plan, error) {
	entry, err := ReadEntry(root, repo)
	if err != nil {
		return nil, err
	}
	found, err := spec.Discover(root)
	if err != nil {
		return nil, err
	}
	p := &Plan{Repo: repo, Entry: entry}
	for _, su := range found {
		u := Unit{Unit: su}
		u.Line, u.Built = entry.BuiltBy(su)
		s, err := spec.LoadUnit(root, su)
		if err != nil {
			return nil, err
		}
		u.Inputs = inputsOf(root, s, u)
		p.Units = append(p.Units, u)
	}
	charts, err := chartUnits(root, entry)
	if err != nil {
		return nil, err
	}
	p.Units = append(p.Units, charts...)
	return p, nil
}

// inputsOf lists what unit u is built from: its directory, patch
// directory (and series file), injected tests, Dockerfile, OCI base, the files its pin is
// read from, its stamp targets, its declared inputs, and the Makefile of
// the directory its build line names.
func inputsOf(root string, s *spec.Spec, u Unit) []string {
	in := []string{s.Dir, s.Patches}
	if f := s.SeriesFile(); f != "" {
		in = append(in, f) // the quilt series file of order: series
	}
	if s.Test != nil {
		for _, i := range s.Test.Inject {
			in = append(in, i.From)
		}
	}
	if s.Build.Dockerfile != "" {
		in = append(in, s.Build.Dockerfile)
	}
	if dir, ok := strings.CutPrefix(s.Build.Base, "oci:"); ok {
		in = append(in, dir)
	}
	for _, src := range []*spec.Source{s.Upstream.URLFrom, s.Upstream.RefFrom} {
		if src != nil && src.File != "" {
			in = append(in, src.File)
		}
	}
	for _, st := range s.Stamp {
		in = append(in, st.File)
	}
	in = append(in, s.Inputs...)
	if u.Built && u.Line.Dir != "" {
		in = append(in, makefileOf(root, u.Line.Dir))
	}
	for i := range in {
		in[i] = path.Clean(in[i])
	}
	return in
}

// makefileOf is the Makefile make -C dir reads: GNUmakefile, makefile or
// Makefile, the first that exists.
func makefileOf(root, dir string) string {
	for _, name := range []string{"GNUmakefile", "makefile", "Makefile"} {
		p := path.Join(dir, name)
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err == nil {
			return p
		}
	}
	return path.Join(dir, "Makefile")
}

// Selection is what a change selects.
type Selection struct {
	// Paths are the unit directories, or build directories with
	// ByBuildDir, sorted; never nil.
	Paths []string
	// Unbuilt are selected units that no build line builds.
	Unbuilt []Unbuilt
	// Acknowledged are selected units that no build line builds, which
	// .patchkit.yaml's unbuilt: names with a reason (Unbuilt.Reason).
	Acknowledged []Unbuilt
}

// Unbuilt is a unit a change selected that the build entry never builds.
type Unbuilt struct {
	Unit spec.Unit
	// Because is the changed file that selected it, or FULL.
	Because string
	// Want is the line that would build it.
	Want string
	// Reason is why the repository leaves it unbuilt (.patchkit.yaml's
	// unbuilt[].reason), "" when it does not say.
	Reason string
	// Where is the .patchkit.yaml line of that reason.
	Where string
}

// UnbuiltError is a change to a unit that nothing builds: a finding (exit
// 1), never a silent [].
type UnbuiltError struct {
	Entry   *Entry
	Unbuilt []Unbuilt
}

func (e *UnbuiltError) Error() string {
	var b strings.Builder
	for i, u := range e.Unbuilt {
		if i > 0 {
			b.WriteByte('\n')
		}
		where := fmt.Sprintf("%s's %s: target", e.Entry.Makefile, e.Entry.Target)
		if !e.Entry.Exists {
			where = fmt.Sprintf("%s (there is none)", e.Entry.Makefile)
		}
		fmt.Fprintf(&b, "%s: selected by %s, but no line of %s builds it, so CI would never build it: add `%s`", u.Unit.Dir, u.Because, where, u.Want)
	}
	return b.String()
}

// Select returns what changed selects, named as by says. full selects
// every unit. A selected unit that no build line builds is returned in
// Unbuilt (see UnbuiltError).
func (p *Plan) Select(root string, changed []string, full bool, by string) Selection {
	why := map[string]string{} // unit dir -> the change that selected it
	switch {
	case full:
		for _, u := range p.Units {
			why[u.Dir] = Full
		}
	default:
		p.selectChanged(changed, why)
	}
	sel := Selection{Paths: []string{}}
	set := map[string]bool{}
	for _, u := range p.Units {
		because, ok := why[u.Dir]
		if !ok {
			continue
		}
		if !u.Built {
			ub := Unbuilt{Unit: u.Unit, Because: because, Want: p.Entry.Want(root, u.Unit)}
			if ack, key, ok := p.Repo.Acknowledged(u.Dir); ok {
				ub.Reason, ub.Where = ack.Reason, fmt.Sprintf("%s:%d", spec.RepoFileName, p.Repo.Line(key))
				sel.Acknowledged = append(sel.Acknowledged, ub)
				continue
			}
			sel.Unbuilt = append(sel.Unbuilt, ub)
			continue
		}
		set[p.name(u, by)] = true
	}
	if by == ByBuildDir {
		p.selectBuildDirs(changed, full, set)
	}
	for name := range set {
		if _, excluded := matchAny(p.Repo.Exclude, name); !excluded {
			sel.Paths = append(sel.Paths, name)
		}
	}
	sort.Strings(sel.Paths)
	return sel
}

// selectChanged records in why each unit a changed file selects: every
// unit for a shared input, else the units whose inputs it matches.
func (p *Plan) selectChanged(changed []string, why map[string]string) {
	shared := p.Repo.SharedInputs()
	for _, c := range changed {
		if isStampRecord(c) {
			continue
		}
		for _, u := range p.Units {
			if _, done := why[u.Dir]; done {
				continue
			}
			if _, ok := matchAny(shared, c); ok {
				why[u.Dir] = c
			} else if _, ok := matchAny(u.Inputs, c); ok {
				why[u.Dir] = c
			}
		}
	}
}

// selectBuildDirs adds to set the directories of the build lines a change
// selects by itself: a changed file under a line's directory (any image
// the line builds, patchkit unit or not), or every line for FULL and for a
// shared input.
func (p *Plan) selectBuildDirs(changed []string, full bool, set map[string]bool) {
	shared := p.Repo.SharedInputs()
	for _, l := range p.Entry.Lines {
		if l.Dir == "" {
			continue
		}
		if full {
			set[l.Dir] = true
			continue
		}
		for _, c := range changed {
			_, sh := matchAny(shared, c)
			if !isStampRecord(c) && (sh || Match(l.Dir, c)) {
				set[l.Dir] = true
				break
			}
		}
	}
}

// name is how unit u is printed: its directory, or with ByBuildDir the
// directory of its build line (its own directory for an IMAGE= line).
func (p *Plan) name(u Unit, by string) string {
	if (by == ByBuildDir || u.Chart) && u.Line.Dir != "" {
		return u.Line.Dir
	}
	return u.Dir
}

// Want is the build line that would build u: `make -C DIR image` for the
// nearest directory between u and the root with a Makefile, when the entry
// builds with -C lines or has none; else `$(MAKE) image IMAGE=<name>`.
func (e *Entry) Want(root string, u spec.Unit) string {
	dashC := len(e.Lines) == 0
	for _, l := range e.Lines {
		if l.Dir != "" {
			dashC = true
		}
	}
	if dashC {
		for d := u.Dir; d != "." && d != ""; d = path.Dir(d) {
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(makefileOf(root, d)))); err == nil {
				return fmt.Sprintf("make -C %s image", d)
			}
		}
	}
	return fmt.Sprintf("$(MAKE) image IMAGE=%s", u.Name)
}

// isStampRecord reports whether p is a stamp record (stamp.RecordName).
// The matrix never selects on it: it is an output of a build.
func isStampRecord(p string) bool { return path.Base(p) == stamp.RecordName }

// Err returns the UnbuiltError of sel, or nil.
func (sel Selection) Err(e *Entry) error {
	if len(sel.Unbuilt) == 0 {
		return nil
	}
	return &UnbuiltError{Entry: e, Unbuilt: sel.Unbuilt}
}

// IsUnbuilt reports whether err is an UnbuiltError.
func IsUnbuilt(err error) bool {
	var ue *UnbuiltError
	return errors.As(err, &ue)
}

// ParseChanged reads a changed-files list: one path per line, blank lines
// and "#" comments skipped, "./" prefixes dropped.
func ParseChanged(data []byte) []string {
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, path.Clean(strings.TrimPrefix(l, "./")))
	}
	return out
}
