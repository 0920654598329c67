package spec

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/patchkit/patchkit/internal/buildfile"
	"github.com/patchkit/patchkit/internal/diag"
)

// Source says where a value of upstream (url or ref) is read from, instead
// of being copied into the spec: one source of truth. Exactly one of
// DockerfileArg, MakefileVar and TextFile is set.
type Source struct {
	// DockerfileArg is an ARG of Dockerfile whose default is the value.
	DockerfileArg string `yaml:"dockerfile-arg"`
	// Dockerfile is the Dockerfile holding the ARG; default ./Dockerfile,
	// beside the spec.
	Dockerfile string `yaml:"dockerfile"`
	// MakefileVar is a variable set by a simple assignment in Makefile.
	MakefileVar string `yaml:"makefile-var"`
	// Makefile holds the variable; required with MakefileVar.
	Makefile string `yaml:"makefile"`
	// TextFile is a file whose whole content is the value (upstream.ref.file,
	// eks-distro's GIT_TAG): one line, white space around it dropped. Only
	// upstream.ref takes it.
	TextFile string `yaml:"file"`
	// Prefix and Suffix surround the value read (prefix: v for a Dockerfile
	// that checks out v${VERSION}).
	Prefix string `yaml:"prefix"`
	Suffix string `yaml:"suffix"`

	// File and Line locate the value read, relative to the root; set by Load.
	File string `yaml:"-"`
	Line int    `yaml:"-"`
}

// Where is file:line of the value read.
func (src *Source) Where() string {
	if src.Line > 0 {
		return fmt.Sprintf("%s:%d", src.File, src.Line)
	}
	return src.File
}

// String describes the source as the spec writes it.
func (src *Source) String() string {
	if src.TextFile != "" {
		return "file " + src.File
	}
	if src.MakefileVar != "" {
		return fmt.Sprintf("makefile-var %s of %s", src.MakefileVar, src.Makefile)
	}
	return fmt.Sprintf("dockerfile-arg %s of %s", src.DockerfileArg, src.Dockerfile)
}

var sourceKeys = []string{"dockerfile-arg", "dockerfile", "makefile-var", "makefile", "prefix", "suffix"}

// refSourceKeys are the keys of upstream.ref as a source: a pin may also be
// a whole file.
var refSourceKeys = []string{"file", "dockerfile-arg", "dockerfile", "makefile-var", "makefile", "prefix", "suffix"}

// takeSources decodes upstream.url and upstream.ref when they are mappings
// (sources) and replaces them by empty strings, so the rest decodes as
// plain strings; resolveSources fills them in.
func (s *Spec) takeSources(top *yaml.Node) error {
	up := mapValue(top, "upstream")
	if up == nil || up.Kind != yaml.MappingNode {
		return nil
	}
	for _, key := range []string{"url", "ref"} {
		n := mapValue(up, key)
		if n == nil || n.Kind != yaml.MappingNode {
			continue
		}
		src := &Source{}
		if err := n.Decode(src); err != nil {
			return yamlError(s.File, err)
		}
		*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "", Line: n.Line, Column: n.Column}
		if key == "url" {
			s.Upstream.URLFrom = src
		} else {
			s.Upstream.RefFrom = src
		}
	}
	return nil
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// resolveSources reads upstream.url and upstream.ref from their sources.
func (s *Spec) resolveSources(root string) error {
	if src := s.Upstream.URLFrom; src != nil {
		v, err := s.readSource(root, "upstream.url", src)
		if err != nil {
			return err
		}
		s.Upstream.URL = v
	}
	if src := s.Upstream.RefFrom; src != nil {
		v, err := s.readSource(root, "upstream.ref", src)
		if err != nil {
			return err
		}
		s.Upstream.Ref = v
	}
	return nil
}

func (s *Spec) readSource(root, key string, src *Source) (string, error) {
	switch {
	case src.TextFile != "" && src.DockerfileArg != "":
		return "", s.errf(key+".file", "give file or dockerfile-arg, not both")
	case src.TextFile != "" && src.MakefileVar != "":
		return "", s.errf(key+".file", "give file or makefile-var, not both")
	case src.TextFile != "":
		return s.readTextFile(root, key, src)
	case src.DockerfileArg != "" && src.MakefileVar != "":
		return "", s.errf(key, "give dockerfile-arg or makefile-var, not both")
	case src.DockerfileArg != "":
		if src.Makefile != "" {
			return "", s.errf(key+".makefile", "goes with makefile-var")
		}
		if src.Dockerfile == "" {
			src.Dockerfile = "./Dockerfile"
		}
		file, err := s.sourcePath(root, key+".dockerfile", src.Dockerfile)
		if err != nil {
			return "", err
		}
		d, err := buildfile.ReadDockerfile(filepath.Join(root, filepath.FromSlash(file)), file)
		if err != nil {
			return "", s.sourceError(key, err)
		}
		v, line, err := d.ArgValue(src.DockerfileArg)
		if err != nil {
			return "", s.sourceError(key, err)
		}
		src.File, src.Line = file, line
		return s.sourceValue(key, src, v)
	case src.MakefileVar != "":
		if src.Makefile == "" {
			return "", s.errf(key+".makefile", "required with makefile-var: the Makefile that sets %s", src.MakefileVar)
		}
		if src.Dockerfile != "" {
			return "", s.errf(key+".dockerfile", "goes with dockerfile-arg")
		}
		file, err := s.sourcePath(root, key+".makefile", src.Makefile)
		if err != nil {
			return "", err
		}
		m, err := buildfile.ReadMakefile(filepath.Join(root, filepath.FromSlash(file)), file)
		if err != nil {
			return "", s.sourceError(key, err)
		}
		v, line, err := m.Value(src.MakefileVar)
		if err != nil {
			return "", s.sourceError(key, err)
		}
		src.File, src.Line = file, line
		return s.sourceValue(key, src, v)
	}
	if key == "upstream.ref" {
		return "", s.errf(key, "a source needs file, dockerfile-arg or makefile-var (known keys: %s)", strings.Join(refSourceKeys, ", "))
	}
	return "", s.errf(key, "a source needs dockerfile-arg or makefile-var (known keys: %s)", strings.Join(sourceKeys, ", "))
}

