package status_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/cmd/cmdtest"
	"github.com/patchkit/patchkit/internal/cmd/root"
	"github.com/patchkit/patchkit/internal/gittest"
)

// TestStatusReleaseBranches is issue V's release branches in status: an
// upstream with two minors and a patch release (v1.0.0, v1.0.1, v1.1.0),
// and units of eks-distro's shape: 1-30 and 1-31 carry the same series at
// v1.0.0 (shown once, in text and markdown; a group in json), 1-29 another
// series at v1.0.0, 1-32 the same series at v1.1.0. Each unit pinned at
// v1.0.0 is behind v1.0.1, its minor line's newest patch release; 1-32 is
// the newest of its line.
func TestStatusReleaseBranches(t *testing.T) {
	up := gittest.New(t)
	for _, n := range "abc" {
		up.Write(string(n)+".txt", file(string(n), false))
	}
	up.Release("v1", "v1.0.0")
	up.Write("c.txt", file("c", true))
	up.Release("v1.0.1", "v1.0.1")
	up.Write("b.txt", "b0\n"+file("b", false))
	up.Release("v1.1", "v1.1.0")

	d := gittest.New(t)
	spec := "upstream:\n  url: " + up.URL() + "\n  ref:\n    file: ./GIT_TAG\n  releases: \"v1.*\"\npatches: ./patches\n"
	for b, pin := range map[string]string{"1-29": "v1.0.0", "1-30": "v1.0.0", "1-31": "v1.0.0", "1-32": "v1.1.0"} {
		dir := "projects/o/r/" + b + "/"
		d.Write(dir+"patchkit.yaml", spec)
		d.Write(dir+"GIT_TAG", pin+"\n")
		d.Write(dir+"patches/0001-a.patch", patch("Subject: fix a\nOrigin: vendor\nForwarded: not-needed\n", "a"))
		if b == "1-29" {
			d.Write(dir+"patches/0002-b.patch", patch("Subject: fix b\nOrigin: vendor\nForwarded: not-needed\n", "b"))
		}
	}
	d.Commit("release branches")
	cache := t.TempDir()
	run := func(args ...string) (int, string, string) {
		return cmdtest.RunAll(t, root.NewCmdRoot, append([]string{"--root", d.Dir, "--cache-dir", cache}, args...)...)
	}

	code, out, errOut := run("-o", "json", "status")
	if code != 0 {
		t.Fatalf("status -o json = %d\n%s%s", code, out, errOut)
	}
	var rep struct {
		Units []struct {
			Dir, Pin, LineNewest, Series string
			LineBehind                   int
		}
		Shared []struct {
			Units   []string
			Pin     string
			Patches int
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, out)
	}
	if len(rep.Shared) != 1 || strings.Join(rep.Shared[0].Units, " ") != "projects/o/r/1-30 projects/o/r/1-31" || rep.Shared[0].Pin != "v1.0.0" || rep.Shared[0].Patches != 1 {
		t.Errorf("status shared = %+v, want 1-30 and 1-31, 1 patch at v1.0.0", rep.Shared)
	}
	want := map[string]string{"1-29": "v1.0.1 1", "1-30": "v1.0.1 1", "1-31": "v1.0.1 1", "1-32": "v1.1.0 0"}
	for _, u := range rep.Units {
		b := strings.TrimPrefix(u.Dir, "projects/o/r/")
		if got := u.LineNewest + " " + string(rune('0'+u.LineBehind)); got != want[b] {
			t.Errorf("status %s: lineNewest, lineBehind = %s, want %s", b, got, want[b])
		}
	}

	code, out, errOut = run("status")
	if code != 0 {
		t.Fatalf("status = %d\n%s%s", code, out, errOut)
	}
	for _, s := range []string{
		"projects/o/r/1-30, 1-31: the same 1 patch at v1.0.0\n  pin v1.0.0, newest v1.1.0, 2 releases behind; v1.0.0 behind v1.0.1, the newest v1.0 release\n",
		"1-29 (projects/o/r/1-29): pin v1.0.0, newest v1.1.0, 2 releases behind, 2 patches; v1.0.0 behind v1.0.1, the newest v1.0 release\n",
		"1-32 (projects/o/r/1-32): pin v1.1.0, newest v1.1.0, up to date, 1 patch\n",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("status text lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "projects/o/r/1-31/patches/0001-a.patch") {
		t.Errorf("status text shows 1-31's series, which is 1-30's:\n%s", out)
	}

	code, out, errOut = run("-o", "markdown", "status")
	if code != 0 {
		t.Fatalf("status -o markdown = %d\n%s%s", code, out, errOut)
	}
	for _, s := range []string{
		"### `projects/o/r/1-30`, `projects/o/r/1-31`: the same 1 patch at `v1.0.0` → `v1.1.0`",
		"| `projects/o/r/1-31` | `v1.0.0` | `v1.1.0` | 2 | `v1.0.1` (1 behind) | 1 (the same as `projects/o/r/1-30`) |",
		"| `projects/o/r/1-32` | `v1.1.0` | `v1.1.0` | 0 | up to date | 1 |",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("status markdown lacks %q:\n%s", s, out)
		}
	}
	if strings.Count(out, "### ") != 4 { // three sections and the history
		t.Errorf("status markdown has %d sections, want 4 (1-30 and 1-31 shown once):\n%s", strings.Count(out, "### "), out)
	}
}
