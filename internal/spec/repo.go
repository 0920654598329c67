package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/patchkit/patchkit/internal/diag"
)

// RepoFileName is the repository-level config at the root. It is not named
// patchkit.yaml: every patchkit.yaml is an image unit.
const RepoFileName = ".patchkit.yaml"

// Repository config defaults, kept in one place.
const (
	// DefaultBuildMakefile holds the build entry.
	DefaultBuildMakefile = "Makefile"
	// DefaultBuildTarget is the build entry's target.
	DefaultBuildTarget = "build"
)

// Repo is the repository-level config (.patchkit.yaml at the root). A
// repository without one gets the defaults.
type Repo struct {
	// File is RepoFileName when the file exists, else "".
	File string `yaml:"-"`
	// Build is the build entry: the Makefile target whose recipe lines
	// build the image units (`make -C DIR image`, `make image IMAGE=x`).
	Build BuildEntry `yaml:"build"`
	// Shared are paths or globs whose change rebuilds every unit (a
	// library chart, build macros, go.mod). The build entry's Makefile and
	// this file are always shared.
	Shared []string `yaml:"shared"`
	// Exclude are unit or build directories (paths or globs) that the
	// matrix never prints: units a dedicated CI job builds.
	Exclude []string `yaml:"exclude"`
	// Unbuilt acknowledges units that the build entry does not build, each
	// with why: the matrix and verify's unit check report them instead of
	// failing.
	Unbuilt []Unbuilt `yaml:"unbuilt"`
	// Headers is the policy of verify's header check.
	Headers Headers `yaml:"headers"`

	lines map[string]int
}

// Header policies (headers.policy, headers.units[].policy).
const (
	// HeadersRequired: every finding of the header check counts as it
	// is (a missing Origin warns, an advisory a bump mentions but no field
	// names fails). The default.
	HeadersRequired = "required"
	// HeadersWarn: no header finding fails; an advisory id the subject or
	// description gives is read from there.
	HeadersWarn = "warn"
	// HeadersOff: the header check is skipped.
	HeadersOff = "off"
)

// Headers is the header policy: one for every unit, and others for some.
type Headers struct {
	// Policy is required, warn or off.
	Policy string `yaml:"policy"`
	// Units override Policy for the units they name.
	Units []HeaderUnit `yaml:"units"`
}

// HeaderUnit is the header policy of the units whose directory matches
// Unit (a path or a glob).
type HeaderUnit struct {
	Unit   string `yaml:"unit"`
	Policy string `yaml:"policy"`
}

// HeaderPolicy returns the header policy of the unit at dir and the key
// that sets it ("" for the default).
func (r *Repo) HeaderPolicy(dir string) (policy, key string) {
	for i, u := range r.Headers.Units {
		if m, _ := path.Match(u.Unit, dir); m || u.Unit == dir {
			return u.Policy, fmt.Sprintf("headers.units[%d].policy", i)
		}
	}
	if r.lines["headers.policy"] > 0 {
		return r.Headers.Policy, "headers.policy"
	}
	return r.Headers.Policy, ""
}

// Unbuilt is a unit the repository knows is not built (unbuilt[]).
type Unbuilt struct {
	// Unit is the unit's directory (or a glob of directories).
	Unit string `yaml:"unit"`
	// Reason says why nothing builds it; required.
	Reason string `yaml:"reason"`
}

// Acknowledged returns the unbuilt[] entry that names the unit directory
// dir, and its key (unbuilt[i]), or ok false.
func (r *Repo) Acknowledged(dir string) (u Unbuilt, key string, ok bool) {
	for i, e := range r.Unbuilt {
		if m, _ := path.Match(e.Unit, dir); m || e.Unit == dir {
			return e, fmt.Sprintf("unbuilt[%d]", i), true
		}
	}
	return Unbuilt{}, "", false
}

// BuildEntry is where the units are built from.
type BuildEntry struct {
	Makefile string `yaml:"makefile"`
	Target   string `yaml:"target"`
}

// repoSchema prefixes the repository config's keys in allowed.
const repoSchema = "#repo"

// Line returns the line of key (e.g. "build.target") in the file, or 0.
func (r *Repo) Line(key string) int { return r.lines[key] }

// LoadRepo reads root's .patchkit.yaml, or returns the defaults when there
// is none.
func LoadRepo(root string) (*Repo, error) {
	f, err := os.Open(filepath.Join(root, RepoFileName))
	if errors.Is(err, os.ErrNotExist) {
		r := &Repo{lines: map[string]int{}}
		return r, r.validate(root)
	}
	if err != nil {
		return nil, &diag.InputError{File: RepoFileName, Msg: "reading the repository config", Err: err}
	}
	defer f.Close()
	return LoadRepoReader(f, root)
}