// readTextFile reads a pin that is a whole file (upstream.ref: {file: PATH}):
// see ReadTextValue.
func (s *Spec) readTextFile(root, key string, src *Source) (string, error) {
	for _, k := range []string{"dockerfile", "makefile"} {
		if s.lines[key+"."+k] > 0 {
			return "", s.errf(key+"."+k, "goes with %s-%s, not with file", k, map[string]string{"dockerfile": "arg", "makefile": "var"}[k])
		}
	}
	file, err := s.sourcePath(root, key+".file", src.TextFile)
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", s.errf(key+".file", "%s does not exist: the file that holds the pin", file)
		}
		return "", s.errf(key+".file", "reading %s: %v", file, errors.Unwrap(err))
	}
	v, line, err := ReadTextValue(data, file)
	if err != nil {
		return "", s.sourceError(key, err)
	}
	src.File, src.Line = file, line
	if strings.HasPrefix(v, "-") || strings.ContainsAny(v, ":^~?*[\\") {
		return "", &diag.InputError{File: file, Line: line, Key: key, Msg: fmt.Sprintf("%q is not a tag or a commit id (read for %s)", v, s.File)}
	}
	return s.sourceValue(key, src, v)
}

// ReadTextValue reads a value that is a whole file (a GIT_TAG, a
// GOLANG_VERSION): its one non-empty line, white space around it and the
// line ending dropped, and that line's number. An empty file, a second
// non-empty line, and a value with white space or a control character
// inside are errors (a *buildfile.Error naming file and the line).
func ReadTextValue(data []byte, file string) (string, int, error) {
	value, line := "", 0
	for i, l := range strings.SplitAfter(string(data), "\n") {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if line > 0 {
			return "", 0, &buildfile.Error{File: file, Line: i + 1, Msg: fmt.Sprintf("a second line (%q after %q on line %d): the file must hold one value alone", t, value, line)}
		}
		value, line = t, i+1
	}
	if line == 0 {
		return "", 0, &buildfile.Error{File: file, Line: 1, Msg: "is empty: want the value on one line"}
	}
	for _, r := range value {
		if unicode.IsSpace(r) || unicode.IsControl(r) || unicode.In(r, unicode.Cf) || r == utf8.RuneError {
			return "", 0, &buildfile.Error{File: file, Line: line, Msg: fmt.Sprintf("%q has white space or a control character inside: not one value", value)}
		}
	}
	return value, line, nil
}

func (s *Spec) sourceValue(key string, src *Source, v string) (string, error) {
	v = src.Prefix + strings.TrimSpace(v) + src.Suffix
	if v == src.Prefix+src.Suffix {
		return "", &diag.InputError{File: src.File, Line: src.Line, Key: key, Msg: fmt.Sprintf("%s is empty (read for %s)", src, s.File)}
	}
	return v, nil
}

// sourcePath resolves a source's file path (see Rel) and keeps it inside the root.
func (s *Spec) sourcePath(root, key, p string) (string, error) {
	file := s.Rel(p)
	if err := inRepo(root, file); err != nil {
		return "", s.errf(key, "%v", err)
	}
	return file, nil
}

func (s *Spec) sourceError(key string, err error) error {
	var be *buildfile.Error
	if errors.As(err, &be) {
		return &diag.InputError{File: be.File, Line: be.Line, Key: key, Msg: be.Msg + " (read for " + s.File + ")"}
	}
	return s.errf(key, "%v", err)
}

// Rel resolves a path written in the spec to a path relative to the
// repository root: a path starting with ./ or ../ is relative to the spec's
// directory, any other path is relative to the repository root.
func (s *Spec) Rel(p string) string {
	if p == "." || p == ".." || strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") {
		return path.Clean(path.Join(s.Dir, p))
	}
	return p
}
