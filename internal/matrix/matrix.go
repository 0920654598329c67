// Package matrix turns a list of changed files into the image units CI must
// build, with the Makefile's build: target as the one list of units.
package matrix

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/spec"
)

// Full is the argument that selects every unit.
const Full = "FULL"

// SharedInputs are the paths whose change selects every unit: a directory
// prefix ends with "/".
var SharedInputs = []string{
	"cmd/", "internal/", ".github/workflows/",
	"go.mod", "go.sum", "Makefile", "hack/build-matrix.sh",
}

// imageLine matches a unit line of the build: target: `make image IMAGE=x`,
// `$(MAKE) image IMAGE=x` or `${MAKE} image IMAGE=x`, with any other
// variables or flags around them.
var imageLine = regexp.MustCompile(`^\s*[@+-]*\s*(?:make|\$\(MAKE\)|\$\{MAKE\})\s(?:[^#]*\s)?image\s(?:[^#]*\s)?IMAGE=([A-Za-z0-9][A-Za-z0-9._-]*)`)

// Units reads the image units from the build: target of the Makefile at
// path (display is its name in messages). A unit listed twice is an error.
func Units(makefile, display string) ([]Unit, error) {
	data, err := os.ReadFile(makefile)
	if err != nil {
		return nil, &diag.InputError{File: display, Msg: "reading the Makefile", Err: err}
	}
	var units []Unit
	seen := map[string]int{}
	in := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "\t"):
			if !in {
				continue
			}
			m := imageLine.FindStringSubmatch(line[1:])
			if m == nil {
				continue
			}
			if first, dup := seen[m[1]]; dup {
				return nil, diag.Inputf(display, n, "image %s is listed twice in build: (first at line %d)", m[1], first)
			}
			seen[m[1]] = n
			units = append(units, Unit{Name: m[1], Line: n})
		case strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#"):
			// blank lines and comments do not end a recipe
		default:
			in = isBuildRule(line)
		}
	}
	return units, sc.Err()
}

// isBuildRule reports whether a Makefile line starts the build: rule
// (`build:` or `build: deps`, not `build := x`).
func isBuildRule(line string) bool {
	for _, target := range strings.Fields(strings.SplitN(line, ":", 2)[0]) {
		if target == "build" && strings.Contains(line, ":") && !strings.Contains(line, ":=") && !strings.Contains(line, "::=") {
			return true
		}
	}
	return false
}

// Unit is an image unit the Makefile builds.
type Unit struct {
	Name string
	Line int // its line in the Makefile
}

// Path is the unit's directory, as the matrix prints it: images/<name>.
func (u Unit) Path() string { return path.Join(spec.ImagesDir, u.Name) }

// Select returns the unit paths that changed selects, sorted. full (FULL, no
// argument or an empty one) selects every unit.
func Select(root string, units []Unit, changed []string, full bool) ([]string, error) {
	all := make([]string, 0, len(units))
	for _, u := range units {
		all = append(all, u.Path())
	}
	sort.Strings(all)
	if full {
		return all, nil
	}
	for _, c := range changed {
		if shared(c) {
			return all, nil
		}
	}
	picked := map[string]bool{}
	for _, u := range units {
		inputs, err := inputsOf(root, u.Name)
		if err != nil {
			return nil, err
		}
		for _, c := range changed {
			if selects(inputs, c) {
				picked[u.Path()] = true
				break
			}
		}
	}
	out := []string{}
	for _, p := range all {
		if picked[p] {
			out = append(out, p)
		}
	}
	return out, nil
}

func shared(p string) bool {
	for _, s := range SharedInputs {
		if p == s || strings.HasSuffix(s, "/") && strings.HasPrefix(p, s) {
			return true
		}
	}
	return false
}

// inputs are a unit's directories (prefixes ending in "/") and files.
type inputs []string

func selects(in inputs, p string) bool {
	for _, i := range in {
		if p == i || strings.HasSuffix(i, "/") && strings.HasPrefix(p, i) {
			return true
		}
	}
	return false
}

// inputsOf lists what a unit is built from: images/<name>/, its patch
// directory, and every file its spec refers to. A unit whose spec is missing
// still has its images/<name>/ directory (verify reports the missing spec).
func inputsOf(root, name string) (inputs, error) {
	in := inputs{path.Join(spec.ImagesDir, name) + "/"}
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(spec.Path(name)))); os.IsNotExist(err) {
		return in, nil
	}
	s, err := spec.Load(root, name)
	if err != nil {
		return nil, err
	}
	in = append(in, path.Clean(s.Patches)+"/")
	if s.Test != nil {
		for _, i := range s.Test.Inject {
			in = append(in, path.Clean(i.From))
		}
	}
	if s.Build.Dockerfile != "" {
		in = append(in, path.Clean(s.Build.Dockerfile))
	}
	for _, st := range s.Stamp {
		in = append(in, path.Clean(st.File))
	}
	return in, nil
}

// ParseChanged reads a changed-files list: one path per line, blank lines
// and "#" comments skipped, "./" prefixes dropped.
func ParseChanged(data []byte) []string {
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, strings.TrimPrefix(l, "./"))
	}
	return out
}
