package spec

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/patchkit/patchkit/internal/buildfile"
	"github.com/patchkit/patchkit/internal/diag"
)

// Source says where a value of upstream (url or ref) is read from, instead
// of being copied into the spec: one source of truth. Exactly one of
// DockerfileArg and MakefileVar is set.
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
	if src.MakefileVar != "" {
		return fmt.Sprintf("makefile-var %s of %s", src.MakefileVar, src.Makefile)
	}
	return fmt.Sprintf("dockerfile-arg %s of %s", src.DockerfileArg, src.Dockerfile)
}

var sourceKeys = []string{"dockerfile-arg", "dockerfile", "makefile-var", "makefile", "prefix", "suffix"}

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
	return "", s.errf(key, "a source needs dockerfile-arg or makefile-var (known keys: %s)", strings.Join(sourceKeys, ", "))
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
