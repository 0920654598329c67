package adopt

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/patchkit/patchkit/internal/buildfile"
	"github.com/patchkit/patchkit/internal/lazyre"
	"github.com/patchkit/patchkit/internal/spec"
)

// value is a resolved url or pin: the value, and the source the spec
// should point at (nil when the value is written literally and can only be
// copied), and where it was read.
type value struct {
	Value  string
	Source *spec.Source
	Where  string
}

// unitCtx is what resolving one unit's pin needs.
type unitCtx struct {
	root       string
	dir        string // unit dir, relative to root
	dockerfile string // relative to root
	d          *buildfile.Dockerfile
	// the Makefile whose recipe builds dir, if any
	makefile  *buildfile.Makefile
	buildArgs map[string]buildfile.BuildArg
	buildLine int // the makefile's line that builds dir
}

// findBuilder finds the Makefile, in the unit's directory or above it up to
// the root, whose recipe runs a container build of the unit's directory.
func (u *unitCtx) findBuilder() {
	dir := u.dir
	for {
		file := path.Join(dir, "Makefile")
		if m, err := buildfile.ReadMakefile(filepath.Join(u.root, filepath.FromSlash(file)), file); err == nil {
			rel := relPath(dir, u.dir)
			if rel == "." {
				rel = "."
			}
			if args, line := m.BuildArgs(rel); line > 0 {
				u.makefile, u.buildArgs, u.buildLine = m, args, line
				return
			}
		}
		if dir == "." || dir == "" {
			return
		}
		dir = path.Dir(dir)
	}
}

// resolve reads expr (v${VERSION}, ${TAG}, a literal) written at line.
func (u *unitCtx) resolve(expr string, line int) (value, error) {
	refs := buildfile.Refs(expr)
	switch len(refs) {
	case 0:
		return value{Value: expr, Where: fmt.Sprintf("%s:%d", u.dockerfile, line)}, nil
	case 1:
	default:
		return value{}, fmt.Errorf("%s:%d: %q is built from several variables (%s)", u.dockerfile, line, expr, strings.Join(refs, ", "))
	}
	return u.resolveWrapped(expr, refs[0], line, map[string]bool{})
}

// resolveWrapped resolves variable name, the one expr refers to (on line),
// and puts the text around the reference before and after its value.
func (u *unitCtx) resolveWrapped(expr, name string, line int, seen map[string]bool) (value, error) {
	marked, _ := buildfile.Expand(expr, func(string) (string, bool) { return "\x00", true })
	prefix, suffix, _ := strings.Cut(marked, "\x00")
	v, err := u.resolveVar(name, line, seen)
	if err != nil {
		return value{}, err
	}
	v.Value = prefix + v.Value + suffix
	if v.Source != nil {
		v.Source.Prefix = prefix + v.Source.Prefix
		v.Source.Suffix = v.Source.Suffix + suffix
	}
	return v, nil
}

var makeVarRE = lazyre.New(`^\$[({]([A-Za-z_][A-Za-z0-9_.-]*)[)}]$`)

// resolveVar reads the value of Dockerfile variable name: a --build-arg of
// the Makefile that builds the unit wins over the ARG's default, as in the
// build.
func (u *unitCtx) resolveVar(name string, line int, seen map[string]bool) (value, error) {
	if seen[name] {
		return value{}, fmt.Errorf("%s:%d: ARG %s refers to itself", u.dockerfile, line, name)
	}
	seen[name] = true
	defer delete(seen, name) // ${V}-${V} refers to V twice, not to itself
	if ba, ok := u.buildArgs[name]; ok {
		return u.fromBuildArg(ba)
	}
	var decl *buildfile.Arg
	for _, a := range u.d.Args() {
		if a.Name != name {
			continue
		}
		if decl == nil || !decl.HasDefault && a.HasDefault {
			a := a
			decl = &a
		}
	}
	switch {
	case decl == nil:
		return value{}, fmt.Errorf("%s:%d: $%s is not an ARG of the Dockerfile", u.dockerfile, line, name)
	case !decl.HasDefault:
		why := "no Makefile that builds it was found"
		if u.makefile != nil {
			why = fmt.Sprintf("%s builds it without --build-arg %s", u.makefile.File, name)
		}
		return value{}, fmt.Errorf("%s:%d: ARG %s has no default and %s", u.dockerfile, decl.Line, name, why)
	}
	if len(buildfile.Refs(decl.Default)) == 0 {
		src := &spec.Source{DockerfileArg: name}
		if path.Base(u.dockerfile) != "Dockerfile" || path.Dir(u.dockerfile) != u.dir {
			src.Dockerfile = relPath(u.dir, u.dockerfile)
		}
		return value{Value: decl.Default, Source: src, Where: fmt.Sprintf("%s:%d", u.dockerfile, decl.Line)}, nil
	}
	refs := buildfile.Refs(decl.Default)
	if len(refs) > 1 {
		return value{}, fmt.Errorf("%s:%d: ARG %s=%s is built from several variables", u.dockerfile, decl.Line, name, decl.Default)
	}
	return u.resolveWrapped(decl.Default, refs[0], decl.Line, seen)
}

