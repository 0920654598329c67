package spec

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// IsGlob reports whether an input pattern has glob characters (path.Match).
func IsGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// checkPattern checks one input pattern: a repository path or a path.Match
// glob that stays inside root. A plain path must exist (a typo would
// otherwise never match); a glob may match nothing today.
func checkPattern(root, p string) error {
	if strings.TrimSpace(p) == "" {
		return errors.New("empty path")
	}
	if strings.Contains(p, "**") {
		return fmt.Errorf("%q: ** is not supported: a directory already matches everything under it", p)
	}
	if _, err := path.Match(p, ""); err != nil {
		return fmt.Errorf("bad glob %q: %v", p, err)
	}
	if err := inRepo(root, p); err != nil {
		return err
	}
	if IsGlob(p) || root == "" {
		return nil
	}
	if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(path.Clean(p)))); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%q does not exist (a glob may match nothing; a path must exist)", p)
		}
		return fmt.Errorf("%q: %v", p, err)
	}
	return nil
}

// validateInputs checks inputs[]: each a path or glob inside the repository.
func (s *Spec) validateInputs(root string) error {
	for i, p := range s.Inputs {
		if err := checkPattern(root, p); err != nil {
			return s.errf(fmt.Sprintf("inputs[%d]", i), "%v", err)
		}
	}
	return nil
}
