package matrix

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/patchkit/patchkit/internal/buildfile"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/spec"
)

// Entry is the build entry: the recipe lines of a Makefile target that
// build images.
type Entry struct {
	// Makefile is the Makefile's path relative to the root; Target its target.
	Makefile, Target string
	// Exists is false when there is no such Makefile (then Lines is empty).
	Exists bool
	// Lines are the recipe lines that build an image, in file order.
	Lines []Line
}

// Line is one recipe line of the build entry that builds images: `make
// image IMAGE=<x>` (Image set) or `make -C DIR image` (Dir set).
type Line struct {
	N    int    // its line number in the Makefile
	Text string // the recipe line, trimmed
	// Image is the IMAGE= value: a unit's name or directory.
	Image string
	// Dir is the -C directory relative to the root, slash-separated ("."
	// for the root).
	Dir string
}

// Builds reports whether the line builds unit u: IMAGE= names u (by name
// or directory), or -C names u's directory or one of its ancestors.
func (l Line) Builds(u spec.Unit) bool {
	if l.Image != "" {
		return l.Image == u.Name || path.Clean(l.Image) == u.Dir
	}
	return l.Dir == "." || u.Dir == l.Dir || strings.HasPrefix(u.Dir, l.Dir+"/")
}

// Where is Makefile:N.
func (l Line) Where(e *Entry) string { return fmt.Sprintf("%s:%d", e.Makefile, l.N) }

// ReadEntry reads the build entry repo names under root. A missing Makefile
// is no error: Exists is false.
func ReadEntry(root string, repo *spec.Repo) (*Entry, error) {
	e := &Entry{Makefile: repo.Build.Makefile, Target: repo.Build.Target}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(e.Makefile)))
	if errors.Is(err, os.ErrNotExist) {
		return e, nil
	}
	if err != nil {
		return nil, &diag.InputError{File: e.Makefile, Msg: "reading the Makefile", Err: err}
	}
	e.Exists = true
	seen := map[string]int{}
	for _, r := range buildfile.Recipe(data, e.Target) {
		l, ok := parseLine(r.Text, path.Dir(e.Makefile))
		if !ok {
			continue
		}
		l.N = r.N
		id := "IMAGE=" + l.Image
		if l.Dir != "" {
			id = "-C " + l.Dir
		}
		if first, dup := seen[id]; dup {
			return nil, diag.Inputf(e.Makefile, l.N, "%s is built twice by %s: (first at line %d)", id, e.Target, first)
		}
		seen[id] = l.N
		e.Lines = append(e.Lines, l)
	}
	return e, nil
}

// BuiltBy returns the line that builds u, preferring an IMAGE= line and
// then the deepest -C directory, or false when no line does.
func (e *Entry) BuiltBy(u spec.Unit) (Line, bool) {
	var best Line
	found := false
	for _, l := range e.Lines {
		if !l.Builds(u) {
			continue
		}
		if l.Image != "" {
			return l, true
		}
		if !found || len(l.Dir) > len(best.Dir) {
			best, found = l, true
		}
	}
	return best, found
}

// makeWords are the commands that run make.
var makeWords = []string{"make", "gmake", "$(MAKE)", "${MAKE}"}

// parseLine reads one recipe line: a make command with an `image` target,
// and either IMAGE=<x> or -C DIR (also -CDIR, --directory=DIR,
// --directory DIR). base is the Makefile's directory; DIR is relative to
// it. A DIR or IMAGE holding a make variable is not read.
func parseLine(text, base string) (Line, bool) {
	s := strings.TrimLeft(strings.TrimSpace(text), "@+-")
	words := strings.Fields(s)
	if len(words) == 0 || !contains(makeWords, words[0]) {
		return Line{}, false
	}
	l := Line{Text: strings.TrimSpace(text)}
	image := false
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "&&" || w == "||" || w == ";" || w == "|" || strings.HasPrefix(w, "#"):
			i = len(words)
		case w == "-C" || w == "--directory":
			if i+1 < len(words) {
				l.Dir = words[i+1]
				i++
			}
		case strings.HasPrefix(w, "--directory="):
			l.Dir = strings.TrimPrefix(w, "--directory=")
		case strings.HasPrefix(w, "-C"):
			l.Dir = w[2:]
		case strings.HasPrefix(w, "IMAGE="):
			l.Image = strings.Trim(strings.TrimPrefix(w, "IMAGE="), `"'`)
		case w == "image":
			image = true
		}
	}
	if !image || strings.Contains(l.Dir+l.Image, "$") {
		return Line{}, false
	}
	if l.Dir != "" {
		l.Dir = path.Clean(path.Join(base, strings.Trim(l.Dir, `"'`)))
		if l.Dir == ".." || strings.HasPrefix(l.Dir, "../") {
			return Line{}, false
		}
		if l.Image != "" { // make -C DIR image IMAGE=x: x is a unit of DIR's Makefile
			l.Dir = ""
		}
	}
	if l.Dir == "" && l.Image == "" {
		return Line{}, false
	}
	return l, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