// LoadRepoReader decodes the repository config strictly from r and
// validates it against root.
func LoadRepoReader(r io.Reader, root string) (*Repo, error) {
	data, err := io.ReadAll(io.LimitReader(r, 1<<20+1))
	if err != nil {
		return nil, &diag.InputError{File: RepoFileName, Msg: "reading the repository config", Err: err}
	}
	if len(data) > 1<<20 {
		return nil, &diag.InputError{File: RepoFileName, Msg: "larger than 1 MiB"}
	}
	repo := &Repo{File: RepoFileName, lines: map[string]int{}}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return repo, repo.validate(root) // an empty file: the defaults
		}
		return nil, yamlError(RepoFileName, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, &diag.InputError{File: RepoFileName, Line: doc.Line, Msg: "must be a mapping"}
	}
	if err := checkKeys(RepoFileName, doc.Content[0], repoSchema, "", repo.lines); err != nil {
		return nil, err
	}
	if err := doc.Content[0].Decode(repo); err != nil {
		return nil, yamlError(RepoFileName, err)
	}
	return repo, repo.validate(root)
}

func (r *Repo) errf(key, format string, args ...any) error {
	line := r.lines[key]
	if line == 0 {
		if i := strings.LastIndex(key, "."); i > 0 {
			line = r.lines[key[:i]]
		}
	}
	return &diag.InputError{File: RepoFileName, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// validate fills in the defaults and checks every key.
func (r *Repo) validate(root string) error {
	if r.Build.Makefile == "" {
		r.Build.Makefile = DefaultBuildMakefile
	}
	r.Build.Makefile = path.Clean(strings.TrimPrefix(r.Build.Makefile, "./"))
	if err := inRepo(root, r.Build.Makefile); err != nil || IsGlob(r.Build.Makefile) {
		if err == nil {
			err = fmt.Errorf("%q is a glob: name one Makefile", r.Build.Makefile)
		}
		return r.errf("build.makefile", "%v", err)
	}
	if r.Build.Target == "" {
		r.Build.Target = DefaultBuildTarget
	}
	if strings.ContainsAny(r.Build.Target, " \t:=#%$") {
		return r.errf("build.target", "%q is not a Makefile target name", r.Build.Target)
	}
	for _, l := range []struct {
		key  string
		list []string
	}{{"shared", r.Shared}, {"exclude", r.Exclude}} {
		key, list := l.key, l.list
		for i, p := range list {
			list[i] = strings.TrimPrefix(p, "./")
			if err := checkPattern(root, list[i]); err != nil {
				return r.errf(fmt.Sprintf("%s[%d]", key, i), "%v", err)
			}
		}
	}
	if r.Headers.Policy == "" {
		r.Headers.Policy = HeadersRequired
	}
	if err := checkHeaderPolicy(r.Headers.Policy); err != nil {
		return r.errf("headers.policy", "%v", err)
	}
	for i := range r.Headers.Units {
		key := fmt.Sprintf("headers.units[%d]", i)
		u := &r.Headers.Units[i]
		u.Unit = path.Clean(strings.TrimPrefix(u.Unit, "./"))
		if u.Unit == "." {
			return r.errf(key+".unit", "required: the unit's directory (or a glob)")
		}
		if err := checkPattern(root, u.Unit); err != nil {
			return r.errf(key+".unit", "%v", err)
		}
		if err := checkHeaderPolicy(u.Policy); err != nil {
			return r.errf(key+".policy", "%v", err)
		}
	}
	for i := range r.Unbuilt {
		key := fmt.Sprintf("unbuilt[%d]", i)
		r.Unbuilt[i].Unit = path.Clean(strings.TrimPrefix(r.Unbuilt[i].Unit, "./"))
		if r.Unbuilt[i].Unit == "." {
			return r.errf(key+".unit", "required: the unit's directory")
		}
		if err := checkPattern(root, r.Unbuilt[i].Unit); err != nil {
			return r.errf(key+".unit", "%v", err)
		}
		if strings.TrimSpace(r.Unbuilt[i].Reason) == "" {
			return r.errf(key+".reason", "required: say why nothing builds %s", r.Unbuilt[i].Unit)
		}
	}
	return nil
}

func checkHeaderPolicy(p string) error {
	switch p {
	case HeadersRequired, HeadersWarn, HeadersOff:
		return nil
	}
	return fmt.Errorf("%q is not required, warn or off", p)
}

// SharedInputs are the patterns whose change rebuilds every unit: Shared,
// the build entry's Makefile, and this file.
func (r *Repo) SharedInputs() []string {
	out := append([]string{r.Build.Makefile, RepoFileName}, r.Shared...)
	return out
}
