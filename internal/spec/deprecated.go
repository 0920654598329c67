package spec

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/patchkit/patchkit/internal/diag"
)

// A respelling is a key of the spec that says what another key says: the
// old spelling still loads, to the same Spec, with a deprecation note.
type respelling struct {
	schema   string // the mapping's path in allowed ("[]" for a list element)
	old, new string
	what     string // what the key is, for the note
}

// respellings are the deprecated spellings and their replacements (see
// docs/spec.md#deprecated-spellings). stamp[].kind has no replacement: key
// implies it (see dropKind).
var respellings = []respelling{
	// build.target is the Makefile target in .patchkit.yaml
	{"build", "target", "stage", "the Dockerfile stage to build (--target)"},
	// test.inject[].from/to are repository -> tree paths
	{"build.files.[]", "from", "tree", "the file's path in the patched tree"},
	{"build.files.[]", "to", "image", "the file's path in the image"},
	// format names the form of the value (tag@digest) or spells it as a template
	{"stamp.[]", "value", "format", "a format template"},
}

// respell rewrites the deprecated spellings in the document n to the
// current ones, before it is decoded, recording a note for each on s. An
// old and a new spelling of one key with different values are bad input.
func (s *Spec) respell(n *yaml.Node, schema, display string) error {
	switch n.Kind {
	case yaml.MappingNode:
		for _, r := range respellings {
			if r.schema != schema {
				continue
			}
			if err := s.respellKey(n, display, r); err != nil {
				return err
			}
		}
		if schema == "stamp.[]" {
			if err := s.dropKind(n, display); err != nil {
				return err
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if err := s.respell(n.Content[i+1], join(schema, k), join(display, k)); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, el := range n.Content {
			if err := s.respell(el, join(schema, "[]"), fmt.Sprintf("%s[%d]", display, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Spec) respellKey(m *yaml.Node, display string, r respelling) error {
	oi, ni := mapIndex(m, r.old), mapIndex(m, r.new)
	if oi < 0 {
		return nil
	}
	oldKey, newKey := join(display, r.old), join(display, r.new)
	ok, ov := m.Content[oi], m.Content[oi+1]
	if ni < 0 {
		ok.Value = r.new
		s.lines[newKey] = ok.Line
		s.deprecate(ok.Line, "%s is %s: write %s (deprecated)", oldKey, r.what, r.new)
		return nil
	}
	nv := m.Content[ni+1]
	if ov.Kind != yaml.ScalarNode || nv.Kind != yaml.ScalarNode || ov.Value != nv.Value {
		return &diag.InputError{File: s.File, Line: ok.Line, Key: oldKey,
			Msg: fmt.Sprintf("conflicts with %s on line %d: write only %s (%s is its deprecated spelling)", newKey, m.Content[ni].Line, r.new, r.old)}
	}
	m.Content = append(m.Content[:oi:oi], m.Content[oi+2:]...)
	s.deprecate(ok.Line, "%s repeats %s; remove it (deprecated)", oldKey, newKey)
	return nil
}

// dropKind removes stamp[].kind, which key implies (yaml with a key, text
// without one), after checking it agrees with key.
func (s *Spec) dropKind(m *yaml.Node, display string) error {
	i := mapIndex(m, "kind")
	if i < 0 {
		return nil
	}
	k, v := m.Content[i], m.Content[i+1]
	kindKey := join(display, "kind")
	hasKey := false
	if j := mapIndex(m, "key"); j >= 0 {
		hasKey = m.Content[j+1].Value != ""
	}
	fail := func(format string, args ...any) error {
		return &diag.InputError{File: s.File, Line: k.Line, Key: kindKey, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case v.Kind != yaml.ScalarNode || v.Value != StampYAML && v.Value != StampText:
		return fail("%q is not yaml or text (and kind is implied by key: remove it)", v.Value)
	case v.Value == StampText && hasKey:
		return fail("text, but the entry has a key: a text target has no key, the whole file is the value (kind is implied by key: remove it)")
	case v.Value == StampYAML && !hasKey:
		return fail("yaml, but the entry has no key: a YAML target needs key (kind is implied by key: remove it)")
	}
	m.Content = append(m.Content[:i:i], m.Content[i+2:]...)
	s.deprecate(k.Line, "%s is implied by key; remove it (deprecated)", kindKey)
	return nil
}

func (s *Spec) deprecate(line int, format string, args ...any) {
	s.Deprecations = append(s.Deprecations, diag.Note{File: s.File, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// currentKeys is keys, the keys allowed at schema, without the deprecated
// spellings, for messages.
func currentKeys(schema string, keys []string) []string {
	var out []string
	for _, k := range keys {
		old := schema == "stamp.[]" && k == "kind"
		for _, r := range respellings {
			old = old || r.schema == schema && r.old == k
		}
		if !old {
			out = append(out, k)
		}
	}
	return out
}

// mapIndex returns the index in m.Content of key's key node, or -1.
func mapIndex(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i
		}
	}
	return -1
}
