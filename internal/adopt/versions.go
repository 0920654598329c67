package adopt

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/patchkit/patchkit/internal/buildfile"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/stamp/expr"
)

// VersionPlace is one more place init found that names the pinned version,
// written into the spec's upstream.versions.
type VersionPlace struct {
	// File is the file relative to the root.
	File string `json:"file"`
	// Kind is dockerfile-arg, makefile-var or key; Name is the ARG,
	// variable or yq path.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Spelling is pin, bare or v (spec.Version.Spelling).
	Spelling string `json:"spelling"`
	// Line is where the value is.
	Line int `json:"line"`
}

// spelling returns how value spells pin (pin, bare, v), or "".
func spelling(value, pin string) string {
	bare := strings.TrimPrefix(pin, "v")
	switch {
	case value == "" || pin == "":
		return ""
	case value == pin:
		return spec.SpellingPin
	case !versionRE.MatchString(bare) || strings.HasPrefix(bare, "v"):
		return "" // only a version has other spellings
	case value == bare:
		return spec.SpellingBare
	case value == "v"+bare:
		return spec.SpellingV
	}
	return ""
}

// findVersions finds every other place in the unit and its package (the
// directory of the Makefile that builds it) that names pin: the literal
// defaults of the unit's Dockerfile ARGs, literal Makefile variables of the
// package, and the scalars of its Chart.yaml and values*.yaml files (a
// vendored chart's version and appVersion). The pin's own source is left
// out, and so are the patch directory and the directories spec.SkipDirs
// names.
func (u *unitCtx) findVersions(pin value, patches string) []VersionPlace {
	var out []VersionPlace
	own := func(kind, file, name string) bool {
		src := pin.Source
		if src == nil {
			return false
		}
		switch kind {
		case "dockerfile-arg":
			df := u.dockerfile
			if src.Dockerfile != "" {
				df = path.Clean(path.Join(u.dir, src.Dockerfile))
			}
			return src.DockerfileArg == name && df == file
		case "makefile-var":
			return src.MakefileVar == name && path.Clean(path.Join(u.dir, src.Makefile)) == file
		}
		return false
	}
	seen := map[string]bool{}
	for _, a := range u.d.Args() {
		if !a.HasDefault || seen[a.Name] || len(buildfile.Refs(a.Default)) > 0 {
			continue
		}
		seen[a.Name] = true
		if sp := spelling(a.Default, pin.Value); sp != "" && !own("dockerfile-arg", u.dockerfile, a.Name) {
			out = append(out, VersionPlace{File: u.dockerfile, Kind: "dockerfile-arg", Name: a.Name, Spelling: sp, Line: a.Line})
		}
	}
	pkg := u.dir
	if u.makefile != nil && path.Dir(u.makefile.File) != "." {
		pkg = path.Dir(u.makefile.File)
	}
	var files []string
	filepath.WalkDir(filepath.Join(u.root, filepath.FromSlash(pkg)), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, rerr := filepath.Rel(u.root, p)
		if rerr != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == patches || (rel != pkg && slicesContains(spec.SkipDirs, d.Name())) || strings.HasPrefix(d.Name(), ".") && rel != pkg {
				return filepath.SkipDir
			}
			return nil
		}
		n := d.Name()
		if d.Type().IsRegular() && (n == "Makefile" || strings.HasSuffix(n, ".mk") || n == "Chart.yaml" ||
			strings.HasPrefix(n, "values") && (strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml"))) {
			files = append(files, rel)
		}
		return nil
	})
	sort.Strings(files)
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(u.root, filepath.FromSlash(f)))
		if err != nil || len(data) > 1<<20 {
			continue
		}
		if n := path.Base(f); n == "Makefile" || strings.HasSuffix(n, ".mk") {
			m := buildfile.ParseMakefile(data, f)
			names := make([]string, 0, len(m.Vars))
			for name := range m.Vars {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				v := m.Vars[name]
				if v.Op == "+=" || v.Op == "!=" || strings.ContainsAny(v.Value, "$`") {
					continue
				}
				if sp := spelling(strings.TrimSpace(v.Value), pin.Value); sp != "" && !own("makefile-var", f, name) {
					out = append(out, VersionPlace{File: f, Kind: "makefile-var", Name: name, Spelling: sp, Line: v.Line})
				}
			}
			continue
		}
		var doc yaml.Node
		if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
			continue
		}
		yamlScalars(doc.Content[0], nil, func(p expr.Path, n *yaml.Node) {
			if sp := spelling(n.Value, pin.Value); sp != "" {
				out = append(out, VersionPlace{File: f, Kind: "key", Name: p.String(), Spelling: sp, Line: n.Line})
			}
		})
	}
	return out
}

// yamlScalars calls fn for each scalar value of a mapping key under n, with
// its path (list items are left out: upgrade moves key: value lines).
func yamlScalars(n *yaml.Node, at expr.Path, fn func(expr.Path, *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := append(append(expr.Path{}, at...), expr.Step{Key: k.Value})
		switch v.Kind {
		case yaml.ScalarNode:
			if v.Line == k.Line {
				fn(p, v)
			}
		case yaml.MappingNode:
			yamlScalars(v, p, fn)
		}
	}
}
