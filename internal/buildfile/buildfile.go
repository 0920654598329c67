// Package buildfile reads the parts of Dockerfiles and Makefiles that hold an
// image's upstream and pin: ARG defaults, RUN lines, simple Makefile
// variables and the --build-arg flags of the recipe that builds an image.
package buildfile

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/patchkit/patchkit/internal/lazyre"
)

// Line is one logical line: continuation lines joined, with the 1-based
// number of its first physical line.
type Line struct {
	N    int
	Text string
}

// logicalLines joins lines ending in a backslash and drops blank lines and
// lines whose first non-blank character is '#' (comments inside a
// continuation are dropped too, as Docker and make do).
func logicalLines(data []byte) []Line { return joinLines(data, false) }

// Lines returns every logical line of data: lines ending in a backslash
// joined with the next (the backslash replaced by a blank), a "\r" before
// the newline dropped, comments and blank lines kept as they are.
func Lines(data []byte) []Line { return joinLines(data, true) }

func joinLines(data []byte, keep bool) []Line {
	var out []Line
	var cur strings.Builder
	start := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	n := 0
	for sc.Scan() {
		n++
		raw := strings.TrimRight(sc.Text(), "\r")
		if trim := strings.TrimSpace(raw); !keep && (strings.HasPrefix(trim, "#") || (trim == "" && cur.Len() == 0)) {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		if strings.HasSuffix(raw, "\\") {
			cur.WriteString(strings.TrimSuffix(raw, "\\"))
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(raw)
		out = append(out, Line{N: start, Text: cur.String()})
		cur.Reset()
	}
	if cur.Len() > 0 {
		out = append(out, Line{N: start, Text: cur.String()})
	}
	return out
}

// Error is a problem in a build file at a line.
type Error struct {
	File string
	Line int
	Msg  string
}

// Where is file:line, or the file alone when there is no line.
func (e *Error) Where() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	return e.File
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

var refRE = lazyre.New(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-+][^}]*)?\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// Refs returns the names of the variables s refers to as ${X} or $X.
func Refs(s string) []string {
	var out []string
	for _, m := range refRE.FindAllStringSubmatch(s, -1) {
		if m[1] != "" {
			out = append(out, m[1])
		} else {
			out = append(out, m[2])
		}
	}
	return out
}

// Expand replaces ${X} and $X in s with lookup(X). It stops at the first
// name lookup cannot give and returns that name.
func Expand(s string, lookup func(string) (string, bool)) (string, string) {
	missing := ""
	out := refRE.ReplaceAllStringFunc(s, func(m string) string {
		if missing != "" {
			return m
		}
		sub := refRE.FindStringSubmatch(m)
		name := sub[1]
		if name == "" {
			name = sub[2]
		}
		v, ok := lookup(name)
		if !ok {
			missing = name
			return m
		}
		return v
	})
	return out, missing
}

func readFile(path, display string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: display, Msg: fmt.Sprintf("reading: %v", trimPathErr(err))}
	}
	return data, nil
}

func trimPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// Unquote drops one pair of matching quotes around a whole word ("a b" or
// 'a b').
func Unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}
