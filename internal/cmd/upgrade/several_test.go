package upgrade_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/cmd/cmdtest"
	rootcmd "github.com/patchkit/patchkit/internal/cmd/root"
	"github.com/patchkit/patchkit/internal/gittest"
)

// TestUpgradeSeveral: upgrade over several release branches in one run
// upgrades each on its own (its plan, its write): -o json is an array of
// their objects, a unit that fails is an entry with its error and the
// others are still written; the exit code is the worst. One IMAGE keeps
// its one object.
func TestUpgradeSeveral(t *testing.T) {
	root, cache, upstream := eksMinors(t, "1-30", "1-31", "1-32")
	pk := func(args ...string) (int, string, string) {
		return cmdtest.Run(t, rootcmd.NewCmdRoot, append([]string{"--root", root, "--cache-dir", cache}, args...)...)
	}
	code, out, errOut := pk("-o", "json", "upgrade", "projects/o/r/1-30", "projects/o/r/1-31", "projects/o/r/1-99", "--to", "v1.1.0")
	if code != 2 {
		t.Errorf("upgrade of two units and a missing one = %d, want 2 (the worst)\n%s", code, errOut)
	}
	var res []struct {
		Image, Error string
		OK           bool
		ExitCode     int
		Pin          struct{ File, To string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res) != 3 {
		t.Fatalf("upgrade -o json of 3 units = %v, want an array of 3\n%s", err, out)
	}
	for i, u := range []string{"1-30", "1-31"} {
		if r := res[i]; r.Image != "projects/o/r/"+u || !r.OK || r.Pin.File != "projects/o/r/"+u+"/GIT_TAG" || r.Pin.To != "v1.1.0" {
			t.Errorf("upgrade -o json [%d] = %+v, want %s upgraded to v1.1.0", i, r, u)
		}
		if got := gittest.ReadFile(t, root, "projects/o/r/"+u+"/GIT_TAG"); got != "v1.1.0\n" {
			t.Errorf("%s/GIT_TAG = %q, want v1.1.0", u, got)
		}
		if err := gitAm(t, upstream, "v1.1.0", root+"/projects/o/r/"+u); err != nil {
			t.Errorf("git am of %s's series at v1.1.0: %v", u, err)
		}
	}
	if r := res[2]; r.Image != "projects/o/r/1-99" || r.ExitCode != 2 || !strings.Contains(r.Error, "no image") {
		t.Errorf("upgrade -o json [2] = %+v, want the missing unit's error", r)
	}
	if got := gittest.ReadFile(t, root, "projects/o/r/1-32/GIT_TAG"); got != "v1.0.0\n" {
		t.Errorf("1-32, not named, moved: GIT_TAG %q", got)
	}

	// Text: each unit, the up-to-date one included.
	code, out, errOut = pk("upgrade", "projects/o/r/1-30", "projects/o/r/1-32", "--dry-run")
	if code != 0 || !strings.Contains(out, "projects/o/r/1-30: no newer upstream release than v1.1.0") || !strings.Contains(out, "projects/o/r/1-32: would upgrade (dry run, nothing written) v1.0.0") {
		t.Errorf("upgrade of two units, text = %d\n%s%s", code, out, errOut)
	}
	// One IMAGE: one object.
	code, out, _ = pk("-o", "json", "upgrade", "projects/o/r/1-32", "--dry-run")
	if code != 0 || !strings.HasPrefix(out, "{") {
		t.Errorf("upgrade -o json of one unit = %d, want one object:\n%s", code, out)
	}
}

// TestRefreshSeveral: refresh over several units rewrites each one's
// series (the PATCH names in each), -o json an array; one IMAGE keeps its
// object.
func TestRefreshSeveral(t *testing.T) {
	root, cache, _ := eksMinors(t, "1-30", "1-31")
	pk := func(args ...string) (int, string, string) {
		return cmdtest.Run(t, rootcmd.NewCmdRoot, append([]string{"--root", root, "--cache-dir", cache}, args...)...)
	}
	const name = "0001-Fix-the-greeting.patch"
	before := gittest.ReadFile(t, root, "projects/o/r/1-30/patches/"+name)
	code, out, errOut := pk("-o", "json", "refresh", "projects/o/r/1-30", "projects/o/r/1-31", name)
	if code != 0 {
		t.Fatalf("refresh of two units = %d\n%s%s", code, out, errOut)
	}
	var res []struct {
		Image   string
		Patches []struct {
			File    string
			Changed bool
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res) != 2 {
		t.Fatalf("refresh -o json of 2 units = %v, want an array of 2\n%s", err, out)
	}
	for i, u := range []string{"1-30", "1-31"} {
		dir := "projects/o/r/" + u
		if r := res[i]; r.Image != dir || len(r.Patches) != 1 || r.Patches[0].File != dir+"/patches/"+name || !r.Patches[0].Changed {
			t.Errorf("refresh -o json [%d] = %+v, want %s's %s rewritten", i, r, dir, name)
		}
		if got := gittest.ReadFile(t, root, dir+"/patches/"+name); got == before || strings.Contains(got, "\n-- \n") {
			t.Errorf("%s/patches/%s not rewritten (its signature kept)", dir, name)
		}
		if got := gittest.ReadFile(t, root, dir+"/patches/0002-Add-util.patch"); !strings.Contains(got, "\n-- \n") {
			t.Errorf("%s/patches/0002-Add-util.patch rewritten, not named", dir)
		}
	}
	code, out, _ = pk("-o", "json", "refresh", "projects/o/r/1-30")
	if code != 0 || !strings.HasPrefix(out, "{") {
		t.Errorf("refresh -o json of one unit = %d, want one object:\n%s", code, out)
	}
}
