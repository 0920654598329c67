package series

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
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
	// File is the README relative to root; First and Last are the 1-based
	// lines of the entry.
	File        string
	First, Last int
}

// Readme reads the README of the patch directory dir (relative
// to root) and returns, for each of names (patch file names) that it names,
// the entry that does: from the line naming it to the next blank line,
// list item, heading or line naming another patch.
func Readme(root, dir string, names []string) map[string]Provenance {
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
			last := i + 1
			for j := i + 1; j < len(lines); j++ {
				t := strings.TrimSpace(lines[j])
				if t == "" || strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || strings.HasPrefix(t, "#") || naming(t) != "" {
					break
				}
				text = append(text, t)
				last = j + 1
			}
			out[name] = Provenance{Where: fmt.Sprintf("%s:%d", rel, i+1), Text: strings.Join(text, " "), Lines: text, File: rel, First: i + 1, Last: last}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// DropFromReadme returns the README data with the entries of dropped (as
// Readme found them, all in one README) removed, and the blank line after
// each when it leaves two in a row.
func DropFromReadme(data []byte, dropped []Provenance) []byte {
	lines := strings.SplitAfter(string(data), "\n")
	drop := map[int]bool{}
	for _, p := range dropped {
		for l := p.First; l <= p.Last; l++ {
			drop[l-1] = true
		}
	}
	var b strings.Builder
	prevBlank := false
	for i, l := range lines {
		if drop[i] {
			continue
		}
		blank := strings.TrimSpace(l) == ""
		if blank && prevBlank && l != "" {
			continue
		}
		prevBlank = blank
		b.WriteString(l)
	}
	return []byte(b.String())
}
