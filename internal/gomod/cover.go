package gomod

import (
	"fmt"
	"go/version"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// validVersion reports whether v is a module version: a canonical semantic
// version, a pseudo-version or +incompatible included.
func validVersion(v string) bool { return semver.IsValid(v) }

// Compare orders two versions of w's kind: module versions in Go's module
// version order (semver: a prerelease and a pseudo-version sort before the
// release, +incompatible is build metadata), go and toolchain directives in
// Go's toolchain order (1.22rc1 < 1.22.0 < 1.22.1).
func Compare(kind, a, b string) int {
	switch kind {
	case DirectiveGo:
		return version.Compare("go"+a, "go"+b)
	case DirectiveToolchain:
		return version.Compare(toolchainVersion(a), toolchainVersion(b))
	}
	return semver.Compare(a, b)
}

// toolchainVersion keeps the go version of a toolchain name (go1.22.5,
// go1.22.5+auto, go1.22.5-custom).
func toolchainVersion(t string) string {
	if i := strings.IndexAny(t, "+-"); i > 0 {
		t = t[:i]
	}
	return t
}

// Coverage is what a go.mod says about one Want.
type Coverage struct {
	Want
	// Upstream is the version the go.mod requires (after its replace
	// directives), "" when it does not require the module.
	Upstream string `json:"upstream,omitempty"`
	// Covered says the go.mod requires the module at Version or higher (or
	// no longer requires a module the patch raised, see Note); for a hold,
	// at Version or lower (or no longer at all).
	Covered bool `json:"covered"`
	// Note says how, when it is not a plain comparison: "replaced by ...",
	// "moved to .../v3", "no longer required".
	Note string `json:"note,omitempty"`
}

// Mod is a parsed go.mod, or a missing one.
type Mod struct {
	File *modfile.File
	// Err says why the file could not be parsed (File is then nil).
	Err string
}

// Parse parses a go.mod's data; name names it in errors.
func Parse(name string, data []byte) (*Mod, error) {
	f, err := modfile.Parse(name, data, nil)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", name, err)
	}
	return &Mod{File: f}, nil
}

// Cover says whether m (nil: the file is missing) requires w at w.Version or
// higher; for a hold (w.Hold), at w.Version or lower. A hold is what a
// higher version upstream is kept from, so only upstream keeping the module
// at the held version or lower, or no longer requiring it, covers it;
// upstream moving to a higher major version, or replacing the module by
// another one or a directory, does not (the hold no longer says what is
// built: a person decides).
func (m *Mod) Cover(w Want) Coverage {
	c := Coverage{Want: w}
	switch {
	case m == nil:
		c.Note = w.File + " is missing"
		return c
	case m.File == nil:
		c.Note = w.File + " does not parse: " + m.Err
		return c
	}
	f := m.File
	switch w.Path {
	case DirectiveGo:
		if f.Go != nil {
			c.Upstream = f.Go.Version
			c.Covered = w.satisfied(DirectiveGo, c.Upstream)
		}
		return c
	case DirectiveToolchain:
		switch {
		case f.Toolchain != nil:
			c.Upstream = f.Toolchain.Name
		case f.Go != nil:
			// Without a toolchain line the go line is the minimum toolchain.
			c.Upstream, c.Note = "go"+f.Go.Version, "the go directive"
		}
		c.Covered = c.Upstream != "" && w.satisfied(DirectiveToolchain, c.Upstream)
		return c
	}
	req := ""
	for _, r := range f.Require {
		if r.Mod.Path == w.Path {
			req = r.Mod.Version
		}
	}
	// A replace of the module (of every version, or of the one required)
	// decides what is built.
	for _, r := range f.Replace {
		if r.Old.Path != w.Path || (r.Old.Version != "" && r.Old.Version != req && (w.Replace == "" || w.Hold)) {
			continue
		}
		if r.New.Version == "" {
			c.Note = "replaced by the directory " + r.New.Path
			return c
		}
		target := w.Replace
		if target == "" {
			target = w.Path
		}
		if r.New.Path != target {
			c.Upstream, c.Note = r.New.Version, "replaced by "+r.New.Path+" "+r.New.Version
			return c
		}
		c.Upstream = r.New.Version
		if r.New.Path != w.Path {
			c.Note = "replaced by " + r.New.Path
		}
		c.Covered = w.satisfied("", c.Upstream)
		return c
	}
	if w.Replace != "" && w.Replace != w.Path {
		// The patch replaces the module by another; upstream does not.
		c.Upstream = req
		c.Note = "upstream does not replace it by " + w.Replace
		return c
	}
	if req != "" {
		c.Upstream = req
		c.Covered = w.satisfied("", req)
		return c
	}
	// Not required: moved to a higher major version, or dropped.
	prefix, major, ok := module.SplitPathVersion(w.Path)
	if ok {
		for _, r := range f.Require {
			p2, m2, ok2 := module.SplitPathVersion(r.Mod.Path)
			if ok2 && p2 == prefix && majorOf(m2, r.Mod.Version) > majorOf(major, w.Version) {
				c.Upstream, c.Covered = r.Mod.Version, !w.Hold
				c.Note = "moved to " + r.Mod.Path
				if w.Hold {
					c.Note += ": the hold no longer says what is built"
				}
				return c
			}
		}
	}
	if w.From != "" || w.Hold {
		c.Covered, c.Note = true, "no longer required"
	}
	return c
}

// satisfied reports whether upstream's version up (of kind, see Compare)
// covers w: at w.Version or higher for a raise, at w.Version or lower for
// a hold.
func (w Want) satisfied(kind, up string) bool {
	if w.Hold {
		return Compare(kind, up, w.Version) <= 0
	}
	return Compare(kind, up, w.Version) >= 0
}

// majorOf is the major version of a module: from its path suffix (/v3,
// .v3), else from its version (v0, v1, or vN+incompatible).
func majorOf(suffix, v string) int {
	s := strings.TrimLeft(suffix, "/.")
	if s == "" {
		s = semver.Major(v)
	}
	n := 0
	fmt.Sscanf(strings.TrimPrefix(s, "v"), "%d", &n)
	return n
}

// Lowered lists the requirements (and the go directive) of the go.mod before
// that after requires at a lower version, or no longer requires:
// "path v1.2.0 -> v1.1.0", leaving out the modules that holds hold down on
// purpose. name names the file in errors.
func Lowered(name string, before, after []byte, holds ...Want) ([]string, error) {
	b, err := Parse(name, before)
	if err != nil {
		return nil, err
	}
	a, err := Parse(name, after)
	if err != nil {
		return nil, err
	}
	held := map[string]bool{}
	for _, h := range holds {
		if h.Hold {
			held[h.Path] = true
		}
	}
	var out []string
	for _, r := range b.File.Require {
		if held[r.Mod.Path] {
			continue
		}
		c := a.Cover(Want{File: name, Path: r.Mod.Path, Version: r.Mod.Version})
		if !c.Covered && c.Upstream != "" && c.Note == "" {
			out = append(out, fmt.Sprintf("%s %s -> %s", r.Mod.Path, r.Mod.Version, orNone(c.Upstream)))
		}
	}
	if b.File.Go != nil && !held[DirectiveGo] {
		if c := a.Cover(Want{File: name, Path: DirectiveGo, Version: b.File.Go.Version}); !c.Covered {
			out = append(out, fmt.Sprintf("go %s -> %s", b.File.Go.Version, orNone(c.Upstream)))
		}
	}
	return out, nil
}

func orNone(v string) string {
	if v == "" {
		return "none"
	}
	return v
}
