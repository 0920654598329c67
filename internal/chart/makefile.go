package chart

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/patchkit/patchkit/internal/buildfile"
)

// mkLine is one logical line of a Makefile (continuations joined).
type mkLine struct {
	File string // relative to the root
	N    int
	Text string
}

// mkRule is a target's prerequisites and recipe.
type mkRule struct {
	Target  string
	Prereqs []string
	Recipe  []mkLine
}

// makefile is what init reads of a package Makefile and the files it includes.
type makefile struct {
	Files []string // this file and those it includes, relative to the root
	File  string   // relative to the root
	Dir   string   // the directory make runs in, relative to the root
	Vars  map[string]string
	VarAt map[string]mkLine
	Rules map[string]*mkRule // by target; pattern rules keep their %
}

var (
	mkAssign = regexp.MustCompile(`^(?:export\s+|override\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*(\?=|::=|:=|\+=|=)\s*(.*?)\s*$`)
	mkRuleRE = regexp.MustCompile(`^([^\s:=#][^:=]*?)\s*:(?:[^=]|$)\s*(.*)$`)
	mkRef    = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)|\$\{([A-Za-z_][A-Za-z0-9_.-]*)\}`)
)

// readMakefile reads root/rel and, recursively, the files it includes
// (paths relative to the directory make runs in).
func readMakefile(root, rel string) (*makefile, error) {
	m := &makefile{File: rel, Dir: path.Dir(rel), Vars: map[string]string{}, VarAt: map[string]mkLine{}, Rules: map[string]*mkRule{}}
	return m, m.read(root, rel, map[string]bool{})
}

func (m *makefile) read(root, rel string, seen map[string]bool) error {
	if seen[rel] {
		return nil
	}
	seen[rel] = true
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return err
	}
	m.Files = append(m.Files, rel)
	var cur *mkRule
	for _, bl := range buildfile.Lines(data) {
		l := mkLine{rel, bl.N, bl.Text}
		if strings.HasPrefix(l.Text, "\t") {
			if cur != nil {
				t := strings.TrimSpace(l.Text)
				if !strings.HasPrefix(t, "#") {
					cur.Recipe = append(cur.Recipe, mkLine{l.File, l.N, t})
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
				f = m.expand(f)
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
		if a := mkAssign.FindStringSubmatch(t); a != nil && !strings.Contains(a[1], ":") {
			cur = nil
			name, op, val := a[1], a[2], a[3]
			if i := strings.Index(val, " #"); i >= 0 {
				val = strings.TrimSpace(val[:i])
			}
			if _, set := m.Vars[name]; op == "?=" && set {
				continue
			}
			m.Vars[name] = val
			m.VarAt[name] = l
			continue
		}
		if r := mkRuleRE.FindStringSubmatch(t); r != nil {
			rule := &mkRule{Target: r[1], Prereqs: strings.Fields(r[2])}
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

// expand replaces $(VAR) and ${VAR} with the Makefile's values (recursively,
// a few levels deep); unknown names are left as written.
func (m *makefile) expand(s string) string {
	for i := 0; i < 5 && mkRef.MatchString(s); i++ {
		s = mkRef.ReplaceAllStringFunc(s, func(x string) string {
			sub := mkRef.FindStringSubmatch(x)
			n := sub[1] + sub[2]
			if v, ok := m.Vars[n]; ok {
				return v
			}
			return x
		})
	}
	return s
}

// recipe is the update target's recipe, with prerequisites' recipes
// (pattern rules included, $* set) in make's order.
func (m *makefile) recipe(target string) []mkLine {
	var out []mkLine
	seen := map[string]bool{}
	var walk func(t string)
	walk = func(t string) {
		if seen[t] {
			return
		}
		seen[t] = true
		r, stem := m.rule(t)
		if r == nil {
			return
		}
		for _, p := range r.Prereqs {
			walk(m.expand(p))
		}
		for _, l := range r.Recipe {
			l.Text = strings.ReplaceAll(l.Text, "$*", stem)
			out = append(out, l)
		}
	}
	walk(target)
	return out
}

func (m *makefile) rule(t string) (*mkRule, string) {
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

// MakefileInputs are the files a package Makefile's recipes come from: the
// Makefile and the files it includes (a shared %-update rule), relative
// to the root. A Makefile that cannot be read gives just itself.
func MakefileInputs(root, rel string) []string {
	m, err := readMakefile(root, rel)
	if err != nil {
		return []string{rel}
	}
	return m.Files
}
