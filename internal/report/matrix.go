package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/patchkit/patchkit/internal/matrix"
)

// RenderUnbuilt writes, for the matrix, each selected unit that no build
// line builds (err is their matrix.UnbuiltError, whose lines name them) and
// each one the repository acknowledges as unbuilt, on w (stderr: the
// matrix's stdout is its JSON). With -o github each unbuilt unit is also an
// ::error annotation on the build entry's Makefile, each acknowledged one a
// ::notice, on out after the JSON line (workflow commands never go to
// stderr).
func RenderUnbuilt(w, out io.Writer, f Format, makefile string, unbuilt, acknowledged []matrix.Unbuilt, err error) error {
	var b, gh strings.Builder
	if err != nil {
		for _, l := range strings.Split(err.Error(), "\n") {
			b.WriteString("patchkit: " + l + "\n")
		}
		if f == GitHub {
			for _, u := range unbuilt {
				fmt.Fprintf(&gh, "::error file=%s,line=1,title=%s::%s\n", ghProp(makefile), ghProp("patchkit matrix: unbuilt unit"),
					ghEscape(fmt.Sprintf("%s has a spec, but nothing builds it: add `%s`, or acknowledge it under unbuilt: in .patchkit.yaml", u.Unit.Dir, u.Want)))
			}
		}
	}
	for _, u := range acknowledged {
		fmt.Fprintf(&b, "patchkit: note: %s is not built (%s: %s)\n", u.Unit.Dir, u.Where, u.Reason)
		if f == GitHub {
			fmt.Fprintf(&gh, "::notice title=%s::%s\n", ghProp("patchkit matrix: unbuilt unit"), ghEscape(fmt.Sprintf("%s is not built: %s", u.Unit.Dir, u.Reason)))
		}
	}
	if _, werr := io.WriteString(w, b.String()); werr != nil {
		return werr
	}
	_, werr := io.WriteString(out, gh.String())
	return werr
}
