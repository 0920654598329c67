package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/gittest"
)

// monoUnit is one image unit of the generated monorepo: its directory
// (cozystack's packages/<group>/<pkg>/images/<img>), its upstream's shape,
// its series and its pin.
type monoUnit struct {
	dir     string
	shape   obsShape
	patches int
	// pin is the pin's release index; -1 is the newest release (nothing to
	// scan).
	pin int
	// makefile says the pin is read from the package's Makefile (as
	// `patchkit init` writes it for cozystack), not copied into the spec.
	makefile bool

	url  string   // the upstream, served by git daemon on loopback
	tags []string // its releases, oldest first
}

// pinTag is the unit's pin.
func (u *monoUnit) pinTag() string {
	if u.pin < 0 {
		return u.tags[len(u.tags)-1]
	}
	return u.tags[u.pin]
}

// scanned are the releases newer than the pin: what obsolete-check scans.
func (u *monoUnit) scanned() []string {
	if u.pin < 0 {
		return nil
	}
	return u.tags[u.pin+1:]
}

// monoUnits is the monorepo's units: 12, of three kinds, on upstreams of a
// few hundred commits and tens of release tags (plus nightly tags the
// releases glob leaves out), each a different size:
//   - landed: some patches land upstream at a release after the pin (a
//     cherry-pick), and upstream later rewords their context, so that only
//     the patch-id finds them;
//   - applies: every patch still applies at every release after the pin;
//   - none: the pin is the newest release, nothing to scan (a third of
//     cozystack's adopted units were).
//
// With -short (make bench-check) the upstreams are smaller: 10 releases,
// 2 commits between them, the pin at the fourth.
func monoUnits() []*monoUnit {
	short := testing.Short()
	shape := func(tags, files, commits int, land map[int]int) obsShape {
		if short {
			tags, commits = 10, 2
			for p, t := range land {
				land[p] = 4 + t%3
			}
		}
		return obsShape{tags: tags, files: files, commitsPerTag: commits, extraTagsPerTag: 2, land: land}
	}
	pin := func(p int) int {
		if short {
			return 3
		}
		return p
	}
	return []*monoUnit{
		{dir: "packages/system/kubeovn/images/kubeovn", shape: shape(30, 200, 9, map[int]int{0: 14, 2: 20}), patches: 4, pin: pin(10), makefile: true},
		{dir: "packages/system/linstor/images/linstor-csi", shape: shape(24, 120, 12, map[int]int{1: 16}), patches: 3, pin: pin(8), makefile: true},
		{dir: "packages/system/linstor/images/piraeus-server", shape: shape(36, 150, 8, nil), patches: 5, pin: pin(20), makefile: true},
		{dir: "packages/system/kamaji/images/kamaji", shape: shape(30, 80, 10, nil), patches: 2, pin: -1, makefile: true},
		{dir: "packages/system/kilo/images/kilo", shape: shape(28, 100, 10, map[int]int{0: 12, 1: 12, 3: 22}), patches: 6, pin: pin(6)},
		{dir: "packages/system/cilium/images/cilium", shape: shape(40, 250, 7, nil), patches: 3, pin: pin(25)},
		{dir: "packages/system/multus/images/multus", shape: shape(20, 60, 14, nil), patches: 2, pin: -1},
		{dir: "packages/system/metallb/images/metallb", shape: shape(32, 90, 9, map[int]int{2: 27}), patches: 4, pin: pin(18)},
		{dir: "packages/apps/kubernetes/images/cloud-provider", shape: shape(26, 110, 11, nil), patches: 3, pin: pin(12), makefile: true},
		{dir: "packages/apps/kubevirt/images/kubevirt", shape: shape(30, 180, 9, map[int]int{4: 19}), patches: 5, pin: pin(9)},
		{dir: "packages/extra/seaweedfs/images/seaweedfs", shape: shape(22, 70, 12, nil), patches: 1, pin: -1},
		{dir: "packages/extra/etcd/images/etcd", shape: shape(34, 130, 8, nil), patches: 2, pin: pin(30)},
	}
}

