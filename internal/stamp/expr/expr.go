// Package expr parses the two small languages of a stamp target: its key,
// a yq path (.a.b[0]["c.d"]), and its value template ({{.Tag}}@{{.Digest}}).
package expr

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Step is one step of a path: a mapping key, or a sequence index when IsIndex.
type Step struct {
	Key     string
	Index   int
	IsIndex bool
}

// String renders the step in yq syntax.
func (s Step) String() string {
	if s.IsIndex {
		return "[" + strconv.Itoa(s.Index) + "]"
	}
	if plainKey(s.Key) {
		return "." + s.Key
	}
	return "[" + strconv.Quote(s.Key) + "]"
}

// Path is a parsed key path.
type Path []Step

// String renders the path in yq syntax, "." for the empty path.
func (p Path) String() string {
	if len(p) == 0 {
		return "."
	}
	var b strings.Builder
	for _, s := range p {
		b.WriteString(s.String())
	}
	return b.String()
}

// notPlain are the characters a key written without quotes cannot hold.
const notPlain = ".[]\"' \t|=(),{}*&!#"

func plainKey(k string) bool {
	return k != "" && !strings.ContainsAny(k, notPlain) && k != "<<"
}

// ParsePath parses a yq path as `yq '.path = …'` takes it: .a.b, list
// indices (.a[0], .a.[0]), quoted keys (."x-y", .a["b.c"]).
func ParsePath(s string) (Path, error) {
	if !strings.HasPrefix(s, ".") && !strings.HasPrefix(s, "[") {
		return nil, fmt.Errorf("%q must start with '.', like .global.images.kubeovn.tag", s)
	}
	var p Path
	for i := 0; i < len(s); {
		switch {
		case s[i] == '.' && i+1 < len(s) && s[i+1] == '[':
			i++ // .[0] is [0]
		case s[i] == '.' && i+1 < len(s) && s[i+1] == '"':
			k, n, err := quoted(s[i+1:])
			if err != nil {
				return nil, fmt.Errorf("%q: %w", s, err)
			}
			p, i = append(p, Step{Key: k}), i+1+n
		case s[i] == '.':
			j := i + 1
			for j < len(s) && !strings.ContainsRune(notPlain, rune(s[j])) {
				j++
			}
			if j == i+1 {
				return nil, fmt.Errorf("%q: empty key at offset %d", s, i)
			}
			p, i = append(p, Step{Key: s[i+1 : j]}), j
		case s[i] == '[':
			st, n, err := bracket(s[i:])
			if err != nil {
				return nil, fmt.Errorf("%q: %w", s, err)
			}
			p, i = append(p, st), i+n
		default:
			return nil, fmt.Errorf("%q: unexpected %q at offset %d (quote keys with special characters: .\"x-y\" or [\"b.c\"])", s, s[i], i)
		}
	}
	if len(p) == 0 {
		return nil, fmt.Errorf("%q names no key", s)
	}
	return p, nil
}

// quoted reads a double-quoted key at the start of s, returning it and
// the bytes consumed.
func quoted(s string) (string, int, error) {
	for j := 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			k, err := strconv.Unquote(s[:j+1])
			if err != nil {
				return "", 0, fmt.Errorf("bad quoted key %s", s[:j+1])
			}
			return k, j + 1, nil
		}
	}
	return "", 0, errors.New("unterminated quoted key")
}

// bracket reads [N] or ["key"] at the start of s.
func bracket(s string) (Step, int, error) {
	if len(s) > 1 && s[1] == '"' {
		k, n, err := quoted(s[1:])
		if err != nil {
			return Step{}, 0, err
		}
		if 1+n >= len(s) || s[1+n] != ']' {
			return Step{}, 0, errors.New("missing ] after quoted key")
		}
		return Step{Key: k}, n + 2, nil
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return Step{}, 0, errors.New("missing ]")
	}
	n, err := strconv.Atoi(s[1:end])
	if err != nil || n < 0 || strings.HasPrefix(s[1:end], "+") {
		return Step{}, 0, fmt.Errorf("index %q is not a non-negative integer", s[1:end])
	}
	return Step{Index: n, IsIndex: true}, end + 1, nil
}

// Fields are the names a value template may use.
var Fields = []string{"Registry", "Repository", "Tag", "Digest", "Reference"}

// Template is a parsed value template: literal text and {{.Field}}s.
type Template struct {
	parts []part
}

type part struct {
	lit   string
	field string // "" for a literal
}

// ParseTemplate parses text with {{.Field}} (spaces inside the braces
// allowed) for each of Fields; everything else is literal.
func ParseTemplate(s string) (Template, error) {
	var t Template
	for s != "" {
		i := strings.Index(s, "{{")
		if i < 0 {
			t.parts = append(t.parts, part{lit: s})
			break
		}
		if i > 0 {
			t.parts = append(t.parts, part{lit: s[:i]})
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			return Template{}, fmt.Errorf("unterminated {{ in %q", s)
		}
		name := strings.TrimSpace(s[i+2 : i+j])
		f := strings.TrimPrefix(name, ".")
		if f == name || !contains(Fields, f) {
			return Template{}, fmt.Errorf("unknown field {{%s}} (known: {{.%s}})", name, strings.Join(Fields, "}}, {{."))
		}
		t.parts = append(t.parts, part{field: f})
		s = s[i+j+2:]
	}
	if len(t.parts) == 0 {
		return Template{}, errors.New("empty value template")
	}
	return t, nil
}

// Uses reports whether the template uses field.
func (t Template) Uses(field string) bool {
	for _, p := range t.parts {
		if p.field == field {
			return true
		}
	}
	return false
}

// Render fills the template with the field values get returns.
func (t Template) Render(get func(field string) string) string {
	var b strings.Builder
	for _, p := range t.parts {
		if p.field != "" {
			b.WriteString(get(p.field))
		} else {
			b.WriteString(p.lit)
		}
	}
	return b.String()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
