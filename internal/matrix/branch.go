package matrix

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
)

// branchFileRE finds a Makefile variable read from a release branch's file:
// `VAR ?= $(shell cat $(BRANCH)/FILE)`.
var branchFileRE = regexp.MustCompile(`(?m)^[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)[ \t]*(?:\?|::|:)?=[ \t]*\$\(shell[ \t]+cat[ \t]+\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]/([^\s()$]+)[ \t]*\)[ \t]*$`)

// BranchBuild is how a release-branch unit is built: the Makefile of the
// directory above it, with the branch variable set to the unit's directory
// name (aws/eks-distro: `make -C projects/coredns/coredns RELEASE_BRANCH=1-30`).
type BranchBuild struct {
	// Makefile is the project Makefile, relative to the root; Line the line
	// that reads the branch's file.
	Makefile string
	Line     int
	// Var is the branch variable, Branch its value.
	Var, Branch string
	// File is the branch's file the Makefile reads (GIT_TAG).
	File string
}

// Text is the command that builds the unit.
func (b BranchBuild) Text() string {
	return fmt.Sprintf("make -C %s %s=%s", path.Dir(b.Makefile), b.Var, b.Branch)
}

// BranchBuildOf reports whether the unit at dir (relative to root) is a
// release branch of the Makefile above it: that Makefile reads a variable
// from a file of $(VAR)/, and dir holds that file.
func BranchBuildOf(root, dir string) (BranchBuild, bool) {
	parent := path.Dir(dir)
	if parent == "." || parent == dir {
		return BranchBuild{}, false
	}
	mf := makefileOf(root, parent)
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(mf)))
	if err != nil {
		return BranchBuild{}, false
	}
	for _, m := range branchFileRE.FindAllSubmatchIndex(data, -1) {
		file := string(data[m[6]:m[7]])
		if st, err := os.Stat(filepath.Join(root, filepath.FromSlash(dir), filepath.FromSlash(file))); err == nil && st.Mode().IsRegular() {
			return BranchBuild{
				Makefile: mf, Line: 1 + bytes.Count(data[:m[0]], []byte("\n")),
				Var: string(data[m[4]:m[5]]), Branch: path.Base(dir), File: file,
			}, true
		}
	}
	return BranchBuild{}, false
}
