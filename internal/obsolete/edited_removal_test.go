package obsolete

import (
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// TestCheckEditedRemovedLineNotGone: a patch removes a check and the import it
// needs. Upstream keeps both but edits the check's call (another first
// argument). The hunk that removes the check must not count as there by its
// lines: its removed line was edited, not removed, so nothing of the patch
// is upstream and it is a conflict, not partial naming the editing commit
// (as kamaji-disable-datastore-check-2024 at edge-26.2.4 in the corpus).
func TestCheckEditedRemovedLineNotGone(t *testing.T) {
	head := "package x\n\nimport (\n\t\"a\"\n\tutils \"x/utils\"\n\t\"z\"\n)\n\nfunc f() error {\n"
	spacer := numbered("\tstep", 12)
	check := "\tif err = utils.CheckExists(ctx, scheme, datastore); err != nil {\n\t\treturn err\n\t}\n\n"
	tail := "\tif err = g(); err != nil {\n\t\treturn err\n\t}\n\treturn nil\n}\n"
	base := head + spacer + check + tail
	ours := strings.Replace(strings.Replace(base, check, "", 1), "\tutils \"x/utils\"\n", "", 1)
	edited := strings.Replace(base, "CheckExists(ctx,", "CheckExists(context.Background(),", 1)

	r := gittest.New(t)
	r.Write("cmd.go", base)
	r.Release("initial", "v1.0.0")
	patch := makePatch(r, "v1.0.0", "main", "disable the datastore check", map[string]string{"cmd.go": ours})
	r.Write("cmd.go", edited)
	r.Release("check with a background context", "v1.1.0")

	patches := []string{patch}
	rep := scan{pin: "v1.0.0", releases: "v*", patches: patches}.run(t, r.URL())
	if res := result(t, rep, 0, "v1.1.0"); res.Status != StatusConflict {
		t.Fatalf("v1.1.0: %s commit %s, want conflict (%s)", res.Status, res.Commit, res.Evidence)
	}
	oracle(t, r, rep, patches)
}
