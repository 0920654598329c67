package series

import (
	"strconv"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/tree"
)

// checkPaths refuses a patch that names a path outside the tree: absolute
// paths, ".." elements and .git/ targets. It reads the names both as
// go-gitdiff parsed them and as the file header lines spell them, since the
// parser folds "b//etc/x" into "etc/x" and a traditional diff keeps "/etc/x".
func checkPaths(path string, lines *lineTable, start int, files []*gitdiff.File, fileLines []int) error {
	for k, f := range files {
		line := fileLines[k]
		for _, name := range []string{f.OldName, f.NewName} {
			if name == "" {
				continue
			}
			if err := tree.Clean(name); err != nil {
				return diag.Inputf(path, line, "unsafe path: %v", err)
			}
		}
		end := lines.len()
		if k+1 < len(files) {
			end = fileLines[k+1] - 1
		}
		gitStyle := strings.HasPrefix(lines.at(line-1), "diff --git ")
		for i := line - 1; i < end && i < lines.len(); i++ {
			l := strings.TrimRight(lines.at(i), "\r\n")
			if strings.HasPrefix(l, "@@") || strings.HasPrefix(l, "GIT binary patch") {
				break
			}
			var name string
			prefixed := false
			switch {
			case strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ "):
				name, prefixed = headerName(l[4:]), gitStyle
			case strings.HasPrefix(l, "rename from "), strings.HasPrefix(l, "copy from "):
				name = headerName(l[strings.Index(l, "from ")+5:])
			case strings.HasPrefix(l, "rename to "), strings.HasPrefix(l, "copy to "):
				name = headerName(l[strings.Index(l, "to ")+3:])
			default:
				continue
			}
			if name == "/dev/null" || name == "" {
				continue
			}
			if prefixed {
				if j := strings.IndexByte(name, '/'); j >= 0 {
					name = name[j+1:]
				}
			}
			if err := tree.Clean(name); err != nil {
				return diag.Inputf(path, i+1, "unsafe path: %v", err)
			}
		}
	}
	return nil
}

// headerName takes the name from the rest of a file header line: unquoted
// when git quoted it, and without a trailing tab-separated timestamp.
func headerName(s string) string {
	if strings.HasPrefix(s, `"`) {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
		if end := strings.LastIndexByte(s, '"'); end > 0 {
			if u, err := strconv.Unquote(s[:end+1]); err == nil {
				return u
			}
		}
		return s
	}
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	return s
}
