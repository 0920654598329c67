package obsolete

import (
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// TestCheckRealignedLinesNotOwn: a patch removes a nested map and a field from
// a gofmt-aligned struct literal, so it realigns the keys around them too.
// Upstream rewrites the literal its own way: the map and the field are gone,
// the other keys aligned to its own longest key. The realigned lines are no
// change of the patch's own (DESIGN.md: superseded by the lines the patch
// changes), so its significant lines are the removed ones, and upstream removed them:
// superseded, naming that
// commit (as kamaji-enable-gc at edge-24.9.2 in the corpus). Counted as the
// patch's own, the realigned lines that upstream aligned otherwise made it a
// conflict.
func TestCheckRealignedLinesNotOwn(t *testing.T) {
	head := "package x\n\nvar c = Config{\n"
	tail := "}\n\nfunc f() {}\n"
	pinBody := "\tDriver:        driver,\n" +
		"\tDNS:           dns,\n" +
		"\tDomain:        domain,\n" +
		"\tReconcilePeriod: zero,\n" +
		"\tEvictionHard: map[string]string{\n" +
		"\t\t\"imagefs.available\": \"0%\",\n" +
		"\t\t\"nodefs.available\":  \"0%\",\n" +
		"\t},\n" +
		"\tEvictionPressureTransitionPeriod: zero,\n" +
		"\tFileCheckFrequency:               zero,\n" +
		"\tImageGCHighThresholdPercent:      hundred,\n" +
		"\tRotateCertificates:               true,\n"
	ours := "\tDriver:                           driver,\n" +
		"\tDNS:                              dns,\n" +
		"\tDomain:                           domain,\n" +
		"\tReconcilePeriod:                  zero,\n" +
		"\tEvictionPressureTransitionPeriod: zero,\n" +
		"\tFileCheckFrequency:               zero,\n" +
		"\tRotateCertificates:               true,\n"
	// Upstream: the same two removals, a new longest key, its own alignment.
	theirs := "\tDriver:                                   driver,\n" +
		"\tDNS:                                      dns,\n" +
		"\tDomain:                                   domain,\n" +
		"\tReconcilePeriod:                          zero,\n" +
		"\tEvictionPressureTransitionPeriod:         zero,\n" +
		"\tFileCheckFrequency:                       zero,\n" +
		"\tRotateCertificates:                       true,\n" +
		"\tShutdownGracePeriodCriticalPodsDuration:  zero,\n"
	if strings.Count(ours, "\n") != 7 {
		t.Fatal("bad fixture")
	}
	r := gittest.New(t)
	r.Write("c.go", head+pinBody+tail)
	r.Release("initial", "v1.0.0")
	patch := makePatch(r, "v1.0.0", "main", "enable image gc", map[string]string{"c.go": head + ours + tail})
	r.Write("c.go", head+theirs+tail)
	land := r.Release("store kubelet defaults", "v1.1.0")

	patches := []string{patch}
	rep := scan{pin: "v1.0.0", releases: "v*", patches: patches}.run(t, r.URL())
	res := result(t, rep, 0, "v1.1.0")
	if res.Status != StatusSuperseded || res.Commit != land {
		t.Fatalf("v1.1.0: %s commit %s, want superseded by %s (%s)", res.Status, res.Commit, land, res.Evidence)
	}
	if lm := res.AddedLines; lm == nil || lm.Total != lm.Removed || lm.Total == 0 {
		t.Errorf("addedLines %+v: want only removed lines significant (the realigned ones are not)", lm)
	}
	oracle(t, r, rep, patches)
}
