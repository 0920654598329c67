package upgrade

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

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

// lines splits b into lines that keep their "\n".
func lines(b []byte) [][]byte {
	out := bytes.SplitAfter(b, []byte("\n"))
	if len(out) > 0 && len(out[len(out)-1]) == 0 {
		out = out[:len(out)-1]
	}
	return out
}

var yamlValueRe = regexp.MustCompile(`^(\s*(?:-\s+)?)([A-Za-z0-9_.-]+)(\s*:\s*)("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#]+)(.*)$`)

// SetYAMLValue returns data with the scalar value of key on line (1-based)
// replaced by value, in the same quoting style, every other byte kept.
func SetYAMLValue(data []byte, line int, key, value string) ([]byte, error) {
	ls := lines(data)
	if line < 1 || line > len(ls) {
		return nil, fmt.Errorf("line %d: no such line", line)
	}
	l := ls[line-1]
	body, eol := cutEOL(l)
	m := yamlValueRe.FindSubmatch(body)
	if m == nil || string(m[2]) != key {
		return nil, fmt.Errorf("line %d: not a %q: value line", line, key)
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
	return replaceLine(ls, line-1, string(m[1])+string(m[2])+string(m[3])+quoted+string(m[5])+eol), nil
}

func cutEOL(l []byte) ([]byte, string) {
	switch {
	case bytes.HasSuffix(l, []byte("\r\n")):
		return l[:len(l)-2], "\r\n"
	case bytes.HasSuffix(l, []byte("\n")):
		return l[:len(l)-1], "\n"
	}
	return l, ""
}

func replaceLine(ls [][]byte, i int, s string) []byte {
	var b bytes.Buffer
	for k, l := range ls {
		if k == i {
			b.WriteString(s)
		} else {
			b.Write(l)
		}
	}
	return b.Bytes()
}

var dockerArgRe = regexp.MustCompile(`^(\s*(?i:ARG)\s+)([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|'[^']*'|\S*)(.*)$`)

// SetDockerfileArg returns data with the default of `ARG name=value` (quoted
// or not) set to value. The first ARG of that name with a default is moved;
// none is an error.
func SetDockerfileArg(data []byte, name, value string) ([]byte, error) {
	ls := lines(data)
	for i, l := range ls {
		body, eol := cutEOL(l)
		m := dockerArgRe.FindSubmatch(body)
		if m == nil || string(m[2]) != name {
			continue
		}
		v := value
		switch old := string(m[3]); {
		case strings.HasPrefix(old, `"`):
			v = `"` + value + `"`
		case strings.HasPrefix(old, `'`):
			v = `'` + value + `'`
		}
		return replaceLine(ls, i, string(m[1])+name+"="+v+string(m[4])+eol), nil
	}
	return nil, fmt.Errorf("no ARG %s=<default> line", name)
}

var makeVarRe = regexp.MustCompile(`^(\s*(?:export\s+)?)([A-Za-z_][A-Za-z0-9_.-]*)(\s*(?:\?|:|::|\+)?=\s*)([^#]*?)(\s*(?:#.*)?)$`)

// SetMakefileVar returns data with the value of `name ?= value` (or =, :=,
// ::=) set to value, keeping the operator, spacing and any comment. The
// first assignment of name is moved; none is an error.
func SetMakefileVar(data []byte, name, value string) ([]byte, error) {
	ls := lines(data)
	for i, l := range ls {
		body, eol := cutEOL(l)
		m := makeVarRe.FindSubmatch(body)
		if m == nil || string(m[2]) != name || strings.HasPrefix(strings.TrimSpace(string(m[3])), "+") {
			continue
		}
		return replaceLine(ls, i, string(m[1])+name+string(m[3])+value+string(m[5])+eol), nil
	}
	return nil, fmt.Errorf("no assignment of %s", name)
}

// SourcePin is a pin the spec reads from another file (upstream.ref:
// {dockerfile-arg: ...} or {makefile-var: ...}): the one source of truth, so
// that is the line upgrade moves, and the spec stays as it is.
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
	re, group := dockerArgRe, 3
	if src.MakefileVar != "" {
		re, group = makeVarRe, 4
	}
	out, err := setValueAt(data, src.Line, re, group, value)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", src.Where(), err)
	}
	return src.File, out, nil
}

// setValueAt replaces submatch group of re on line (1-based) by value,
// keeping the old value's quotes. The old value must be a literal.
func setValueAt(data []byte, line int, re *regexp.Regexp, group int, value string) ([]byte, error) {
	ls := lines(data)
	if line < 1 || line > len(ls) {
		return nil, fmt.Errorf("no line %d", line)
	}
	body, eol := cutEOL(ls[line-1])
	m := re.FindSubmatchIndex(body)
	if m == nil || m[2*group] < 0 {
		return nil, fmt.Errorf("not an assignment with a default value")
	}
	old := string(body[m[2*group]:m[2*group+1]])
	if strings.ContainsAny(old, "$`") {
		return nil, fmt.Errorf("the pin %s refers to another variable: move it by hand", old)
	}
	v := value
	if q := old[:min(1, len(old))]; (q == `"` || q == `'`) && strings.HasSuffix(old, q) && len(old) > 1 {
		v = q + value + q
	}
	s := string(body[:m[2*group]]) + v + string(body[m[2*group+1]:]) + eol
	return replaceLine(ls, line-1, s), nil
}

// PinFor returns the PinWriter for the spec's pin: where it is read from, or
// the spec's own upstream.ref line.
func PinFor(root string, s *spec.Spec) PinWriter {
	if s.Upstream.RefFrom != nil {
		return SourcePin{Root: root, Spec: s}
	}
	return SpecPin{Root: root, Spec: s}
}
