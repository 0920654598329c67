package obsolete

import (
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// TestCheckRewrittenNeedsMostAddedLines: a commit lands one small hunk of a
// patch verbatim and rewrites the region of its large hunk, without any of
// that hunk's added lines. DESIGN.md's superseded needs upstream to have
// added most of the patch's added lines as well: here it added one of seven,
// so the patch is partial (the large hunk is still to carry or drop by
// review), never superseded, which would drop it unread. With most of the
// added lines there, the same shape is superseded.
func TestCheckRewrittenNeedsMostAddedLines(t *testing.T) {
	base := "package x\n\nfunc a() int {\n\treturn 1\n}\n\n// spacer 1\n// spacer 2\n// spacer 3\n// spacer 4\n\nfunc b(n int) int {\n\tif n > 0 {\n\t\treturn n\n\t}\n\treturn 0\n}\n"
	ours := strings.Replace(base, "\treturn 1\n", "\treturn 2\n", 1)
	ours = strings.Replace(ours, "\tif n > 0 {\n\t\treturn n\n\t}\n", "\tif n > 0 {\n\t\tlog(\"one\")\n\t\tlog(\"two\")\n\t\tlog(\"three\")\n\t\tlog(\"four\")\n\t\tlog(\"five\")\n\t\treturn n * 2\n\t}\n", 1)
	// Upstream: hunk 1 verbatim; b rewritten another way, none of our lines.
	few := strings.Replace(base, "\treturn 1\n", "\treturn 2\n", 1)
	few = strings.Replace(few, "\tif n > 0 {\n\t\treturn n\n\t}\n\treturn 0\n", "\tswitch {\n\tcase n < 0:\n\t\treturn -n\n\t}\n\treturn n\n", 1)
	// Upstream: hunk 1 verbatim; b rewritten keeping most of our lines.
	most := strings.Replace(ours, "\t\treturn n * 2\n\t}\n\treturn 0\n", "\t\treturn n + n\n\t}\n\treturn -1\n", 1)

	r := gittest.New(t)
	r.Write("few.go", base)
	r.Write("most.go", base)
	r.Release("initial", "v1.0.0")
	patches := []string{
		makePatch(r, "v1.0.0", "main", "fix a and b", map[string]string{"few.go": ours}),
		makePatch(r, "v1.0.0", "main", "fix a and b", map[string]string{"most.go": ours}),
	}
	r.Write("few.go", few)
	r.Write("most.go", most)
	land := r.Release("fix a; rework b", "v1.1.0")

	rep := scan{pin: "v1.0.0", releases: "v*", patches: patches}.run(t, r.URL())
	if got, want := statuses(rep, 0), "v1.1.0=partial"; got != want {
		t.Errorf("few added lines upstream: statuses = %q, want %q (%s)", got, want, result(t, rep, 0, "v1.1.0").Evidence)
	}
	if res := result(t, rep, 0, "v1.1.0"); res.Commit != land {
		t.Errorf("few added lines upstream: commit %s, want the landing commit %s", res.Commit, land)
	}
	if p := rep.Patches[0]; p.ObsoletedBy != "" {
		t.Errorf("few added lines upstream: obsoletedBy %q, want none", p.ObsoletedBy)
	}
	if got, want := statuses(rep, 1), "v1.1.0=superseded"; got != want {
		t.Errorf("most added lines upstream: statuses = %q, want %q (%s)", got, want, result(t, rep, 1, "v1.1.0").Evidence)
	}
}
