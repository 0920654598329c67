package fault

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/patchkit/patchkit/internal/gittest"
)

// upgradeProject is a repository whose upgrade from v1.0.0 to v2.0.0
// writes several files: the spec's pin moves, 0001 is dropped (v2 carries
// it), 0002 and 0003 are rewritten at v2's line numbers, and 0000 is kept.
type upgradeProject struct {
	*project
	files []string // the files an upgrade writes or deletes, relative to root
}

func numbered(name string, n int, change map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if s, ok := change[i]; ok {
			b.WriteString(s + "\n")
			continue
		}
		b.WriteString(name + " line " + strconv.Itoa(i) + "\n")
	}
	return b.String()
}

func newUpgradeProject(t *testing.T) *upgradeProject { return newUpgradeProjectWith(t, false, "v2") }

// newUpgradeProjectWith adds, with conflict, 0004-e.diff, which conflicts at
// v2; subject is the message of v2's commit.
func newUpgradeProjectWith(t *testing.T, conflict bool, subject string) *upgradeProject {
	t.Helper()
	up := gittest.New(t)
	for _, f := range []string{"a.txt", "b.txt", "c.txt", "d.txt", "e.txt"} {
		up.Write(f, numbered(f, 200, nil))
	}
	up.Commit("v1")
	up.Tag("v1.0.0")
	p := &project{up: up, root: t.TempDir(), cache: t.TempDir()}
	if out, errOut, err := gittest.Run(p.root, nil, "init", "-q"); err != nil {
		t.Fatalf("git init: %v %s%s", err, out, errOut)
	}
	diff := func(subject, file string, change map[int]string) string {
		up.Write(file, numbered(file, 200, change))
		d := "Subject: " + subject + "\nOrigin: vendor\nForwarded: no\n\n" + up.Git("diff") + "\n"
		up.Git("checkout", "--", ".")
		return d
	}
	series := map[string]string{
		"0000-d.diff": diff("change d", "d.txt", map[int]string{100: "d patched"}),
		"0001-a.diff": diff("change a", "a.txt", map[int]string{50: "a patched"}),
		"0002-b.diff": diff("change b", "b.txt", map[int]string{100: "b patched"}),
		"0003-c.diff": diff("change c", "c.txt", map[int]string{100: "c patched"}),
	}
	if conflict {
		series["0004-e.diff"] = diff("change e", "e.txt", map[int]string{100: "e patched"})
		up.Write("e.txt", numbered("e.txt", 200, map[int]string{100: "e changed upstream"}))
	}
	// v2 carries 0001 and moves the lines 0002 and 0003 change.
	up.Write("a.txt", numbered("a.txt", 200, map[int]string{50: "a patched"}))
	up.Write("b.txt", "new first line of b\n"+numbered("b.txt", 200, nil))
	up.Write("c.txt", "new first line of c\nand another\n"+numbered("c.txt", 200, nil))
	up.Commit(subject)
	up.Tag("v2.0.0")
	write(t, filepath.Join(p.root, "images/app/patchkit.yaml"),
		"upstream:\n  url: "+up.URL()+"\n  ref: v1.0.0 # the pin\n  releases: \"v*\"\npatches: patches/app\n")
	for name, text := range series {
		write(t, filepath.Join(p.root, "patches/app", name), text)
	}
	return &upgradeProject{project: p, files: []string{
		"images/app/patchkit.yaml", "patches/app/0000-d.diff", "patches/app/0001-a.diff",
		"patches/app/0002-b.diff", "patches/app/0003-c.diff",
	}}
}

// state reads the files an upgrade touches ("<absent>" for a missing one).
func (p *upgradeProject) state(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range p.files {
		b, err := os.ReadFile(filepath.Join(p.root, f))
		switch {
		case os.IsNotExist(err):
			out[f] = "<absent>"
		case err != nil:
			t.Fatal(err)
		default:
			out[f] = strings.ReplaceAll(string(b), p.up.URL(), "URL")
		}
	}
	return out
}

func diffState(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for f, w := range want {
		if got[f] != w {
			t.Errorf("%s: %s =\n%s\nwant\n%s", what, f, got[f], w)
		}
	}
}