// setupMonorepo generates every unit's upstream (served by git daemon on
// loopback, as a remote is), the monorepo root with a spec and a series per
// unit, and, around them, the rest of a cozystack-sized tree (about 1,200
// directories: packages without images, charts, templates) that discovery
// walks.
func setupMonorepo(b *testing.B) (string, []*monoUnit) {
	b.Helper()
	root := b.TempDir()
	units := monoUnits()
	for _, u := range units {
		up, tags := obsUpstream(b, u.shape)
		u.tags = tags
		u.url = serve(b, up)
		dir := filepath.Join(root, filepath.FromSlash(u.dir))
		writeObsPatches(b, up, u.pinTag(), filepath.Join(dir, "patches"), u.patches)
		ref := u.pinTag()
		if u.makefile {
			// one Makefile per package, a variable per image (linstor's two)
			img := path.Base(u.dir)
			v := strings.ToUpper(strings.ReplaceAll(img, "-", "_")) + "_VERSION"
			mk, err := os.OpenFile(filepath.Join(filepath.Dir(filepath.Dir(dir)), "Makefile"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(mk, "%s = %s\n\nimage-%s:\n\tdocker build --build-arg VERSION=$(%s) images/%s\n\n", v, u.pinTag(), img, v, img)
			mk.Close()
			ref = "\n    makefile-var: " + v + "\n    makefile: ../../Makefile"
		}
		spec := fmt.Sprintf("upstream:\n  url: %s\n  ref: %s\n  releases: \"v1.*\"\npatches: ./patches\n", u.url, ref)
		files := map[string]string{
			"patchkit.yaml": spec,
			"Dockerfile":    "FROM scratch\nCOPY . /src\n",
		}
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	// The rest of the tree: 150 packages with charts and templates, and
	// no image unit.
	for i := 0; i < 150; i++ {
		pkg := filepath.Join(root, "packages", []string{"apps", "system", "extra", "core"}[i%4], fmt.Sprintf("pkg%03d", i))
		for _, d := range []string{"charts/chart/templates", "charts/chart/crds", "templates", "hack", "images/tool"} {
			os.MkdirAll(filepath.Join(pkg, d), 0o755)
			os.WriteFile(filepath.Join(pkg, d, "README.md"), []byte("generated\n"), 0o644)
		}
		os.WriteFile(filepath.Join(pkg, "Makefile"), []byte("image:\n\ttrue\n"), 0o644)
		os.WriteFile(filepath.Join(pkg, "images", "tool", "Dockerfile"), []byte("FROM scratch\n"), 0o644)
	}
	return root, units
}

// monoTally sums, over the processes of one timed case, the CPU time
// (user + sys; a process's children count in its own) and keeps the largest
// peak resident set size (GNU time, where it wraps the process).
type monoTally struct {
	cpu time.Duration
	rss int64
}

func (t *monoTally) add(cmd *exec.Cmd, rss int64) {
	if ps := cmd.ProcessState; ps != nil {
		t.cpu += ps.UserTime() + ps.SystemTime()
	}
	t.rss = max(t.rss, rss)
}

// run runs a command under GNU time in dir and fails the benchmark if it
// fails.
func (t *monoTally) run(b *testing.B, dir, name string, args ...string) {
	b.Helper()
	cmd, rss := measured(name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.add(cmd, rss())
	if err != nil {
		b.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
}

// try runs git in dir, without GNU time (the loop's many git apply are
// small), and says whether it succeeded.
func (t *monoTally) try(dir string, args ...string) bool {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gittest.Env()
	err := cmd.Run()
	t.add(cmd, 0)
	return err == nil
}

// monoNaive is the loop a monorepo's maintainer would script, unit after
// unit, on the unit's clone in clones/<unit dir> (cloned first when clone
// is set): for each release after the pin, check it out, then per patch git
// apply -R --check (present), else git apply --check (applies), else
// conflict.
func monoNaive(b *testing.B, t *monoTally, root, clones string, units []*monoUnit, clone bool) verdicts {
	b.Helper()
	v := verdicts{}
	for _, u := range units {
		wt := filepath.Join(clones, filepath.FromSlash(u.dir))
		if clone {
			t.run(b, "", "git", "clone", "-q", u.url, wt)
		}
		patches, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(u.dir), "patches", "*.diff"))
		for _, tag := range u.scanned() {
			t.run(b, wt, "git", "-c", "advice.detachedHead=false", "checkout", "-q", tag)
			for _, p := range patches {
				key := u.dir + "/" + filepath.Base(p) + "@" + tag
				switch {
				case t.try(wt, "apply", "-R", "--check", p):
					v[key] = "present"
				case t.try(wt, "apply", "--check", p):
					v[key] = "applies"
				default:
					v[key] = "conflict"
				}
			}
		}
	}
	return v
}

// monoPatchkit runs patchkit obsolete-check -o json over every unit of
// root with the global flags given, and returns its verdicts, keyed as
// monoNaive's.
func monoPatchkit(b *testing.B, t *monoTally, root, cache string, units int, flags ...string) verdicts {
	b.Helper()
	cmd, rss := measured(patchkitBin, append(append([]string{"--root", root, "--cache-dir", cache}, flags...), "-o", "json", "obsolete-check")...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	t.add(cmd, rss())
	if err != nil && cmd.ProcessState.ExitCode() != 1 {
		b.Fatalf("patchkit %s obsolete-check: %v\n%s", strings.Join(flags, " "), err, errOut.String())
	}
	var rep []struct {
		Unit    string        `json:"unit"`
		Error   string        `json:"error"`
		Patches reportPatches `json:"patches"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		b.Fatalf("decoding obsolete-check json: %v\n%s", err, out.String())
	}
	v := verdicts{}
	for _, u := range rep {
		if u.Error != "" {
			b.Fatalf("patchkit %s obsolete-check: %s: %s", strings.Join(flags, " "), u.Unit, u.Error)
		}
		u.Patches.add(v, u.Unit+"/")
	}
	if len(rep) != units {
		b.Fatalf("patchkit obsolete-check reported %d units, the monorepo has %d:\n%s", len(rep), units, out.String())
	}
	return v
}

// monoRSSLimit is the most memory patchkit may take over the whole
// monorepo, in KiB: the bound every command has on kube-ovn-sized inputs.
const monoRSSLimit = memLimitMiB << 10

// BenchmarkMonorepo is issue 24's monorepo: 12 units (see monoUnits), each
// with its own upstream served by git daemon on loopback, in a tree of about
// 1,200 directories, checked whole by one patchkit run beside the naive loop
// over the units. Per iteration:
//   - cold: obsolete-check on an empty cache, beside clone plus loop;
//   - warm: obsolete-check --offline with nothing new, beside the loop on
//     the existing clones;
//   - warm-online: obsolete-check online with nothing new (it lists the 12
//     upstreams and fetches nothing), beside git fetch --tags per clone
//     (naive-fetch; the loop's warm-online is naive-fetch plus naive-warm);
//   - apply-check: apply --check --offline of every unit on the warm cache
//     (after an untimed online one, which fetches the pins of the units
//     with nothing to scan), beside checkout of the pin plus git apply
//     --check of the series per clone; both must pass.
//
// After each obsolete-check the verdicts must agree with the loop's
// (compareVerdicts), and patchkit's peak memory must stay within
// monoRSSLimit; time is reported, never asserted: <case>-min/med/max-ms
// (wall) and <case>-cpu-min/med/max-ms (user + sys of the case's processes
// and their children), and <case>-maxRSS-KiB. With -short (make
// bench-check) the upstreams are smaller and it runs once.
func BenchmarkMonorepo(b *testing.B) {
	root, units := setupMonorepo(b)
	work := b.TempDir()
	cases := []string{"cold", "naive-cold", "warm", "naive-warm", "warm-online", "naive-fetch", "apply-check", "naive-apply-check"}
	wall := map[string][]time.Duration{}
	cpu := map[string][]time.Duration{}
	rss := map[string]int64{}
	timed := func(name string, f func(t *monoTally)) {
		var t monoTally
		start := time.Now()
		f(&t)
		wall[name] = append(wall[name], time.Since(start))
		cpu[name] = append(cpu[name], t.cpu)
		rss[name] = max(rss[name], t.rss)
		if !strings.HasPrefix(name, "naive") && t.rss > monoRSSLimit {
			b.Fatalf("%s: patchkit peaked at %d MiB, over %d MiB", name, t.rss>>10, monoRSSLimit>>10)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cache := filepath.Join(work, fmt.Sprintf("cache-%d", i))
		clones := filepath.Join(work, fmt.Sprintf("clones-%d", i))
		var got, want verdicts
		timed("cold", func(t *monoTally) { got = monoPatchkit(b, t, root, cache, len(units)) })
		timed("naive-cold", func(t *monoTally) { want = monoNaive(b, t, root, clones, units, true) })
		compareVerdicts(b, got, want)

		timed("warm", func(t *monoTally) { got = monoPatchkit(b, t, root, cache, len(units), "--offline") })
		timed("naive-warm", func(t *monoTally) { want = monoNaive(b, t, root, clones, units, false) })
		compareVerdicts(b, got, want)
		timed("warm-online", func(t *monoTally) { got = monoPatchkit(b, t, root, cache, len(units)) })
		compareVerdicts(b, got, want)
		timed("naive-fetch", func(t *monoTally) {
			for _, u := range units {
				t.run(b, filepath.Join(clones, filepath.FromSlash(u.dir)), "git", "fetch", "-q", "--tags", "origin")
			}
		})

		// apply --check online once, untimed: the units with nothing to
		// scan have fetched nothing yet (not even their pin)
		b.StopTimer()
		var untimed monoTally
		untimed.run(b, "", patchkitBin, "--root", root, "--cache-dir", cache, "apply", "--check")
		b.StartTimer()
		timed("apply-check", func(t *monoTally) {
			t.run(b, "", patchkitBin, "--root", root, "--cache-dir", cache, "--offline", "apply", "--check")
		})
		timed("naive-apply-check", func(t *monoTally) {
			for _, u := range units {
				wt := filepath.Join(clones, filepath.FromSlash(u.dir))
				t.run(b, wt, "git", "-c", "advice.detachedHead=false", "checkout", "-q", u.pinTag())
				patches, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(u.dir), "patches", "*.diff"))
				t.run(b, wt, "git", append([]string{"apply", "--check"}, patches...)...)
			}
		})
		b.StopTimer()
		os.RemoveAll(cache)
		os.RemoveAll(clones)
		b.StartTimer()
	}
	b.StopTimer()
	for _, c := range cases {
		spread(b, c, wall[c])
		spread(b, c+"-cpu", cpu[c])
		b.ReportMetric(float64(rss[c]), c+"-maxRSS-KiB")
	}
}
