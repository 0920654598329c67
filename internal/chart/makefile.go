package chart

import "github.com/patchkit/patchkit/internal/buildfile"

// MakefileInputs are the files a package Makefile's recipes come from: the
// Makefile and the files it includes (a shared %-update rule), relative
// to the root. A Makefile that cannot be read gives just itself.
func MakefileInputs(root, rel string) []string {
	m, err := buildfile.ReadMakeTree(root, rel)
	if err != nil {
		return []string{rel}
	}
	return m.Files
}
