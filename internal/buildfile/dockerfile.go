package buildfile

import (
	"fmt"
	"strings"
)

// Instr is one Dockerfile instruction.
type Instr struct {
	// Line is the 1-based line the instruction starts on.
	Line int
	// Cmd is the instruction, upper case (RUN, ARG, COPY, ...).
	Cmd string
	// Args is the rest of the logical line, continuations joined.
	Args string
}

// Dockerfile is a parsed Dockerfile or Containerfile.
type Dockerfile struct {
	// File is the path used in messages.
	File   string
	Instrs []Instr
}

// Arg is one ARG declaration.
type Arg struct {
	Name       string
	Default    string
	HasDefault bool
	Line       int
}

// ReadDockerfile reads the Dockerfile at path; display names it in errors.
func ReadDockerfile(path, display string) (*Dockerfile, error) {
	data, err := readFile(path, display)
	if err != nil {
		return nil, err
	}
	return ParseDockerfile(data, display), nil
}

// ParseDockerfile splits data into instructions.
func ParseDockerfile(data []byte, display string) *Dockerfile {
	d := &Dockerfile{File: display}
	for _, l := range logicalLines(data) {
		text := strings.TrimSpace(l.Text)
		cmd, args, _ := strings.Cut(text, " ")
		if i := strings.IndexAny(cmd, "\t"); i > 0 {
			cmd, args = cmd[:i], cmd[i+1:]+" "+args
		}
		d.Instrs = append(d.Instrs, Instr{Line: l.N, Cmd: strings.ToUpper(cmd), Args: strings.TrimSpace(args)})
	}
	return d
}

// Args returns every ARG declaration, in order.
func (d *Dockerfile) Args() []Arg {
	var out []Arg
	for _, in := range d.Instrs {
		if in.Cmd != "ARG" {
			continue
		}
		for _, tok := range fields(in.Args) {
			name, def, has := strings.Cut(tok, "=")
			out = append(out, Arg{Name: name, Default: Unquote(def), HasDefault: has, Line: in.Line})
		}
	}
	return out
}

// ErrNoDefault is the message of an ARG whose value only a build-arg gives.
const ErrNoDefault = "has no default: its value comes from a --build-arg"

// ArgValue returns the default value of ARG name and the line that gives it,
// with references to other ARGs expanded from their defaults. It is an
// *Error naming the file and line when no ARG declares name, or none gives
// it a default that can be read.
func (d *Dockerfile) ArgValue(name string) (string, int, error) {
	return d.argValue(name, map[string]bool{}, map[string]argDone{})
}

type argDone struct {
	value string
	line  int
}

func (d *Dockerfile) argValue(name string, seen map[string]bool, done map[string]argDone) (string, int, error) {
	if a, ok := done[name]; ok {
		return a.value, a.line, nil
	}
	if seen[name] {
		return "", 0, &Error{File: d.File, Msg: fmt.Sprintf("ARG %s refers to itself", name)}
	}
	seen[name] = true
	defer delete(seen, name) // ${V}-${V} refers to V twice, not to itself
	args := d.Args()
	declared := 0
	for _, a := range args {
		if a.Name != name {
			continue
		}
		if declared == 0 {
			declared = a.Line
		}
		if !a.HasDefault {
			continue
		}
		var inner error
		v, missing := Expand(a.Default, func(ref string) (string, bool) {
			val, _, err := d.argValue(ref, seen, done)
			if err != nil {
				inner = err
				return "", false
			}
			return val, true
		})
		if missing != "" {
			return "", a.Line, &Error{File: d.File, Line: a.Line, Msg: fmt.Sprintf("ARG %s=%s: %v", name, a.Default, inner)}
		}
		if len(v) > MaxExpansion {
			return "", a.Line, &Error{File: d.File, Line: a.Line, Msg: fmt.Sprintf("ARG %s expands to more than %d bytes", name, MaxExpansion)}
		}
		done[name] = argDone{v, a.Line}
		return v, a.Line, nil
	}
	if declared == 0 {
		return "", 0, &Error{File: d.File, Msg: fmt.Sprintf("no ARG %s", name)}
	}
	return "", declared, &Error{File: d.File, Line: declared, Msg: fmt.Sprintf("ARG %s %s", name, ErrNoDefault)}
}

// fields splits s at blanks outside quotes, keeping the quotes.
func fields(s string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote = r
			cur.WriteRune(r)
		case r == ' ' || r == '\t':
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// Fields splits a shell-like command line at blanks outside quotes and drops
// the quotes. It is enough for the RUN lines patchkit reads; it is not a
// shell.
func Fields(s string) []string {
	f := fields(s)
	for i := range f {
		f[i] = Unquote(f[i])
	}
	return f
}
