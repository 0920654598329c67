package fault

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestPinSourceExpansion: a Makefile whose 10 variables each reference the
// one before 8 times (8^10 bytes if expanded) is refused at once, exit 2
// naming file:line (the first variable over the bound); ARG TAG=v${V}-${V} refers to V twice, which is a valid
// pin (not "refers to itself").
func TestPinSourceExpansion(t *testing.T) {
	p := newProject(t, nil)
	var mk strings.Builder
	mk.WriteString("V0 = x\n")
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&mk, "V%d = %s\n", i, strings.Repeat(fmt.Sprintf("$(V%d)", i-1), 8))
	}
	write(t, filepath.Join(p.root, "Makefile"), mk.String())
	write(t, filepath.Join(p.root, "images/app/patchkit.yaml"),
		"upstream:\n  url: "+p.up.URL()+"\n  ref:\n    makefile-var: V10\n    makefile: ../../Makefile\npatches: patches/app\n")
	r := runGuarded(t, p.cmd("apply", "app", "--check"))
	if r.code != 2 || !strings.Contains(r.stderr, "Makefile:7: upstream.ref: V6 expands to more than") {
		t.Errorf("exponential Makefile: exit %d, stderr %q; want 2 and Makefile:7 (V6, the first over the bound)", r.code, r.stderr)
	}

	// v1.0.0 as v${V}.${Z}.${Z}: Z twice.
	write(t, filepath.Join(p.root, "images/app/Dockerfile"), "ARG V=1\nARG Z=0\nARG TAG=v${V}.${Z}.${Z}\nFROM scratch\n")
	write(t, filepath.Join(p.root, "images/app/patchkit.yaml"),
		"upstream:\n  url: "+p.up.URL()+"\n  ref:\n    dockerfile-arg: TAG\npatches: patches/app\n")
	r = runGuarded(t, p.cmd("apply", "app", "--check"))
	if strings.Contains(r.stderr, "refers to itself") || r.code != p.oracle(t, "v1.0.0") {
		t.Errorf("ARG TAG=v${V}.${Z}.${Z}: exit %d, stderr %q; want git's verdict at v1.0.0 (%d)", r.code, r.stderr, p.oracle(t, "v1.0.0"))
	}
}
