package series

import (
	"path"
	"strings"
)

// StripGit removes n leading components from a patch's file name as
// `git apply -p<n>` does (apply.c find_name_common, squash_slash): every
// slash ends a component, so "a//b/c" has an empty second one and -p2
// leaves "b/c"; the runs of slashes left in the result are then squashed to
// one ("a/b//c" -p1 is "b/c"). ok is false when name has fewer than n
// slashes or nothing is left. A result may start with a slash ("a//b" -p1
// is "/b"), which git rejects as outside the tree and so do the callers.
func StripGit(name string, n int) (string, bool) {
	for ; n > 0; n-- {
		i := strings.IndexByte(name, '/')
		if i < 0 {
			return "", false
		}
		name = name[i+1:]
	}
	return squashSlashes(name), name != ""
}

// StripGNU removes n leading components from a patch's file name as GNU
// `patch -p<n>` does (util.c fetchname): a run of slashes is one separator,
// so "a//b/c" -p1 is "b/c" and -p2 is "c". The runs of slashes left in the
// result are squashed, naming the file GNU patch opens ("a/b//c" -p1 opens
// b/c). n < 0 (no -p) keeps the base name. ok is false when name has too
// few components or nothing is left.
func StripGNU(name string, n int) (string, bool) {
	if n < 0 {
		return path.Base(name), true
	}
	for ; n > 0; n-- {
		i := strings.IndexByte(name, '/')
		if i < 0 {
			return "", false
		}
		name = strings.TrimLeft(name[i+1:], "/")
	}
	return squashSlashes(name), name != ""
}

// squashSlashes replaces each run of slashes in name with one.
func squashSlashes(name string) string {
	if !strings.Contains(name, "//") {
		return name
	}
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); i++ {
		if name[i] == '/' && i > 0 && name[i-1] == '/' {
			continue
		}
		b.WriteByte(name[i])
	}
	return b.String()
}
