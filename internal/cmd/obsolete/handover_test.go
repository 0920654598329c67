package obsolete_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// TestOnlineRunAsOffline: an online run over several units, whose units
// take the caches Prefetch opened and fetched and run while it lists the
// next upstreams, reports what the same run does offline, where every
// unit prepares its own cache one after another: with and without
// --write, which here rewrites a patch file two units on two upstreams
// share (img and img2), and with a unit that fails alone (whose error, an upstream that
// cannot be reached online and a cache never filled offline, is left
// out of the comparison and told once). The caches are warm and upstream
// has not moved, so the online run fetches nothing.
func TestOnlineRunAsOffline(t *testing.T) {
	f := newFixture(t)
	// img2 and img3 are on a second upstream (a copy of the first); img2
	// shares img's patches.
	other := filepath.Join(t.TempDir(), "other.git")
	if _, stderr, err := gittest.Run(f.up.Dir, nil, "clone", "-q", "--bare", f.up.Dir, other); err != nil {
		t.Fatalf("git clone: %v\n%s", err, stderr)
	}
	f.addImage(t, "img2", "v1.0.0", nil)
	f.addImage(t, "img3", "v1.1.0", map[string]string{"0001-tool.patch": patchTool})
	for name, patches := range map[string]string{"img2": "patches/img", "img3": "patches/img3"} {
		spec := filepath.Join(f.root, "images", name, "patchkit.yaml")
		data, err := os.ReadFile(spec)
		must(t, err)
		text := strings.Replace(string(data), f.up.URL(), "file://"+other, 1)
		must(t, os.WriteFile(spec, []byte(strings.Replace(text, "patches/"+name, patches, 1)), 0o644))
	}
	f.addImage(t, "gone", "v1.0.0", map[string]string{"0001-greet.diff": patchGreet})
	spec := filepath.Join(f.root, "images", "gone", "patchkit.yaml")
	data, err := os.ReadFile(spec)
	must(t, err)
	must(t, os.WriteFile(spec, []byte(strings.Replace(string(data), f.up.URL(), "file://"+filepath.Join(t.TempDir(), "no-such-upstream"), 1)), 0o644))
	if code, out, errOut := f.run(t, "-o", "json", "obsolete-check"); code != 2 || !strings.Contains(out, `"image": "img3"`) {
		t.Fatalf("warming the caches: exit %d\n%s%s", code, out, errOut)
	}

	for _, args := range [][]string{{"obsolete-check"}, {"obsolete-check", "--write"}} {
		var outs, patches [2]string
		for i, offline := range []bool{false, true} {
			root := t.TempDir()
			must(t, os.CopyFS(root, os.DirFS(f.root)))
			flags := []string{"--root", root, "--cache-dir", f.cache, "-o", "json"}
			if offline {
				flags = append(flags, "--offline")
			}
			code, out, errOut := runPatchkit(t, append(flags, args...)...)
			if code != 2 || strings.Count(errOut, "patchkit: gone: ") != 1 || strings.Count(out, `"error": `) != 1 {
				t.Fatalf("%v offline=%v: exit %d, want 2 with gone failed alone, told once\n%s%s", args, offline, code, out, errOut)
			}
			var kept []string
			for _, line := range strings.Split(out, "\n") {
				if !strings.Contains(line, `"error": `) {
					kept = append(kept, line)
				}
			}
			outs[i] = strings.ReplaceAll(strings.Join(kept, "\n"), root, "ROOT")
			patches[i] = gittest.ReadFile(t, root, "patches/img/0001-greet.diff") + gittest.ReadFile(t, root, "patches/img3/0001-tool.patch")
		}
		if outs[0] != outs[1] {
			t.Errorf("%v online reports\n%s\noffline\n%s", args, outs[0], outs[1])
		}
		if patches[0] != patches[1] {
			t.Errorf("%v online leaves the patches\n%s\noffline\n%s", args, patches[0], patches[1])
		}
		if len(args) == 2 && !strings.Contains(patches[0], "Applied-Upstream: v1.1.0") {
			t.Errorf("--write wrote no Applied-Upstream header:\n%s", patches[0])
		}
	}
}
