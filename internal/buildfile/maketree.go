package buildfile

import (
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/patchkit/patchkit/internal/lazyre"
)

// SourceLine is one logical line of a Makefile read with its includes
// (continuations joined): the file it is in, relative to the root, its
// first line number and its text.
type SourceLine struct {
	File string
	N    int
	Text string
}

// Rule is a target's prerequisites and recipe (comments dropped, each line
// trimmed).
type Rule struct {
	Target  string
	Prereqs []string
	Recipe  []SourceLine
}

// MakeTree is a Makefile read together with the files it includes, as make
// sees them: variables, their assignments and the rules, in reading order.
type MakeTree struct {
	Files []string // this file and those it includes, relative to the root
	File  string   // relative to the root
	Dir   string   // the directory make runs in, relative to the root
	// Vars are the values as written (unexpanded): the first ?= when no
	// assignment came before, else the last assignment; += replaces.
	Vars map[string]string
	// VarAt is the line that set each of Vars.
	VarAt map[string]SourceLine
	Rules map[string]*Rule // by target; pattern rules keep their %
}

var (
	makeRuleRE   = lazyre.New(`^([^\s:=#][^:=]*?)\s*:(?:[^=]|$)\s*(.*)$`)
	makeVarRefRE = lazyre.New(`\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)|\$\{([A-Za-z_][A-Za-z0-9_.-]*)\}`)
)

// ReadMakeTree reads root/rel and, recursively, the files it includes
// (`include` lines, their paths relative to the directory make runs in,
// with variables expanded; paths that leave that directory or keep a
// reference are passed over, as are included files that do not exist).
func ReadMakeTree(root, rel string) (*MakeTree, error) {
	m := &MakeTree{File: rel, Dir: path.Dir(rel), Vars: map[string]string{}, VarAt: map[string]SourceLine{}, Rules: map[string]*Rule{}}
	return m, m.read(root, rel, map[string]bool{})
}

func (m *MakeTree) read(root, rel string, seen map[string]bool) error {
	if seen[rel] {
		return nil
	}
	seen[rel] = true
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return err
	}
	m.Files = append(m.Files, rel)
	var cur *Rule
	for _, bl := range Lines(data) {
		l := SourceLine{rel, bl.N, bl.Text}
		if strings.HasPrefix(l.Text, "\t") {
			if cur != nil {
				t := strings.TrimSpace(l.Text)
				if !strings.HasPrefix(t, "#") {
					cur.Recipe = append(cur.Recipe, SourceLine{l.File, l.N, t})
				}
			}
			continue
		}
		t := strings.TrimSpace(l.Text)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if inc, ok := strings.CutPrefix(t, "include "); ok {
			cur = nil
			for _, f := range strings.Fields(inc) {
				f = m.Expand(f)
				p := path.Join(m.Dir, f)
				if strings.HasPrefix(p, "../") || strings.Contains(f, "$") {
					continue
				}
				if err := m.read(root, p, seen); err != nil && !os.IsNotExist(err) {
					return err
				}
			}
			continue
		}
		if a := assignRE.FindStringSubmatch(t); a != nil {
			cur = nil
			name, op, val := a[1], a[2], stripComment(a[3])
			if op == "!=" {
				continue // a shell assignment: no value to read
			}
			if _, set := m.Vars[name]; op == "?=" && set {
				continue
			}
			m.Vars[name] = val
			m.VarAt[name] = l
			continue
		}
		if r := makeRuleRE.FindStringSubmatch(t); r != nil {
			rule := &Rule{Target: r[1], Prereqs: strings.Fields(r[2])}
			if strings.HasPrefix(r[1], ".") {
				cur = nil
				continue
			}
			for _, tgt := range strings.Fields(r[1]) {
				if _, ok := m.Rules[tgt]; !ok {
					m.Rules[tgt] = rule
				}
			}
			cur = rule
			continue
		}
		cur = nil
	}
	return nil
}

// Expand replaces $(VAR) and ${VAR} with the values of Vars (recursively, a
// few levels deep); unknown names are left as written.
func (m *MakeTree) Expand(s string) string {
	for i := 0; i < 5 && makeVarRefRE.MatchString(s); i++ {
		s = makeVarRefRE.ReplaceAllStringFunc(s, func(x string) string {
			sub := makeVarRefRE.FindStringSubmatch(x)
			if v, ok := m.Vars[sub[1]+sub[2]]; ok {
				return v
			}
			return x
		})
	}
	return s
}

// ReplaceVarRefs replaces every $(VAR) and ${VAR} in s with with.
func ReplaceVarRefs(s, with string) string {
	return makeVarRefRE.ReplaceAllLiteralString(s, with)
}

// Recipe is target's recipe, with its prerequisites' recipes first (pattern
// rules included, $* set to the stem) in make's order.
func (m *MakeTree) Recipe(target string) []SourceLine {
	var out []SourceLine
	seen := map[string]bool{}
	var walk func(t string)
	walk = func(t string) {
		if seen[t] {
			return
		}
		seen[t] = true
		r, stem := m.Rule(t)
		if r == nil {
			return
		}
		for _, p := range r.Prereqs {
			walk(m.Expand(p))
		}
		for _, l := range r.Recipe {
			l.Text = strings.ReplaceAll(l.Text, "$*", stem)
			out = append(out, l)
		}
	}
	walk(target)
	return out
}

// Rule returns the rule that makes target t: its own, else a pattern rule
// that matches it, with the stem % stands for; nil when none does.
func (m *MakeTree) Rule(t string) (*Rule, string) {
	if r, ok := m.Rules[t]; ok {
		return r, ""
	}
	for name, r := range m.Rules {
		pre, post, ok := strings.Cut(name, "%")
		if ok && strings.HasPrefix(t, pre) && strings.HasSuffix(t, post) && len(t) > len(pre)+len(post) {
			return r, t[len(pre) : len(t)-len(post)]
		}
	}
	return nil, ""
}

// VarRefs returns the names of the variables s refers to as $(VAR) or
// ${VAR}, in order.
func VarRefs(s string) []string {
	var out []string
	for _, m := range makeVarRefRE.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1]+m[2])
	}
	return out
}
