package obsolete_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNothingToScanFetchesNoHistory: a unit whose pin is the newest release
// has no ref to scan; on an empty cache obsolete-check lists the upstream's
// refs and fetches no object at all (as `git ls-remote`), and reports what a
// run on a cache holding the whole history reports. A unit with releases to
// scan then deepens the same cache as before.
func TestNothingToScanFetchesNoHistory(t *testing.T) {
	f := newFixture(t)
	f.addImage(t, "latest", "v1.2.0", map[string]string{"0001-greet.diff": patchGreet})

	code, quick, stderr := f.run(t, "obsolete-check", "latest", "-o", "json")
	if code != 0 {
		t.Fatalf("obsolete-check latest: exit %d, want 0\n%s%s", code, quick, stderr)
	}
	repo := cacheRepo(t, f.cache)
	if objs := gitLines(t, repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"); len(objs) != 0 {
		t.Errorf("the cache holds %d objects after a check with nothing to scan, want none: %v", len(objs), objs)
	}
	if !strings.Contains(quick, `"pin": "v1.2.0"`) || !strings.Contains(quick, strings.TrimSpace(f.up.Git("rev-parse", "v1.2.0^{commit}"))) {
		t.Errorf("report without the pin and its commit:\n%s", quick)
	}

	// The same unit on a cache with the whole history (which the unit
	// with releases to scan fetches) reports the same.
	if code, stdout, stderr := f.run(t, "obsolete-check", "img", "-o", "json"); code != 1 {
		t.Fatalf("obsolete-check img: exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(repo, "patchkit-shallow")); !os.IsNotExist(err) {
		t.Errorf("the cache is still partial after a unit with releases to scan (%v)", err)
	}
	if got, want := gitLines(t, repo, "rev-list", "--all"), gitLines(t, f.up.Dir, "rev-list", "--all"); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the cache holds commits %v, want the upstream's %v", got, want)
	}
	code, full, stderr := f.run(t, "obsolete-check", "latest", "-o", "json")
	if code != 0 || full != quick {
		t.Errorf("on the whole history: exit %d\n%s%s\nwant exit 0 and the report without history\n%s", code, full, stderr, quick)
	}
}

// TestNothingToScanOffline: after an online run answered a unit with
// nothing to scan from the upstream's listing (no history fetched), an
// offline run gives the same report from the listing recorded in the cache,
// with the upstream gone (nothing reaches it) and still no object fetched.
// Before any online listing, or with the recorded listing damaged, the
// offline run fails as it did before, naming the way out.
func TestNothingToScanOffline(t *testing.T) {
	f := newFixture(t)
	f.addImage(t, "latest", "v1.2.0", map[string]string{"0001-greet.diff": patchGreet})

	if code, stdout, stderr := f.run(t, "--offline", "obsolete-check", "latest", "-o", "json"); code != 2 || !strings.Contains(stderr, "without --offline") {
		t.Fatalf("offline on an empty cache: exit %d, want 2 naming --offline\n%s%s", code, stdout, stderr)
	}
	code, online, stderr := f.run(t, "obsolete-check", "latest", "-o", "json")
	if code != 0 {
		t.Fatalf("obsolete-check latest: exit %d, want 0\n%s%s", code, online, stderr)
	}
	gone := f.up.Dir + ".gone"
	must(t, os.Rename(f.up.Dir, gone))
	defer os.Rename(gone, f.up.Dir)

	code, offline, stderr := f.run(t, "--offline", "obsolete-check", "latest", "-o", "json")
	if code != 0 || offline != online {
		t.Errorf("offline after the listing: exit %d\n%s%s\nwant exit 0 and the online report\n%s", code, offline, stderr, online)
	}
	repo := cacheRepo(t, f.cache)
	if objs := gitLines(t, repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"); len(objs) != 0 {
		t.Errorf("the cache holds %d objects after offline runs with nothing to scan, want none: %v", len(objs), objs)
	}

	entries, _ := filepath.Glob(filepath.Join(repo, "patchkit-listing", "*"))
	if len(entries) != 1 {
		t.Fatalf("listing memo entries %v, want one", entries)
	}
	data, err := os.ReadFile(entries[0])
	must(t, err)
	must(t, os.WriteFile(entries[0], data[:len(data)-1], 0o644))
	if code, stdout, stderr := f.run(t, "--offline", "obsolete-check", "latest", "-o", "json"); code != 2 || !strings.Contains(stderr, "without --offline") {
		t.Errorf("offline with a damaged listing: exit %d, want 2 naming --offline\n%s%s", code, stdout, stderr)
	}
}
