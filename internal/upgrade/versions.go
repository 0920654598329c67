package upgrade

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"

	"github.com/patchkit/patchkit/internal/buildfile"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/stamp/expr"
	"github.com/patchkit/patchkit/internal/tree"
)

// moveVersions adds to writes the edits that set every upstream.versions
// place of s to newRef, as that place spells it. A file that writes already
// rewrites (the pin's own file) is edited in its new bytes, so the pin and
// every place are one write set: Apply writes them all or none. A go place
// (spelling go: a GOLANG_VERSION) is raised to the go directive of the
// go.mod at the root of newTree (the new ref with the kept series) when it
// is below it, and left as it is otherwise, or when newTree is nil or has no
// go directive.
func moveVersions(root string, s *spec.Spec, newRef string, newTree tree.Source, writes []Write) ([]Write, error) {
	goDirective, err := goDirectiveOf(newTree)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.File, err)
	}
	for _, v := range s.Upstream.Versions {
		if v.Spelling == spec.SpellingGo && goDirective == "" {
			continue
		}
		i := -1
		for k, w := range writes {
			if w.Path == v.File && !w.Delete {
				i = k
			}
		}
		var data []byte
		if i >= 0 {
			data = writes[i].Data
		} else {
			b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(v.File)))
			if err != nil {
				return nil, fmt.Errorf("%s: reading %s: %w", s.File, v.File, err)
			}
			data = b
		}
		value := v.Spell(newRef)
		if v.Spelling == spec.SpellingGo {
			have, _, err := spec.ReadVersionData(data, v)
			if err != nil {
				return nil, fmt.Errorf("%s: moving %s: %w", s.File, v, err)
			}
			if value, err = spec.GoNeeds(have, goDirective); err != nil {
				return nil, fmt.Errorf("%s: moving %s: %w", s.File, v, err)
			}
			if value == have {
				continue
			}
		}
		out, err := SetVersion(data, v, value)
		if err != nil {
			return nil, fmt.Errorf("%s: moving %s: %w", s.File, v, err)
		}
		if i >= 0 {
			writes[i].Data = out
		} else {
			writes = append(writes, Write{Path: v.File, Data: out})
		}
	}
	return writes, nil
}

// SetVersion returns data (the bytes of v.File) with the value at v set to
// value, every other byte kept. A value that refers to another variable is
// an error: moving it is a human's call.
func SetVersion(data []byte, v spec.Version, value string) ([]byte, error) {
	_, line, err := spec.ReadVersionData(data, v)
	if err != nil {
		return nil, err
	}
	switch {
	case v.DockerfileArg != "":
		return buildfile.SetArgAt(data, line, value)
	case v.MakefileVar != "":
		return buildfile.SetVarAt(data, line, value)
	case v.WholeFile:
		return SetTextValue(data, line, value)
	}
	p, err := expr.ParsePath(v.Key)
	if err != nil {
		return nil, err
	}
	last := p[len(p)-1]
	if last.IsIndex {
		return nil, fmt.Errorf("%s: a list item is not a key: value line", v.Key)
	}
	return SetYAMLValue(data, line, last.Key, value)
}

// SetTextValue returns data, a file whose whole content is one value (see
// spec.ReadTextValue), with the value on line replaced by value, the white
// space around it and the line ending kept.
func SetTextValue(data []byte, line int, value string) ([]byte, error) {
	return buildfile.EditLine(data, line, func(body []byte) (string, error) {
		old := strings.TrimSpace(string(body))
		if old == "" {
			return "", fmt.Errorf("line %d: no value", line)
		}
		i := strings.Index(string(body), old)
		return string(body[:i]) + value + string(body[i+len(old):]), nil
	})
}

// goDirectiveOf returns the go directive of the go.mod at the root of t
// (1.24.0), or "" when t is nil, has no go.mod or the go.mod no directive.
func goDirectiveOf(t tree.Source) (string, error) {
	if t == nil {
		return "", nil
	}
	f, ok, err := t.Read("go.mod")
	if err != nil || !ok {
		return "", err
	}
	mf, err := modfile.ParseLax("go.mod", f.Data, nil)
	if err != nil {
		return "", fmt.Errorf("reading the new ref's go.mod: %w", err)
	}
	if mf.Go == nil {
		return "", nil
	}
	return mf.Go.Version, nil
}

// dropFromReadme adds to writes the patch directory's README without the
// entries of the patches the plan deletes, when it names them: a README of
// provenance stays true.
func dropFromReadme(root string, s *spec.Spec, writes []Write) []Write {
	var names []string
	for _, w := range writes {
		if w.Delete && path.Dir(w.Path) == s.Patches {
			names = append(names, path.Base(w.Path))
		}
	}
	if len(names) == 0 {
		return writes
	}
	prov := series.Readme(root, s.Patches, names)
	if len(prov) == 0 {
		return writes
	}
	var entries []series.Provenance
	file := ""
	for _, p := range prov {
		entries, file = append(entries, p), p.File
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
	if err != nil {
		return writes
	}
	return append(writes, Write{Path: file, Data: series.DropFromReadme(data, entries)})
}
