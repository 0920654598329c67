package buildfile

import (
	"fmt"
	"strings"

	"github.com/patchkit/patchkit/internal/lazyre"
)

// Var is a Makefile variable assignment.
type Var struct {
	Name  string
	Op    string // =, :=, ::=, ?=, +=, !=
	Value string
	Line  int
}

// Makefile is the part of a Makefile patchkit reads: its variable
// assignments and its recipe lines.
type Makefile struct {
	// File is the path used in messages.
	File string
	// Vars holds the assignment that sets each variable: the first ?= or
	// the last plain one.
	Vars map[string]Var
	// Recipes are the recipe lines (those starting with a tab).
	Recipes []Line
	// Includes are the files of include lines without make references, as
	// written (relative to the directory make runs in).
	Includes []string
	// others are the lines of the logical lines that are no recipe lines
	// (rules, assignments, directives), in order: RuleAfter.
	others []int
}

var assignRE = lazyre.New(`^(?:export\s+|override\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*(\?=|::=|:=|\+=|!=|=)\s*(.*?)\s*$`)

// ReadMakefile reads the Makefile at path; display names it in errors.
func ReadMakefile(path, display string) (*Makefile, error) {
	data, err := readFile(path, display)
	if err != nil {
		return nil, err
	}
	return ParseMakefile(data, display), nil
}

// ParseMakefile reads the assignments and recipe lines of data.
func ParseMakefile(data []byte, display string) *Makefile {
	m := &Makefile{File: display, Vars: map[string]Var{}}
	for _, l := range logicalLines(data) {
		if strings.HasPrefix(l.Text, "\t") {
			m.Recipes = append(m.Recipes, l)
			continue
		}
		m.others = append(m.others, l.N)
		if rest, ok := strings.CutPrefix(l.Text, "include "); ok || strings.HasPrefix(l.Text, "-include ") || strings.HasPrefix(l.Text, "sinclude ") {
			if !ok {
				_, rest, _ = strings.Cut(l.Text, " ")
			}
			for _, f := range strings.Fields(stripComment(rest)) {
				if !strings.Contains(f, "$") {
					m.Includes = append(m.Includes, f)
				}
			}
			continue
		}
		sm := assignRE.FindStringSubmatch(l.Text)
		if sm == nil {
			continue
		}
		v := Var{Name: sm[1], Op: sm[2], Value: stripComment(sm[3]), Line: l.N}
		if old, ok := m.Vars[v.Name]; ok && v.Op == "?=" {
			_ = old // a ?= after an assignment does nothing
			continue
		}
		if old, ok := m.Vars[v.Name]; ok && v.Op == "+=" {
			old.Op, old.Line = "+=", v.Line
			m.Vars[v.Name] = old
			continue
		}
		m.Vars[v.Name] = v
	}
	return m
}

func stripComment(s string) string {
	if i := strings.Index(s, " #"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

var makeRefRE = lazyre.New(`\$[({]([^(){}]*)[)}]`)

// Value returns the value of variable name and the line that sets it, with
// references to other simple variables expanded. A variable that is
// computed ($(shell ...), other functions, !=, +=), unset, or refers to one
// of those is an *Error naming the file and line and saying why.
func (m *Makefile) Value(name string) (string, int, error) {
	return m.value(name, map[string]bool{}, map[string]string{})
}

// MaxExpansion bounds the expanded value of a variable or ARG: a pin is a
// short string, and references that double at each line would otherwise
// take minutes and gigabytes (as YAML aliases are bounded).
const MaxExpansion = 64 << 10

func (m *Makefile) value(name string, seen map[string]bool, done map[string]string) (string, int, error) {
	v, ok := m.Vars[name]
	if !ok {
		return "", 0, &Error{File: m.File, Msg: fmt.Sprintf("no assignment of %s (only simple VAR = value, VAR := value and VAR ?= value assignments are read)", name)}
	}
	if out, ok := done[name]; ok {
		return out, v.Line, nil
	}
	if seen[name] {
		return "", v.Line, &Error{File: m.File, Line: v.Line, Msg: fmt.Sprintf("%s refers to itself", name)}
	}
	seen[name] = true
	switch v.Op {
	case "!=":
		return "", v.Line, &Error{File: m.File, Line: v.Line, Msg: fmt.Sprintf("%s is computed by the shell (!=)", name)}
	case "+=":
		return "", v.Line, &Error{File: m.File, Line: v.Line, Msg: fmt.Sprintf("%s is appended to with +=", name)}
	}
	var err error
	out := makeRefRE.ReplaceAllStringFunc(v.Value, func(ref string) string {
		if err != nil {
			return ref
		}
		inner := makeRefRE.FindStringSubmatch(ref)[1]
		if strings.ContainsAny(inner, " \t,") {
			fn, _, _ := strings.Cut(inner, " ")
			err = &Error{File: m.File, Line: v.Line, Msg: fmt.Sprintf("%s is computed by $(%s ...)", name, fn)}
			return ref
		}
		val, _, e := m.value(inner, seen, done)
		if e != nil {
			err = e
			return ref
		}
		return val
	})
	if err == nil && len(out) > MaxExpansion {
		err = &Error{File: m.File, Line: v.Line, Msg: fmt.Sprintf("%s expands to more than %d bytes", name, MaxExpansion)}
	}
	if err == nil && strings.Contains(out, "$(") {
		err = &Error{File: m.File, Line: v.Line, Msg: fmt.Sprintf("%s is computed by a make function", name)}
	}
	if err != nil {
		return "", v.Line, err
	}
	delete(seen, name)
	done[name] = out
	return out, v.Line, nil
}

// BuildArg is a --build-arg of the recipe line that builds an image.
type BuildArg struct {
	Name  string
	Value string // as written, make references unexpanded
	Line  int
}

var buildCmdRE = lazyre.New(`\b(docker|podman|buildah)\b[^;&|]*\b(build|bud)\b`)

// BuildArgs returns the --build-arg flags of the recipe lines that run a
// container build of dir (a path relative to the Makefile's directory, such
// as images/piraeus-server), and the line of the first such recipe (0 when
// none builds dir).
func (m *Makefile) BuildArgs(dir string) (map[string]BuildArg, int) {
	dir = strings.TrimPrefix(strings.TrimSuffix(dir, "/"), "./")
	args := map[string]BuildArg{}
	line := 0
	for _, l := range m.Recipes {
		if !buildCmdRE.MatchString(l.Text) || !mentions(l.Text, dir) {
			continue
		}
		if line == 0 {
			line = l.N
		}
		f := Fields(l.Text)
		for i := 0; i < len(f); i++ {
			kv := ""
			switch {
			case f[i] == "--build-arg" && i+1 < len(f):
				kv = f[i+1]
				i++
			case strings.HasPrefix(f[i], "--build-arg="):
				kv = strings.TrimPrefix(f[i], "--build-arg=")
			default:
				continue
			}
			k, v, _ := strings.Cut(kv, "=")
			args[k] = BuildArg{Name: k, Value: Unquote(v), Line: l.N}
		}
	}
	return args, line
}

// mentions reports whether text names dir as a whole path word.
func mentions(text, dir string) bool {
	for _, f := range Fields(text) {
		f = strings.TrimPrefix(strings.TrimSuffix(f, "/"), "./")
		if f == dir || strings.HasSuffix(f, "/"+dir) || strings.HasPrefix(f, "--file="+dir+"/") {
			return true
		}
		if strings.HasPrefix(f, dir+"/") && (strings.HasSuffix(f, "Dockerfile") || strings.HasSuffix(f, "Containerfile")) {
			return true
		}
	}
	return false
}
