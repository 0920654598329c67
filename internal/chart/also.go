package chart

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/patchkit/patchkit/internal/lazyre"
	"github.com/patchkit/patchkit/internal/spec"
)

// alsoNames lists the places besides the chart unit's pin that name the
// version it leaves, which upgrade does not move itself:
//   - an image unit built from the same upstream version (the unit's
//     image:, or an image unit of the package built from the chart's
//     appVersion): moving its pin alone would leave its series behind, so
//     the note gives the upgrade that carries it;
//   - a line of the package Makefile, other than the pin's, that writes the
//     old version or appVersion.
//
// oldApp and newApp are the chart's appVersion before and after ("" when
// it has none).
func (f *Fetcher) alsoNames(u *Unit, pin, to, oldApp, newApp string, skip map[int]bool) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	note := func(su spec.Unit, ref, old, new, what string) {
		if seen[su.Dir] || trimV(ref) != trimV(old) || trimV(old) == trimV(new) || new == "" {
			return
		}
		seen[su.Dir] = true
		target := trimV(new)
		if strings.HasPrefix(ref, "v") {
			target = "v" + target
		}
		out = append(out, fmt.Sprintf("image unit %s is built from %s, the chart's %s: move it and carry its series with `patchkit upgrade %s --to %s`", su.Dir, ref, what, su.Dir, target))
	}
	if u.Image != "" {
		su, err := spec.Find(f.root, u.Image)
		if err != nil {
			return nil, err
		}
		s, err := spec.LoadUnit(f.root, su)
		if err != nil {
			return nil, err
		}
		note(su, s.Upstream.Ref, pin, to, "version "+pin)
		note(su, s.Upstream.Ref, oldApp, newApp, "appVersion "+oldApp)
	}
	units, err := spec.Discover(f.root)
	if err != nil {
		return nil, err
	}
	for _, su := range units {
		if !strings.HasPrefix(su.Dir+"/", u.Base+"/") && u.Base != "." {
			continue
		}
		s, err := spec.LoadUnit(f.root, su)
		if err != nil {
			continue // verify reports a spec it cannot load; here it names nothing
		}
		note(su, s.Upstream.Ref, pin, to, "version "+pin)
		note(su, s.Upstream.Ref, oldApp, newApp, "appVersion "+oldApp)
	}
	sort.Strings(out)

	mk := path.Join(u.Base, "Makefile")
	data, err := os.ReadFile(filepath.Join(f.root, filepath.FromSlash(mk)))
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	olds := []string{trimV(pin)}
	if oldApp != "" && trimV(oldApp) != trimV(pin) {
		olds = append(olds, trimV(oldApp))
	}
	var res []*regexp.Regexp
	for _, o := range olds {
		res = append(res, regexp.MustCompile(`(^|[^0-9A-Za-z.+-])v?`+regexp.QuoteMeta(o)+`($|[^0-9A-Za-z.+-])`))
	}
	pinLine := 0
	if u.Version.MakefileVar != "" && path.Clean(u.Version.Makefile) == mk {
		if l, ok := makefileVarLine(data, u.Version.MakefileVar); ok {
			pinLine = l
		}
	}
	for i, l := range strings.Split(string(data), "\n") {
		if i+1 == pinLine || skip[i+1] {
			continue
		}
		for j, re := range res {
			if re.MatchString(l) {
				out = append(out, fmt.Sprintf("%s:%d names %s too: %s", mk, i+1, olds[j], strings.TrimSpace(l)))
				break
			}
		}
	}
	return out, nil
}

// reFetchLine is a recipe line that fetches an upstream.
var reFetchLine = lazyre.New(`^\t.*(helm\s+pull|curl\s|wget\s|oci://)`)

// recipeLiteral plans moving a pin the package Makefile writes as a literal
// in its fetch line (`helm pull ... --version 0.3.0`), which the spec's
// literal version copies: each recipe line that fetches and names the old
// version gets the new one. It returns the edits and the lines (1-based).
func recipeLiteral(root string, u *Unit, pin, to string) ([]fileEdit, map[int]bool, []string, error) {
	if u.Version.Value == "" {
		return nil, nil, nil, nil
	}
	mk := path.Join(u.Base, "Makefile")
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(mk)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil, nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	re := regexp.MustCompile(`(^|[^0-9A-Za-z.+-])(v?)` + regexp.QuoteMeta(trimV(pin)) + `($|[^0-9A-Za-z.+-])`)
	var edits []fileEdit
	var pins []string
	lines := map[int]bool{}
	for i, l := range strings.Split(string(data), "\n") {
		l = strings.TrimRight(l, "\r")
		if !reFetchLine.MatchString(l) || !re.MatchString(l) {
			continue
		}
		old := l
		moved := re.ReplaceAllStringFunc(l, func(m string) string {
			sub := re.FindStringSubmatch(m) // the line's spelling (with or without v) is kept
			return sub[1] + sub[2] + trimV(to) + sub[3]
		})
		lines[i+1] = true
		pins = append(pins, fmt.Sprintf("%s:%d (the recipe's literal)", mk, i+1))
		edits = append(edits, fileEdit{File: mk, Transform: func(data []byte) ([]byte, error) { return replaceLine(data, old, moved) }})
	}
	return edits, lines, pins, nil
}

// replaceLine replaces the one line of data equal to old with new.
func replaceLine(data []byte, old, new string) ([]byte, error) {
	ls := strings.SplitAfter(string(data), "\n")
	hit := 0
	for i, l := range ls {
		body := strings.TrimRight(l, "\r\n")
		if body == old {
			ls[i] = new + l[len(body):]
			hit++
		}
	}
	if hit != 1 {
		return nil, fmt.Errorf("the line %q is there %d times", old, hit)
	}
	return []byte(strings.Join(ls, "")), nil
}

// makefileVarLine is the line (1-based) that assigns name in a Makefile.
func makefileVarLine(data []byte, name string) (int, bool) {
	re := regexp.MustCompile(`^\s*(?:export\s+|override\s+)?` + regexp.QuoteMeta(name) + `\s*(?:\?=|::=|:=|=)`)
	for i, l := range strings.Split(string(data), "\n") {
		if re.MatchString(l) {
			return i + 1, true
		}
	}
	return 0, false
}

func trimV(s string) string { return strings.TrimPrefix(s, "v") }
