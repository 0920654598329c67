package upgrade

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchkit/patchkit/internal/buildfile"
	"github.com/patchkit/patchkit/internal/lazyre"
	"github.com/patchkit/patchkit/internal/spec"
)

// PinWriter moves an image's pin where it lives. Move returns the file that
// holds the pin (relative to the repository root) and its new bytes; it
// writes nothing, so that upgrade writes every file at the end or none.
type PinWriter interface {
	Move(newRef string) (file string, data []byte, err error)
}

// SpecPin is the pin written literally in the spec: upstream.ref.
type SpecPin struct {
	Root string
	Spec *spec.Spec
}

var _ PinWriter = SpecPin{}

// Move implements PinWriter: it rewrites the value of the upstream.ref line
// of the spec, keeping its quoting and comment.
func (p SpecPin) Move(newRef string) (string, []byte, error) {
	data, err := os.ReadFile(filepath.Join(p.Root, filepath.FromSlash(p.Spec.File)))
	if err != nil {
		return "", nil, fmt.Errorf("reading %s: %w", p.Spec.File, err)
	}
	out, err := SetYAMLValue(data, p.Spec.Line("upstream.ref"), "ref", newRef)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", p.Spec.File, err)
	}
	return p.Spec.File, out, nil
}

var yamlValueRe = lazyre.New(`^(\s*(?:-\s+)?)([A-Za-z0-9_.-]+)(\s*:\s*)("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#]+)(.*)$`)

// SetYAMLValue returns data with the scalar value of key on line (1-based)
// replaced by value, in the same quoting style, every other byte kept.
func SetYAMLValue(data []byte, line int, key, value string) ([]byte, error) {
	return buildfile.EditLine(data, line, func(body []byte) (string, error) {
		return setYAMLValue(body, line, key, value)
	})
}

func setYAMLValue(body []byte, line int, key, value string) (string, error) {
	m := yamlValueRe.FindSubmatch(body)
	if m == nil || string(m[2]) != key {
		return "", fmt.Errorf("line %d: not a %q: value line", line, key)
	}
	old := string(m[4])
	var quoted string
	switch {
	case strings.HasPrefix(old, `"`):
		quoted = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(value) + `"`
	case strings.HasPrefix(old, `'`):
		quoted = `'` + strings.ReplaceAll(value, `'`, `''`) + `'`
	default:
		if strings.ContainsAny(value, " #:'\"{}[],&*!|>%@`") {
			quoted = `"` + value + `"`
		} else {
			quoted = value
		}
	}
	return string(m[1]) + string(m[2]) + string(m[3]) + quoted + string(m[5]), nil
}

// SourcePin is a pin the spec reads from another file (upstream.ref:
// {dockerfile-arg: ...}, {makefile-var: ...} or {file: ...}): the one source
// of truth, so that is the line upgrade moves, and the spec stays as it is.
type SourcePin struct {
	Root string
	Spec *spec.Spec
}

var _ PinWriter = SourcePin{}

// Move implements PinWriter: it rewrites the literal value on the line the
// spec's pin was read from (spec.Source.File and Line), less the source's
// prefix and suffix. A value that is not a plain literal there (it refers to
// another variable) is an error naming the line: moving it is a human's call.
func (p SourcePin) Move(newRef string) (string, []byte, error) {
	src := p.Spec.Upstream.RefFrom
	if src == nil {
		return "", nil, fmt.Errorf("%s: upstream.ref is not read from another file", p.Spec.File)
	}
	value, ok := strings.CutPrefix(newRef, src.Prefix)
	if ok {
		value, ok = strings.CutSuffix(value, src.Suffix)
	}
	if !ok {
		return "", nil, fmt.Errorf("%s: %s does not have the prefix %q and suffix %q that %s adds", src.Where(), newRef, src.Prefix, src.Suffix, p.Spec.File)
	}
	data, err := os.ReadFile(filepath.Join(p.Root, filepath.FromSlash(src.File)))
	if err != nil {
		return "", nil, fmt.Errorf("reading %s: %w", src.File, err)
	}
	set := buildfile.SetArgAt
	switch {
	case src.MakefileVar != "":
		set = buildfile.SetVarAt
	case src.TextFile != "":
		set = SetTextValue
	}
	out, err := set(data, src.Line, value)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", src.Where(), err)
	}
	return src.File, out, nil
}

// PinFor returns the PinWriter for the spec's pin: where it is read from, or
// the spec's own upstream.ref line.
func PinFor(root string, s *spec.Spec) PinWriter {
	if s.Upstream.RefFrom != nil {
		return SourcePin{Root: root, Spec: s}
	}
	return SpecPin{Root: root, Spec: s}
}
