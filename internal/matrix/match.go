package matrix

import (
	"path"
	"strings"
)

// Match reports whether the repository path p matches pattern: a path or a
// path.Match glob, where a pattern that names a directory matches every
// path under it ("packages/library", "packages/library/", "hack/*.mk").
func Match(pattern, p string) bool {
	pattern = strings.TrimSuffix(strings.TrimPrefix(pattern, "./"), "/")
	if pattern == "" || pattern == "." {
		return true
	}
	for q := p; q != "." && q != "/" && q != ""; q = path.Dir(q) {
		if ok, _ := path.Match(pattern, q); ok {
			return true
		}
	}
	return false
}

// matchAny returns the first pattern that p matches, or "".
func matchAny(patterns []string, p string) (string, bool) {
	for _, pat := range patterns {
		if Match(pat, p) {
			return pat, true
		}
	}
	return "", false
}
