package spec

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/patchkit/patchkit/internal/buildfile"
	"github.com/patchkit/patchkit/internal/stamp/expr"
)

// Version is one more place that names the pinned version
// (upstream.versions[]): a Dockerfile ARG's default (ARG VERSION="1.15.10"
// beside the pin's ARG TAG="v1.15.10"), a Makefile variable, or a YAML key
// (a vendored chart's Chart.yaml appVersion). upgrade moves each with the
// pin in one change; verify's versions check fails when one disagrees with
// the pin. Exactly one of DockerfileArg, MakefileVar and Key is set.
type Version struct {
	// File holds the value, by the path rule (./ is relative to the spec).
	File string `yaml:"file"`
	// DockerfileArg is an ARG of File whose default is the version.
	DockerfileArg string `yaml:"dockerfile-arg"`
	// MakefileVar is a variable File sets by a simple assignment.
	MakefileVar string `yaml:"makefile-var"`
	// Key is a yq path of a scalar of the YAML file File (.appVersion).
	Key string `yaml:"key"`
	// Spelling is how the place spells the pin: pin (as the pin, the
	// default), bare (without a leading v: 1.15.10 for v1.15.10) or v (with
	// one: v1.15.10 for 1.15.10).
	Spelling string `yaml:"spelling"`
}

// The spellings of a Version.
const (
	SpellingPin  = "pin"
	SpellingBare = "bare"
	SpellingV    = "v"
)

var spellings = []string{SpellingPin, SpellingBare, SpellingV}

// Spell returns pin as the place spells it.
func (v Version) Spell(pin string) string {
	switch v.Spelling {
	case SpellingBare:
		return strings.TrimPrefix(pin, "v")
	case SpellingV:
		return "v" + strings.TrimPrefix(pin, "v")
	}
	return pin
}

// Kind is dockerfile-arg, makefile-var or key.
func (v Version) Kind() string {
	switch {
	case v.DockerfileArg != "":
		return "dockerfile-arg"
	case v.MakefileVar != "":
		return "makefile-var"
	}
	return "key"
}

// Name is the ARG, variable or key.
func (v Version) Name() string {
	switch {
	case v.DockerfileArg != "":
		return v.DockerfileArg
	case v.MakefileVar != "":
		return v.MakefileVar
	}
	return v.Key
}

// String describes the place: "dockerfile-arg VERSION of images/x/Dockerfile".
func (v Version) String() string { return fmt.Sprintf("%s %s of %s", v.Kind(), v.Name(), v.File) }

func (s *Spec) validateVersions(root string) error {
	for i, v := range s.Upstream.Versions {
		key := fmt.Sprintf("upstream.versions[%d]", i)
		if v.File == "" {
			return s.errf(key+".file", "required: the file that names the version")
		}
		if err := inRepo(root, v.File); err != nil {
			return s.errf(key+".file", "%v", err)
		}
		n := 0
		for _, x := range []string{v.DockerfileArg, v.MakefileVar, v.Key} {
			if x != "" {
				n++
			}
		}
		if n != 1 {
			return s.errf(key, "give exactly one of dockerfile-arg, makefile-var and key")
		}
		if v.Key != "" {
			if _, err := expr.ParsePath(v.Key); err != nil {
				return s.errf(key+".key", "%v", err)
			}
		}
		if v.Spelling == "" {
			s.Upstream.Versions[i].Spelling = SpellingPin
		} else if !contains(spellings, v.Spelling) {
			return s.errf(key+".spelling", "%q is not one of %s", v.Spelling, strings.Join(spellings, ", "))
		}
	}
	return nil
}

// ReadVersion reads the value at v (File relative to root) and its line.
// A Dockerfile ARG or Makefile variable whose value refers to another
// variable reads as that variable's value.
func ReadVersion(root string, v Version) (string, int, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(v.File)))
	if err != nil {
		return "", 0, fmt.Errorf("reading %s: %w", v.File, errors.Unwrap(err))
	}
	return ReadVersionData(data, v)
}

// ReadVersionData is ReadVersion of v in data, the bytes of v.File.
func ReadVersionData(data []byte, v Version) (string, int, error) {
	switch {
	case v.DockerfileArg != "":
		return buildfile.ParseDockerfile(data, v.File).ArgValue(v.DockerfileArg)
	case v.MakefileVar != "":
		val, line, err := buildfile.ParseMakefile(data, v.File).Value(v.MakefileVar)
		return strings.TrimSpace(val), line, err
	}
	n, err := YAMLScalar(data, v.Key)
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", v.File, err)
	}
	return n.Value, n.Line, nil
}

// YAMLScalar returns the scalar node at the yq path key of the YAML
// document data.
func YAMLScalar(data []byte, key string) (*yaml.Node, error) {
	p, err := expr.ParsePath(key)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("reading YAML: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil, errors.New("empty YAML document")
	}
	n := doc.Content[0]
	for _, st := range p {
		var next *yaml.Node
		switch {
		case st.IsIndex && n.Kind == yaml.SequenceNode && st.Index >= 0 && st.Index < len(n.Content):
			next = n.Content[st.Index]
		case !st.IsIndex && n.Kind == yaml.MappingNode:
			next = mapValue(n, st.Key)
		}
		if next == nil {
			return nil, fmt.Errorf("no key %s", key)
		}
		n = next
	}
	if n.Kind != yaml.ScalarNode {
		return nil, fmt.Errorf("%s is not a scalar", key)
	}
	return n, nil
}