// tempLeftovers lists the hidden temporary files and journals under root.
func tempLeftovers(root string) []string {
	var out []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		n := d.Name()
		if strings.Contains(n, ".tmp-") || strings.Contains(n, "patchkit-journal") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// watcher reports inotify events in dirs on a channel, one name per event.
type watcher struct {
	fd     int
	events chan string
}

func watch(t *testing.T, mask uint32, dirs ...string) *watcher {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if _, err := unix.InotifyAddWatch(fd, d, mask); err != nil {
			t.Fatal(err)
		}
	}
	w := &watcher{fd: fd, events: make(chan string, 256)}
	go func() {
		buf := make([]byte, 64*1024)
		for {
			n, err := unix.Read(fd, buf)
			if err != nil || n <= 0 {
				close(w.events)
				return
			}
			for off := 0; off+unix.SizeofInotifyEvent <= n; {
				ev := (*unix.InotifyEvent)(unsafePointer(&buf[off]))
				name := string(bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)], "\x00"))
				w.events <- eventName(ev.Mask) + " " + name
				off += unix.SizeofInotifyEvent + int(ev.Len)
			}
		}
	}()
	t.Cleanup(func() { unix.Close(fd) })
	return w
}

func eventName(m uint32) string {
	switch {
	case m&unix.IN_MOVED_TO != 0:
		return "moved"
	case m&unix.IN_DELETE != 0:
		return "deleted"
	case m&unix.IN_CLOSE_WRITE != 0:
		return "written"
	}
	return "other"
}

