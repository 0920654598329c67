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
func (f *Fetcher) alsoNames(u *Unit, pin, to, oldApp, newApp string) ([]string, error) {
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
		if i+1 == pinLine {
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
