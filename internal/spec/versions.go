package spec

import (
	"bytes"
	"errors"
	"fmt"
	goversion "go/version"
	"os"
	"path"
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
// the pin. Exactly one of DockerfileArg, MakefileVar, Key and WholeFile is
// set.
type Version struct {
	// File holds the value, by the path rule (./ is relative to the spec).
	File string `yaml:"file"`
	// DockerfileArg is an ARG of File whose default is the version.
	DockerfileArg string `yaml:"dockerfile-arg"`
	// MakefileVar is a variable File sets by a simple assignment.
	MakefileVar string `yaml:"makefile-var"`
	// Key is a yq path of a scalar of the YAML file File (.appVersion).
	Key string `yaml:"key"`
	// WholeFile says the value is the whole of File, one line, white space
	// around it dropped (see ReadTextValue): eks-distro's GOLANG_VERSION.
	WholeFile bool `yaml:"whole-file"`
	// Spelling is how the place spells the pin: pin (as the pin, the
	// default), bare (without a leading v: 1.15.10 for v1.15.10) or v (with
	// one: v1.15.10 for 1.15.10); or go: the place holds no spelling of the
	// pin but the Go release that builds it, at least the go directive of
	// its go.mod (the default of a whole file named GOLANG_VERSION,
	// GO_VERSION or .go-version).
	Spelling string `yaml:"spelling"`
}

// The spellings of a Version.
const (
	SpellingPin  = "pin"
	SpellingBare = "bare"
	SpellingV    = "v"
	SpellingGo   = "go"
)

var spellings = []string{SpellingPin, SpellingBare, SpellingV, SpellingGo}

// goVersionFiles are the names of a whole file that holds a Go release,
// whose spelling defaults to go.
var goVersionFiles = []string{"GOLANG_VERSION", "GO_VERSION", ".go-version"}

// Spell returns pin as the place spells it (a go place spells no pin: see
// GoNeeds).
func (v Version) Spell(pin string) string {
	switch v.Spelling {
	case SpellingBare:
		return strings.TrimPrefix(pin, "v")
	case SpellingV:
		return "v" + strings.TrimPrefix(pin, "v")
	}
	return pin
}

// Kind is dockerfile-arg, makefile-var, key or whole-file.
func (v Version) Kind() string {
	switch {
	case v.DockerfileArg != "":
		return "dockerfile-arg"
	case v.MakefileVar != "":
		return "makefile-var"
	case v.WholeFile:
		return "whole-file"
	}
	return "key"
}

// Name is the ARG, variable or key; the file's base name for a whole file.
func (v Version) Name() string {
	switch {
	case v.DockerfileArg != "":
		return v.DockerfileArg
	case v.MakefileVar != "":
		return v.MakefileVar
	case v.WholeFile:
		return path.Base(v.File)
	}
	return v.Key
}

// String describes the place: "dockerfile-arg VERSION of images/x/Dockerfile",
// "whole-file projects/o/r/1-30/GOLANG_VERSION".
func (v Version) String() string {
	if v.WholeFile {
		return "whole-file " + v.File
	}
	return fmt.Sprintf("%s %s of %s", v.Kind(), v.Name(), v.File)
}

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
		if v.WholeFile {
			n++
		}
		if n != 1 {
			return s.errf(key, "give exactly one of dockerfile-arg, makefile-var, key and whole-file: true")
		}
		if v.Key != "" {
			if _, err := expr.ParsePath(v.Key); err != nil {
				return s.errf(key+".key", "%v", err)
			}
		}
		if v.Spelling == "" {
			s.Upstream.Versions[i].Spelling = SpellingPin
			if v.WholeFile && contains(goVersionFiles, path.Base(v.File)) {
				s.Upstream.Versions[i].Spelling = SpellingGo
			}
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
	case v.WholeFile:
		return ReadTextValue(data, v.File)
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

// GoNeeds compares the value have of a go place (1.25, a release line, or
// 1.24.4, a release) with want, the go directive of the go.mod that builds
// the pin (1.24.0). It returns have when that Go release builds want, else
// want in have's precision (1.26 for go 1.26.1 when have is a release
// line): the value the place needs. A value that is no Go version is an
// error.
func GoNeeds(have, want string) (string, error) {
	h, w := "go"+have, "go"+want
	if !goversion.IsValid(h) {
		return "", fmt.Errorf("%q is not a Go version", have)
	}
	if !goversion.IsValid(w) {
		return "", fmt.Errorf("the go directive %q is not a Go version", want)
	}
	if strings.Count(have, ".") == 1 && goversion.Lang(h) == h {
		// a release line: 1.25 builds every go 1.25.x
		if goversion.Compare(goversion.Lang(w), h) <= 0 {
			return have, nil
		}
		return strings.TrimPrefix(goversion.Lang(w), "go"), nil
	}
	if goversion.Compare(w, h) <= 0 {
		return have, nil
	}
	return want, nil
}