// TestKilledUpgrade kills upgrade with SIGKILL on each rename and deletion
// of its multi-file write (timed with inotify), and before its commit point
// (on the first temporary file written). The next upgrade completes the
// write or finds it undone, and ends where an uninterrupted upgrade ends;
// apply --check passes at the new pin; no temporary file or journal stays.
func TestKilledUpgrade(t *testing.T) {
	ref := newUpgradeProject(t)
	if r := ref.run(t, "upgrade", "app"); r.code != 0 {
		t.Fatalf("uninterrupted upgrade: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := ref.state(t)
	if want["patches/app/0001-a.diff"] != "<absent>" || !strings.Contains(want["images/app/patchkit.yaml"], "v2.0.0") {
		t.Fatalf("the uninterrupted upgrade did not drop 0001 and move the pin:\n%v", want)
	}
	// Events of the write, in order: the spec renamed, 0001 deleted, 0002 and
	// 0003 renamed. 0 is the first temporary file written (before the commit
	// point).
	midway := 0
	for round := 0; round < 2; round++ {
		for k := 0; k <= 4; k++ {
			p := newUpgradeProject(t)
			p.run(t, "apply", "app", "--check") // fills the cache
			w := watch(t, unix.IN_MOVED_TO|unix.IN_DELETE|unix.IN_CLOSE_WRITE,
				filepath.Join(p.root, "images/app"), filepath.Join(p.root, "patches/app"))
			cmd := p.cmd("upgrade", "app")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			seen := 0
			deadline := time.After(hangGuard)
		loop:
			for {
				select {
				case ev := <-w.events:
					name := ev[strings.Index(ev, " ")+1:]
					tmp := strings.Contains(name, ".tmp-")
					hit := (k == 0 && strings.HasPrefix(ev, "written") && tmp) ||
						(k > 0 && !tmp && (strings.HasPrefix(ev, "moved") || strings.HasPrefix(ev, "deleted")))
					if !hit {
						continue
					}
					seen++
					if k == 0 || seen == k {
						cmd.Process.Signal(syscall.SIGKILL)
						break loop
					}
				case <-deadline:
					t.Fatalf("k=%d: no event", k)
				}
			}
			cmd.Wait()
			if _, err := os.Stat(filepath.Join(p.root, ".git/patchkit-journal.json")); err == nil {
				midway++
			}
			r := p.run(t, "upgrade", "app")
			if r.code != 0 {
				t.Errorf("k=%d: the rerun: exit %d\n%s%s", k, r.code, r.stdout, r.stderr)
			}
			diffState(t, "after the kill and a rerun", p.state(t), want)
			if r := p.run(t, "apply", "app", "--check"); r.code != 0 {
				t.Errorf("k=%d: apply --check after the rerun: exit %d\n%s%s", k, r.code, r.stdout, r.stderr)
			}
			if l := tempLeftovers(p.root); len(l) > 0 {
				t.Errorf("k=%d: left over: %v", k, l)
			}
		}
	}
	t.Logf("%d of 10 kills left a journal to complete", midway)
}

// TestPausedRefreshDuringUpgrade: refresh has read the series and waits for
// the repository lock (the test holds it); it is paused with SIGSTOP while
// upgrade runs to completion, then resumed. Refresh must refuse (the files
// changed since it read them) and leave upgrade's result.
func TestPausedRefreshDuringUpgrade(t *testing.T) {
	p := newUpgradeProject(t)
	// 0000 non-canonical (function context after @@), so refresh writes it.
	f := filepath.Join(p.root, "patches/app/0000-d.diff")
	b, _ := os.ReadFile(f)
	b = bytes.Replace(b, []byte(" @@\n"), []byte(" @@ some function\n"), 1)
	os.WriteFile(f, b, 0o644)
	p.run(t, "apply", "app", "--check")

	lock := holdLock(t, filepath.Join(p.root, ".git/patchkit.lock"))
	refresh := p.cmd("refresh", "app")
	stderr, _ := refresh.StderrPipe()
	refresh.Stdout = io.Discard
	if err := refresh.Start(); err != nil {
		t.Fatal(err)
	}
	waitLine(t, stderr, "waiting for the repository lock")
	refresh.Process.Signal(syscall.SIGSTOP)
	lock.Close()

	r := p.run(t, "upgrade", "app")
	if r.code != 0 {
		t.Fatalf("upgrade while refresh is paused: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	upgraded := p.state(t)
	refresh.Process.Signal(syscall.SIGCONT)
	rest, _ := io.ReadAll(stderr)
	err := refresh.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code != 2 || !strings.Contains(string(rest), "the file changed since it was read") {
		t.Errorf("the resumed refresh: exit %d, stderr %q; want 2 and \"the file changed since it was read\"", code, rest)
	}
	diffState(t, "after the resumed refresh", p.state(t), upgraded)
	if r := p.run(t, "apply", "app", "--check"); r.code != 0 {
		t.Errorf("apply --check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := p.run(t, "upgrade", "app"); r.code != 0 || !strings.Contains(r.stdout, "no newer upstream release") {
		t.Errorf("a second upgrade: exit %d\n%s", r.code, r.stdout)
	}
}

// TestEditDuringUpgrade: hand edits to the spec and to a patch header made
// while upgrade runs (here: while it waits for the lock, after its plan and
// gate) refuse the write; both edits stay and nothing else is written.
func TestEditDuringUpgrade(t *testing.T) {
	for _, file := range []string{"images/app/patchkit.yaml", "patches/app/0002-b.diff", "patches/app/0000-d.diff"} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			p := newUpgradeProject(t)
			p.run(t, "apply", "app", "--check")
			lock := holdLock(t, filepath.Join(p.root, ".git/patchkit.lock"))
			cmd := p.cmd("upgrade", "app")
			stderr, _ := cmd.StderrPipe()
			cmd.Stdout = io.Discard
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitLine(t, stderr, "waiting for the repository lock")
			full := filepath.Join(p.root, file)
			b, _ := os.ReadFile(full)
			edited := "# a hand edit\n" + string(b)
			if err := os.WriteFile(full, []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
			before := p.state(t)
			lock.Close()
			rest, _ := io.ReadAll(stderr)
			err := cmd.Wait()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if code != 2 || !strings.Contains(string(rest), file+": the file changed since it was read") || !strings.Contains(string(rest), "nothing was written") {
				t.Errorf("exit %d, stderr %q; want 2, %q and \"nothing was written\"", code, rest, file+": the file changed since it was read")
			}
			diffState(t, "after the refused upgrade", p.state(t), before)
		})
	}
}

func holdLock(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// waitLine reads r until a line contains want; EOF first fails the test.
func waitLine(t *testing.T, r io.Reader, want string) {
	t.Helper()
	type end struct {
		found bool
		said  string
	}
	done := make(chan end, 1)
	go func() {
		sc := bufio.NewScanner(r)
		var seen []string
		for sc.Scan() {
			if strings.Contains(sc.Text(), want) {
				done <- end{found: true}
				return
			}
			seen = append(seen, sc.Text())
		}
		done <- end{said: strings.Join(seen, "\n")}
	}()
	select {
	case e := <-done:
		if !e.found {
			t.Fatalf("the process ended without %q; it said:\n%s", want, e.said)
		}
	case <-time.After(hangGuard):
		t.Fatalf("no %q", want)
	}
}

// TestFailedUpgradeWritesNothing: an upgrade with a conflicting patch exits
// 1 and writes nothing, and says so; with --keep-conflicts it writes the
// rest (the pin, the other fates) and lists every file written.
func TestFailedUpgradeWritesNothing(t *testing.T) {
	p := newUpgradeProjectWith(t, true, "v2")
	p.files = append(p.files, "patches/app/0004-e.diff")
	before := p.state(t)
	r := p.run(t, "upgrade", "app")
	if r.code != 1 || !strings.Contains(r.stdout, "nothing was written") || strings.Contains(r.stdout, "left as it was") {
		t.Errorf("upgrade with a conflict: exit %d\n%s%s\nwant exit 1 and \"nothing was written\"", r.code, r.stdout, r.stderr)
	}
	diffState(t, "after the failed upgrade", p.state(t), before)

	r = p.run(t, "upgrade", "app", "--keep-conflicts")
	if r.code != 1 {
		t.Errorf("upgrade --keep-conflicts: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	after := p.state(t)
	for _, f := range p.files {
		changed := after[f] != before[f]
		said := strings.Contains(r.stdout, "wrote "+f) || strings.Contains(r.stdout, "deleted "+f)
		if changed != said {
			t.Errorf("--keep-conflicts: %s changed=%v, but the output lists it=%v:\n%s", f, changed, said, r.stdout)
		}
	}
	if after["patches/app/0004-e.diff"] != before["patches/app/0004-e.diff"] || after["patches/app/0001-a.diff"] != "<absent>" ||
		!strings.Contains(r.stdout, "left as they were: 0004-e.diff") {
		t.Errorf("--keep-conflicts: want 0004 kept, 0001 deleted, and the output to say so:\n%s", r.stdout)
	}
}

// TestUpgradeKeepsLinksAndOwners: a patch that is a symbolic link inside
// the repository stays a link, its target rewritten; the spec keeps its
// owner and mode. A link leaving the repository and a hard-linked spec are
// refused (exit 2) with nothing written.
func TestUpgradeKeepsLinksAndOwners(t *testing.T) {
	p := newUpgradeProject(t)
	link := filepath.Join(p.root, "patches/app/0002-b.diff")
	shared := filepath.Join(p.root, "shared/b.diff")
	os.MkdirAll(filepath.Dir(shared), 0o755)
	if err := os.Rename(link, shared); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../shared/b.diff", link); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(p.root, "images/app/patchkit.yaml")
	if err := os.Chown(spec, 1234, 2345); err != nil {
		t.Fatal(err)
	}
	os.Chmod(spec, 0o640)
	before, _ := os.ReadFile(shared)
	if r := p.run(t, "upgrade", "app"); r.code != 0 || !strings.Contains(r.stdout, "through the link to shared/b.diff") {
		t.Fatalf("upgrade: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("0002-b.diff is no longer a symbolic link: %v %v", st.Mode(), err)
	}
	if after, _ := os.ReadFile(shared); bytes.Equal(after, before) {
		t.Error("the link's target was not rewritten")
	}
	st, _ := os.Stat(spec)
	if sys := st.Sys().(*syscall.Stat_t); sys.Uid != 1234 || sys.Gid != 2345 || st.Mode().Perm() != 0o640 {
		t.Errorf("spec owner %d:%d mode %v, want 1234:2345 0640", sys.Uid, sys.Gid, st.Mode().Perm())
	}

	refused := func(name string, setup func(p *upgradeProject), want string) {
		t.Run(name, func(t *testing.T) {
			p := newUpgradeProject(t)
			setup(p)
			before := p.state(t)
			r := p.run(t, "upgrade", "app")
			if r.code != 2 || !strings.Contains(r.stderr, want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, want)
			}
			diffState(t, "after the refused upgrade", p.state(t), before)
		})
	}
	refused("link outside", func(p *upgradeProject) {
		outside := filepath.Join(t.TempDir(), "b.diff")
		link := filepath.Join(p.root, "patches/app/0002-b.diff")
		os.Rename(link, outside)
		os.Symlink(outside, link)
	}, "outside the repository")
	refused("hard link", func(p *upgradeProject) {
		os.Link(filepath.Join(p.root, "images/app/patchkit.yaml"), filepath.Join(p.root, "spec-copy.yaml"))
	}, "hard links")
}

// TestObsoleteWriteLinks: obsolete-check --write writes Applied-Upstream
// through a patch symlink inside the repository (the link stays a link),
// and refuses one that leads outside it, writing nothing there.
func TestObsoleteWriteLinks(t *testing.T) {
	for _, outside := range []bool{false, true} {
		p := newUpgradeProject(t)
		link := filepath.Join(p.root, "patches/app/0001-a.diff")
		target := filepath.Join(p.root, "shared/a.diff")
		if outside {
			target = filepath.Join(t.TempDir(), "a.diff")
		}
		os.MkdirAll(filepath.Dir(target), 0o755)
		if err := os.Rename(link, target); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		before, _ := os.ReadFile(target)
		r := p.run(t, "obsolete-check", "app", "--write")
		after, _ := os.ReadFile(target)
		if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("outside=%v: the patch is no longer a link", outside)
		}
		if outside {
			if r.code != 2 || !strings.Contains(r.stderr, "outside the repository") || !bytes.Equal(after, before) {
				t.Errorf("a link leaving the repository: exit %d, stderr %q, target changed %v; want exit 2, refused, unchanged", r.code, r.stderr, !bytes.Equal(after, before))
			}
			continue
		}
		if !strings.Contains(string(after), "Applied-Upstream: v2.0.0") {
			t.Errorf("the link's target was not written (exit %d):\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
}

// TestStaleTempsRemoved: hidden ".NAME.tmp-*" files that killed writes left
// in a patch directory are removed by the next write there; other hidden
// files stay.
func TestStaleTempsRemoved(t *testing.T) {
	p := newUpgradeProject(t)
	dir := filepath.Join(p.root, "patches/app")
	stale := filepath.Join(dir, ".0002-b.diff.tmp-123456")
	keep := filepath.Join(dir, ".keep")
	write(t, stale, "half a patch")
	write(t, keep, "")
	old := time.Now().Add(-time.Hour)
	os.Chtimes(stale, old, old)
	if r := p.run(t, "upgrade", "app"); r.code != 0 {
		t.Fatalf("upgrade: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("%s is still there", stale)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("%s was removed", keep)
	}
}

// TestInitThroughLinkLeavingRoot: init DIR, where DIR is a symbolic link to
// a directory outside the repository, exits 2 and writes nothing there.
func TestInitThroughLinkLeavingRoot(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	write(t, filepath.Join(outside, "Dockerfile"), "FROM scratch\nARG TAG=v1.0.0\nRUN git clone https://example.com/x/y && cd y && git checkout ${TAG} && git apply /patches/*.diff\nCOPY patches /patches\n")
	write(t, filepath.Join(outside, "patches/0001-x.diff"), "")
	if err := os.Symlink(outside, filepath.Join(root, "unit")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(patchkit, "--root", root, "init", "unit")
	cmd.Env = gittest.Env()
	r := runGuarded(t, cmd)
	if r.code != 2 || !strings.Contains(r.stderr, "outside the repository") {
		t.Errorf("init through a link leaving the root: exit %d, stderr %q; want 2, \"outside the repository\"", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(outside, "patchkit.yaml")); !os.IsNotExist(err) {
		t.Error("a spec was written outside the repository")
	}
}

// TestApplyDefaultOutLeavingRoot: a committed _output that is a symbolic
// link to a directory outside the repository: apply without --out refuses
// (exit 2) and writes nothing there.
func TestApplyDefaultOutLeavingRoot(t *testing.T) {
	p := newUpgradeProject(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(p.root, "_output")); err != nil {
		t.Fatal(err)
	}
	r := p.run(t, "apply", "app")
	if r.code != 2 || !strings.Contains(r.stderr, "outside the repository") {
		t.Errorf("apply through _output leaving the root: exit %d, stderr %q; want 2, \"outside the repository\"", r.code, r.stderr)
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("written outside the repository: %v", entries)
	}
	os.Remove(filepath.Join(p.root, "_output"))
	if r := p.run(t, "apply", "app"); r.code != 0 {
		t.Errorf("apply with a plain _output: exit %d\n%s", r.code, r.stderr)
	}
}
