package verify

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/patchkit/patchkit/internal/series"
)

// readmeNames are the files of a patch directory that may record where
// each patch comes from, instead of the patches' headers.
var readmeNames = []string{"README.md", "README", "README.txt"}

// Provenance is what a README of the patch directory says about one patch.
type Provenance struct {
	// Where is README:line of the entry that names the patch.
	Where string
	// Text is the entry, its lines joined.
	Text string
	// Lines are the entry's lines, as written.
	Lines []string
}

// ReadmeProvenance reads the README of the patch directory dir (relative
// to root) and returns, for each of names (patch file names) that it names,
// the entry that does: from the line naming it to the next blank line,
// list item, heading or line naming another patch.
func ReadmeProvenance(root, dir string, names []string) map[string]Provenance {
	for _, n := range readmeNames {
		rel := path.Join(dir, n)
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil || len(data) > 1<<20 {
			continue
		}
		lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
		names := append([]string(nil), names...)
		out := map[string]Provenance{}
		naming := func(l string) string {
			for _, name := range names {
				if strings.Contains(l, name) {
					return name
				}
			}
			return ""
		}
		for i := 0; i < len(lines); i++ {
			name := naming(lines[i])
			if name == "" {
				continue
			}
			if _, done := out[name]; done {
				continue
			}
			text := []string{strings.TrimSpace(lines[i])}
			for j := i + 1; j < len(lines); j++ {
				t := strings.TrimSpace(lines[j])
				if t == "" || strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || strings.HasPrefix(t, "#") || naming(t) != "" {
					break
				}
				text = append(text, t)
			}
			out[name] = Provenance{Where: fmt.Sprintf("%s:%d", rel, i+1), Text: strings.Join(text, " "), Lines: text}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// readmeProvenance gives each patch whose header says nothing of its
// origin what the patch directory's README says: the upstream commit it
// names (the backport check then compares with it) and its summary. It
// returns where each was read.
func (v *verifier) readmeProvenance() map[string]Provenance {
	var names []string
	for _, e := range v.entries {
		if e.patch != nil && noOrigin(e.patch.Header) {
			names = append(names, e.patch.Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	prov := ReadmeProvenance(v.root, v.im.Spec.Patches, names)
	for _, e := range v.entries {
		pr, ok := prov[e.name]
		if e.patch == nil || !ok {
			continue
		}
		h := &e.patch.Header
		if rh, err := series.ParseHeader([]byte(strings.Join(pr.Lines, "\n")+"\n"), pr.Where); err == nil && rh.Origin.Commit != "" {
			h.Origin, h.Origins = rh.Origin, rh.Origins
			h.Origin.Line = 0
		}
		if h.Subject == "" {
			s := pr.Text
			if _, after, ok := strings.Cut(s, e.name); ok {
				s = strings.TrimLeft(after, "`*_:;,- ")
			}
			if i := strings.IndexAny(s, ";."); i > 0 {
				s = s[:i]
			}
			h.Subject = strings.TrimSpace(s)
		}
	}
	return prov
}

func noOrigin(h series.Header) bool {
	if h.Origin.Kind != "" || h.Origin.Commit != "" {
		return false
	}
	for _, f := range h.Fields {
		if strings.EqualFold(f.Key, "origin") {
			return false
		}
	}
	return true
}
