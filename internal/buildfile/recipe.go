package buildfile

import (
	"bufio"
	"bytes"
	"math"
	"strings"
)

// Recipe returns the recipe lines of target in Makefile data, with their
// line numbers, the leading tab dropped and continuation lines joined (each
// trimmed, after one blank). Blank lines and comments do not end a recipe;
// the next rule or assignment does.
func Recipe(data []byte, target string) []Line {
	var out []Line
	in := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	var cont *Line
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if cont != nil {
			cont.Text += " " + strings.TrimSpace(strings.TrimSuffix(line, "\\"))
			if !strings.HasSuffix(line, "\\") {
				out, cont = append(out, *cont), nil
			}
			continue
		}
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "\t"):
			if !in {
				continue
			}
			r := Line{N: n, Text: strings.TrimSuffix(line[1:], "\\")}
			if strings.HasSuffix(line, "\\") {
				cont = &r
				continue
			}
			out = append(out, r)
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
		default:
			in = isRule(line, target)
		}
	}
	if cont != nil {
		out = append(out, *cont)
	}
	return out
}

// isRule reports whether a Makefile line starts the rule of target
// (`build:` or `build: deps`, not `build := x`).
func isRule(line, target string) bool {
	head, _, ok := strings.Cut(line, ":")
	if !ok || strings.HasPrefix(line[len(head):], ":=") || strings.HasPrefix(line[len(head):], "::=") || strings.Contains(head, "=") {
		return false
	}
	for _, t := range strings.Fields(head) {
		if t == target {
			return true
		}
	}
	return false
}

// RuleAfter returns the line of the first rule, assignment or directive (a
// logical line that is no recipe line) after line n, which ends the recipe
// holding line n; math.MaxInt when none follows.
func (m *Makefile) RuleAfter(n int) int {
	for _, l := range m.others {
		if l > n {
			return l
		}
	}
	return math.MaxInt
}

// Words splits a recipe line at blanks outside quotes and $(...), keeping
// the quotes (Unquote drops them).
func Words(s string) []string {
	var out []string
	var cur strings.Builder
	inDQ, depth := false, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' && (!inDQ || depth > 0):
			// a single-quoted part, also a nested command's inside "$(...)"
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				cur.WriteString(s[i:])
				i = len(s)
				continue
			}
			cur.WriteString(s[i : i+j+2])
			i += j + 1
			continue
		case c == '"' && depth == 0:
			inDQ = !inDQ
		case c == '(' && i > 0 && s[i-1] == '$':
			depth++
		case c == ')' && depth > 0:
			depth--
		case (c == ' ' || c == '\t') && !inDQ && depth == 0:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
			continue
		}
		cur.WriteByte(c)
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// MakeRef reads a reference $(NAME) or ${NAME} to a variable at the start
// of v, and returns its name and the rest of v.
func MakeRef(v string) (name, rest string, ok bool) {
	if len(v) < 4 || (v[1] != '(' && v[1] != '{') {
		return "", "", false
	}
	closer := ")"
	if v[1] == '{' {
		closer = "}"
	}
	j := strings.Index(v, closer)
	if j < 0 || !IsName(v[2:j]) {
		return "", "", false
	}
	return v[2:j], v[j+1:], true
}

// IsName reports whether s is a shell variable name: a letter or _, then
// letters, digits and _.
func IsName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
