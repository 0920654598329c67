package chart

import (
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/patchkit/patchkit/internal/series"
)

// staleNote says, for a patch nothing applies, when the files it patches
// exist nowhere: neither under the package (pkg) nor under the root, with
// any strip of 0 to 4 leading components. Such a patch is stale (left
// behind when its chart moved, say), which is worth more than "nothing
// applies it". It returns "" when a file is found or the patch does not
// parse.
func staleNote(root, pkg, patch string) string {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(patch)))
	if err != nil {
		return ""
	}
	secs, err := parseGNU(patch, data)
	if err != nil || len(secs) == 0 {
		return ""
	}
	first := ""
	for _, sec := range secs {
		name := sec.oldName
		if sec.oldGone || name == "/dev/null" {
			continue // a creation names no file that must exist
		}
		if first == "" {
			first = name
			if r, ok := series.StripGNU(name, 1); ok && sec.gitDiff {
				first = r
			}
		}
		for strip := 0; strip <= 4; strip++ {
			rel, ok := series.StripGNU(name, strip)
			if !ok {
				break
			}
			for _, base := range []string{pkg, "."} {
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(path.Join(base, rel)))); err == nil {
					return ""
				}
			}
		}
	}
	if first == "" {
		return ""
	}
	return fmt.Sprintf(" (and the files it patches exist nowhere in the repository, %s among them: a stale patch? remove it or vendor what it patches)", first)
}