// fromBuildArg reads a --build-arg NAME=$(VAR) of the Makefile: the spec
// points at VAR in the Makefile (or the included file) that sets it.
func (u *unitCtx) fromBuildArg(ba buildfile.BuildArg) (value, error) {
	m := u.makefile
	where := fmt.Sprintf("%s:%d", m.File, ba.Line)
	if !strings.Contains(ba.Value, "$") {
		return value{Value: ba.Value, Where: where}, nil
	}
	sm := makeVarRE.FindStringSubmatch(ba.Value)
	if sm == nil {
		return value{}, fmt.Errorf("%s: pin comes from --build-arg %s=%s, which make computes", where, ba.Name, ba.Value)
	}
	defining, err := u.definingMakefile(m, sm[1])
	if err != nil {
		return value{}, fmt.Errorf("%s: pin comes from --build-arg %s=%s: %v", where, ba.Name, ba.Value, err)
	}
	v, line, err := defining.Value(sm[1])
	if err != nil {
		var be *buildfile.Error
		if errors.As(err, &be) {
			return value{}, fmt.Errorf("%s: pin comes from a build-arg (--build-arg %s=%s at %s) whose Makefile variable %s", (&buildfile.Error{File: be.File, Line: be.Line}).Where(), ba.Name, ba.Value, where, be.Msg)
		}
		return value{}, fmt.Errorf("%s: pin comes from --build-arg %s=%s: %v", where, ba.Name, ba.Value, err)
	}
	src := &spec.Source{MakefileVar: sm[1], Makefile: relPath(u.dir, defining.File)}
	return value{Value: v, Source: src, Where: fmt.Sprintf("%s:%d", defining.File, line)}, nil
}

// definingMakefile returns m, or the file m includes, that assigns name.
func (u *unitCtx) definingMakefile(m *buildfile.Makefile, name string) (*buildfile.Makefile, error) {
	if _, ok := m.Vars[name]; ok {
		return m, nil
	}
	for _, inc := range m.Includes {
		file := path.Clean(path.Join(path.Dir(m.File), inc))
		if file == ".." || strings.HasPrefix(file, "../") {
			continue
		}
		im, err := buildfile.ReadMakefile(filepath.Join(u.root, filepath.FromSlash(file)), file)
		if err != nil {
			continue
		}
		if _, ok := im.Vars[name]; ok {
			return im, nil
		}
	}
	if _, ok := os.LookupEnv(name); ok {
		return nil, fmt.Errorf("%s is not set in %s or the files it includes (only in the environment)", name, m.File)
	}
	return nil, fmt.Errorf("%s is not set in %s or the files it includes", name, m.File)
}

// relPath is target relative to dir, written as the spec writes a path
// relative to its directory: ./x or ../x.
func relPath(dir, target string) string {
	rel, err := filepath.Rel(filepath.FromSlash(dir), filepath.FromSlash(target))
	if err != nil {
		return target
	}
	rel = filepath.ToSlash(rel)
	if rel == "." || strings.HasPrefix(rel, "../") {
		return rel
	}
	return "./" + rel
}
