package buildfile

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/patchkit/patchkit/internal/lazyre"
)

// Writing: upgrade moves a pin where it lives, an ARG default or a Makefile
// variable, rewriting one line and keeping every other byte.

// EditLine returns data with line (1-based) replaced by edit(body), body
// being the line without its line ending, which the new line keeps. Every
// other byte stays as it was.
func EditLine(data []byte, line int, edit func(body []byte) (string, error)) ([]byte, error) {
	ls := splitLines(data)
	if line < 1 || line > len(ls) {
		return nil, fmt.Errorf("line %d: no such line", line)
	}
	body, eol := cutEOL(ls[line-1])
	s, err := edit(body)
	if err != nil {
		return nil, err
	}
	return replaceLine(ls, line-1, s+eol), nil
}

// splitLines splits b into lines that keep their "\n".
func splitLines(b []byte) [][]byte {
	out := bytes.SplitAfter(b, []byte("\n"))
	if len(out) > 0 && len(out[len(out)-1]) == 0 {
		out = out[:len(out)-1]
	}
	return out
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

var dockerArgRe = lazyre.New(`^(\s*(?i:ARG)\s+)([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|'[^']*'|\S*)(.*)$`)

// SetArg returns Dockerfile data with the default of `ARG name=value`
// (quoted or not) set to value. The first ARG of that name with a default is
// moved; none is an error.
func SetArg(data []byte, name, value string) ([]byte, error) {
	ls := splitLines(data)
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

var makeVarRe = lazyre.New(`^(\s*(?:export\s+)?)([A-Za-z_][A-Za-z0-9_.-]*)(\s*(?:\?|:|::|\+)?=\s*)([^#]*?)(\s*(?:#.*)?)$`)

// SetVar returns Makefile data with the value of `name ?= value` (or =, :=,
// ::=) set to value, keeping the operator, spacing and any comment. The
// first assignment of name is moved; none is an error.
func SetVar(data []byte, name, value string) ([]byte, error) {
	ls := splitLines(data)
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

// SetArgAt returns Dockerfile data with the default of the `ARG NAME=value`
// on line (1-based) set to value, keeping its quotes. The old default must
// be a literal: one that refers to another variable is an error (moving it is
// a human's call).
func SetArgAt(data []byte, line int, value string) ([]byte, error) {
	return setValueAt(data, line, dockerArgRe.Regexp(), 3, value)
}

// SetVarAt returns Makefile data with the value of the assignment on line
// (1-based) set to value, keeping its quotes, operator and comment. The old
// value must be a literal, as for SetArgAt.
func SetVarAt(data []byte, line int, value string) ([]byte, error) {
	return setValueAt(data, line, makeVarRe.Regexp(), 4, value)
}

// setValueAt replaces submatch group of re on line (1-based) by value,
// keeping the old value's quotes. The old value must be a literal.
func setValueAt(data []byte, line int, re *regexp.Regexp, group int, value string) ([]byte, error) {
	if line < 1 || line > len(splitLines(data)) {
		return nil, fmt.Errorf("no line %d", line)
	}
	return EditLine(data, line, func(body []byte) (string, error) {
		m := re.FindSubmatchIndex(body)
		if m == nil || m[2*group] < 0 {
			return "", fmt.Errorf("not an assignment with a default value")
		}
		old := string(body[m[2*group]:m[2*group+1]])
		if strings.ContainsAny(old, "$`") {
			return "", fmt.Errorf("the pin %s refers to another variable: move it by hand", old)
		}
		v := value
		if q := old[:min(1, len(old))]; (q == `"` || q == `'`) && strings.HasSuffix(old, q) && len(old) > 1 {
			v = q + value + q
		}
		return string(body[:m[2*group]]) + v + string(body[m[2*group+1]:]), nil
	})
}

// ReplaceValue returns data with the one line that assigns name the value
// old (NAME = old, export NAME := old, YAML's name: old, quoted or not)
// rewritten to give it new, keeping the rest of the line, and that line
// (1-based). It is an error when no line or more than one does.
func ReplaceValue(data []byte, name, old, new string) ([]byte, int, error) {
	re := regexp.MustCompile(`^(\s*(?:export\s+|override\s+|-\s+)?` + regexp.QuoteMeta(name) + `\s*(?:\?=|::=|:=|=|:)\s*["']?)` + regexp.QuoteMeta(old) + `(["']?\s*(?:#.*)?)$`)
	lines := strings.SplitAfter(string(data), "\n")
	hit := 0
	for i, l := range lines {
		body := strings.TrimRight(l, "\r\n")
		if m := re.FindStringSubmatch(body); m != nil {
			if hit != 0 {
				return nil, 0, fmt.Errorf("%s is set to %s on lines %d and %d: move it by hand", name, old, hit, i+1)
			}
			lines[i] = m[1] + new + m[2] + l[len(body):]
			hit = i + 1
		}
	}
	if hit == 0 {
		return nil, 0, fmt.Errorf("no line sets %s to %s", name, old)
	}
	return []byte(strings.Join(lines, "")), hit, nil
}
