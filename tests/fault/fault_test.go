// Package fault is patchkit's fault suite: real patchkit processes, killed
// with SIGKILL mid-fetch and mid-write, and caches damaged on disk (a
// deleted loose object, a truncated pack, a flipped byte). The git CLI is
// the oracle for every verdict.
package fault

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/gittest"
)

var patchkit string // the built binary

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "patchkit-fault-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	patchkit = filepath.Join(dir, "patchkit")
	build := exec.Command("go", "build", "-o", patchkit, "github.com/patchkit/patchkit/cmd/patchkit")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building patchkit:", err)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// hangGuard bounds every wait of this suite: it only stops a hung test, no
// assertion depends on it.
const hangGuard = 3 * time.Minute

// project is a repository with one image unit, "app", whose one patch
// applies to v1.0.0 of its upstream and no longer applies to v2.0.0.
type project struct {
	up    *gittest.Repo
	root  string
	cache string
	patch string // the patch text
}

func lines(from, to int, change map[int]string) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		if s, ok := change[i]; ok {
			b.WriteString(s + "\n")
			continue
		}
		fmt.Fprintf(&b, "line %d of the app\n", i)
	}
	return b.String()
}

func newProject(t *testing.T, url func(*gittest.Repo) string) *project {
	t.Helper()
	up := gittest.New(t)
	up.Write("src/app.txt", lines(1, 300, nil))
	up.Write("src/other.txt", "other\n")
	up.Commit("v1")
	up.Tag("v1.0.0")
	p := &project{up: up, root: t.TempDir(), cache: t.TempDir()}
	// The patch, made by git from the v1 tree.
	up.Write("src/app.txt", lines(1, 300, map[int]string{150: "line 150, patched"}))
	p.patch = "Subject: patch line 150\nOrigin: vendor\nForwarded: no\n\n" + up.Git("diff") + "\n"
	up.Git("checkout", "--", ".")
	// v2 rewrites the lines around it: the patch stops applying.
	up.Write("src/app.txt", lines(1, 300, map[int]string{149: "line 149 rewritten", 151: "line 151 rewritten"}))
	up.Commit("v2")
	up.Tag("v2.0.0")
	u := up.URL()
	if url != nil {
		u = url(up)
	}
	write(t, filepath.Join(p.root, "images/app/patchkit.yaml"),
		"upstream:\n  url: "+u+"\n  ref: v1.0.0\n  releases: \"v*\"\npatches: patches/app\n")
	write(t, filepath.Join(p.root, "patches/app/0001-line-150.diff"), p.patch)
	return p
}

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// result is one patchkit run.
type result struct {
	code           int
	stdout, stderr string
}

func (p *project) cmd(args ...string) *exec.Cmd {
	cmd := exec.Command(patchkit, append([]string{"--root", p.root, "--cache-dir", p.cache}, args...)...)
	cmd.Env = gittest.Env()
	return cmd
}

func (p *project) run(t *testing.T, args ...string) result {
	t.Helper()
	cmd := p.cmd(args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errOut.String()}
}

// oracle is `git apply --check` of the patch on a checkout of ref: 0 or 1.
func (p *project) oracle(t *testing.T, ref string) int {
	t.Helper()
	dir := t.TempDir()
	if out, errOut, err := gittest.Run(p.up.Dir, nil, "worktree", "add", "--detach", dir, ref); err != nil {
		t.Fatalf("git worktree add: %v\n%s%s", err, out, errOut)
	}
	t.Cleanup(func() { gittest.Run(p.up.Dir, nil, "worktree", "remove", "--force", dir) })
	_, _, err := gittest.Run(dir, []byte(p.patch), "apply", "--check", "-")
	if err != nil {
		return 1
	}
	return 0
}

// cacheRepo is the one bare repository in the cache directory.
func (p *project) cacheRepo(t *testing.T) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(p.cache, "*.git"))
	if len(m) != 1 {
		t.Fatalf("cache dir holds %v, want one repository", m)
	}
	return m[0]
}

// leftovers lists temporary files of killed runs under dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		n := d.Name()
		if strings.HasPrefix(n, "tmp_") || strings.HasPrefix(n, "packfile") || strings.Contains(n, ".git.tmp-") ||
			strings.Contains(n, ".git.old-") || strings.HasPrefix(n, ".patchkit-tree-") || strings.HasSuffix(n, ".fetching") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func fsck(t *testing.T, repo string) {
	t.Helper()
	if out, errOut, err := gittest.Run(repo, nil, "fsck", "--no-dangling", "--full"); err != nil {
		t.Fatalf("git fsck %s: %v\n%s%s", repo, err, out, errOut)
	}
}

// wantVerdict checks an apply run against the oracle's verdict.
func wantVerdict(t *testing.T, r result, oracle int, what string) {
	t.Helper()
	if r.code != oracle {
		t.Errorf("%s: exit %d, want %d (git apply --check)\nstdout: %s\nstderr: %s", what, r.code, oracle, r.stdout, r.stderr)
	}
}

// wantDamaged checks a run on a damaged cache, offline: exit 2 naming the
// cache and the object, and no verdict on any patch.
func wantDamaged(t *testing.T, r result, repo, object string) {
	t.Helper()
	if r.code != 2 || !strings.Contains(r.stderr, "cache damaged") || !strings.Contains(r.stderr, repo) ||
		!strings.Contains(r.stderr, "without --offline") || (object != "" && !strings.Contains(r.stderr, object)) {
		t.Errorf("offline run on a damaged cache: exit %d, stderr %q; want exit 2, \"cache damaged\", %s, object %s, \"without --offline\"", r.code, r.stderr, repo, object)
	}
	// The error itself may be on stdout (-o json, -o github: one
	// "::error title=patchkit error::cache damaged ..." line), but nothing may
	// annotate or judge a patch.
	if strings.Contains(r.stdout, "FAILED") || strings.Contains(r.stdout, "::error file=") || strings.Contains(r.stdout, "patches/") {
		t.Errorf("offline run on a damaged cache gave a verdict on a patch:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "::error") && !strings.Contains(r.stdout, "cache damaged") {
		t.Errorf("offline run on a damaged cache: the error annotation does not say why:\n%s", r.stdout)
	}
}

// blobAt is the object id of path at ref in the upstream.
func (p *project) blobAt(ref, path string) string { return p.up.Git("rev-parse", ref+":"+path) }

// packOffset finds object id in the cache's one pack: the pack file, the
// object's offset and its size in the pack.
func packOffset(t *testing.T, repo, id string) (pack string, offset, size int64) {
	t.Helper()
	idx, _ := filepath.Glob(filepath.Join(repo, "objects/pack/*.idx"))
	for _, i := range idx {
		out, _, err := gittest.Run(repo, nil, "verify-pack", "-v", i)
		if err != nil {
			t.Fatalf("git verify-pack %s: %v", i, err)
		}
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			if len(f) >= 5 && f[0] == id {
				size, _ = strconv.ParseInt(f[3], 10, 64)
				offset, _ = strconv.ParseInt(f[4], 10, 64)
				return strings.TrimSuffix(i, ".idx") + ".pack", offset, size
			}
		}
	}
	t.Fatalf("object %s is in no pack of %s", id, repo)
	return "", 0, 0
}

// explode turns the cache's packs into loose objects.
func explode(t *testing.T, repo string) {
	t.Helper()
	packs, _ := filepath.Glob(filepath.Join(repo, "objects/pack/*.pack"))
	aside := t.TempDir()
	for _, pk := range packs {
		moved := filepath.Join(aside, filepath.Base(pk))
		if err := os.Rename(pk, moved); err != nil {
			t.Fatal(err)
		}
		os.Remove(strings.TrimSuffix(pk, ".pack") + ".idx")
		data, err := os.ReadFile(moved)
		if err != nil {
			t.Fatal(err)
		}
		if out, errOut, err := gittest.Run(repo, data, "unpack-objects", "-q"); err != nil {
			t.Fatalf("git unpack-objects: %v\n%s%s", err, out, errOut)
		}
	}
}

// damages break the object of the patched file at the pin, which every
// apply reads.
var damages = []struct {
	name string
	do   func(t *testing.T, repo, id string)
}{
	{"loose object deleted", func(t *testing.T, repo, id string) {
		explode(t, repo)
		if err := os.Remove(filepath.Join(repo, "objects", id[:2], id[2:])); err != nil {
			t.Fatal(err)
		}
	}},
	{"pack truncated inside the object", func(t *testing.T, repo, id string) {
		pack, off, size := packOffset(t, repo, id)
		if err := os.Truncate(pack, off+size/2); err != nil {
			t.Fatal(err)
		}
	}},
	{"byte flipped inside the object", func(t *testing.T, repo, id string) {
		pack, off, size := packOffset(t, repo, id)
		gittest.FlipBit(t, pack, off+size/2)
	}},
}

// TestDamagedCache: offline, a damaged cache is exit 2 "cache damaged"
// naming the cache and the object, with no verdict on the patch (also with
// -o github); online, the run repairs it and gives git's verdict.
func TestDamagedCache(t *testing.T) {
	for _, d := range damages {
		for _, ref := range []string{"v1.0.0", "v2.0.0"} {
			t.Run(d.name+" at "+ref, func(t *testing.T) {
				p := newProject(t, nil)
				oracle := p.oracle(t, ref)
				wantVerdict(t, p.run(t, "apply", "app", "--check", "--ref", ref), oracle, "healthy cache")
				repo := p.cacheRepo(t)
				id := p.blobAt(ref, "src/app.txt")
				d.do(t, repo, id)

				wantDamaged(t, p.run(t, "--offline", "apply", "app", "--check", "--ref", ref), repo, id)
				wantDamaged(t, p.run(t, "--offline", "-o", "github", "apply", "app", "--check", "--ref", ref), repo, id)

				r := p.run(t, "-o", "github", "apply", "app", "--check", "--ref", ref)
				wantVerdict(t, r, oracle, "online run on a damaged cache")
				fsck(t, p.cacheRepo(t))
				wantVerdict(t, p.run(t, "--offline", "apply", "app", "--check", "--ref", ref), oracle, "offline run after the repair")
				if got := leftovers(t, p.cache); len(got) != 0 {
					t.Errorf("after the repair the cache holds %v", got)
				}
			})
		}
	}
}

// TestDamagedCacheObsolete: obsolete-check reads the cache with the git CLI
// too; git's complaint is a cache fault (exit 2 offline), and online the
// run repairs the cache and gives the verdict of an undamaged cache.
func TestDamagedCacheObsolete(t *testing.T) {
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			p := newProject(t, nil)
			want := p.run(t, "-o", "json", "obsolete-check", "app")
			if want.code != 1 && want.code != 0 {
				t.Fatalf("obsolete-check on a healthy cache: exit %d\n%s", want.code, want.stderr)
			}
			repo := p.cacheRepo(t)
			id := p.blobAt("v2.0.0", "src/app.txt")
			d.do(t, repo, id)
			// The verdict memo keeps what the first run computed on intact
			// objects: a warm run repeats those verdicts and reads none of
			// the damaged ones...
			warm := p.run(t, "--offline", "-o", "json", "obsolete-check", "app")
			if warm.code != want.code || warm.stdout != want.stdout {
				t.Errorf("offline obsolete-check from the verdict memo = exit %d\n%s%s\nwant exit %d\n%s", warm.code, warm.stdout, warm.stderr, want.code, want.stdout)
			}
			// ...and once the verdicts must be computed again, the damage is
			// a cache fault, never a verdict.
			if err := os.RemoveAll(filepath.Join(repo, "patchkit-verdicts")); err != nil {
				t.Fatal(err)
			}
			off := p.run(t, "--offline", "-o", "json", "obsolete-check", "app")
			wantDamaged(t, off, repo, "")
			got := p.run(t, "-o", "json", "obsolete-check", "app")
			if got.code != want.code || got.stdout != want.stdout {
				t.Errorf("online obsolete-check on a damaged cache = exit %d\n%s%s\nwant exit %d\n%s", got.code, got.stdout, got.stderr, want.code, want.stdout)
			}
			fsck(t, p.cacheRepo(t))
		})
	}
}

// stallServer serves git over smart HTTP (git http-backend) and, while
// stalled, stops every response after its first limit bytes until released.
type stallServer struct {
	*httptest.Server
	mu      sync.Mutex
	stalled bool
	release chan struct{}
}

func newStallServer(t *testing.T, root string, limit int) *stallServer {
	t.Helper()
	backend := gittest.HTTPBackend(t, root, "")
	s := &stallServer{release: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		stalled := s.stalled
		s.mu.Unlock()
		if stalled && strings.HasSuffix(r.URL.Path, "/git-upload-pack") {
			backend.ServeHTTP(&stallWriter{ResponseWriter: w, left: limit, release: s.release}, r)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		s.unstall()
		s.Close()
	})
	return s
}

func (s *stallServer) stall() {
	s.mu.Lock()
	s.stalled = true
	s.mu.Unlock()
}

func (s *stallServer) unstall() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stalled {
		s.stalled = false
		close(s.release)
	}
}

type stallWriter struct {
	http.ResponseWriter
	left    int
	release chan struct{}
}

func (w *stallWriter) Write(b []byte) (int, error) {
	if w.left <= 0 {
		<-w.release
		return 0, io.ErrClosedPipe
	}
	cut := len(b) > w.left
	if cut {
		b = b[:w.left]
	}
	n, err := w.ResponseWriter.Write(b)
	w.left -= n
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	if cut && err == nil {
		// A short write would end the response: stall here instead.
		<-w.release
		return n, io.ErrClosedPipe
	}
	return n, err
}

// waitFor polls until cond holds; the hang guard only stops a hung test.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("hang guard: still waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// tmpPackBytes is the size of the biggest temporary pack under dir.
func tmpPackBytes(dir string) int64 {
	var most int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "tmp_pack_") {
			if fi, err := d.Info(); err == nil && fi.Size() > most {
				most = fi.Size()
			}
		}
		return nil
	})
	return most
}

// TestKilledFetch: patchkit killed with SIGKILL while it fetches a large
// release over HTTP (the server stalls the pack half-way, so the kill lands
// mid-transfer, whatever the machine's speed); the next run leaves no
// temporary pack and gives git's verdict. Both the first clone and a later
// fetch into an existing cache are killed.
func TestKilledFetch(t *testing.T) {
	for _, first := range []bool{true, false} {
		name := "fetch into an existing cache"
		if first {
			name = "first clone"
		}
		t.Run(name, func(t *testing.T) {
			var srv *stallServer
			p := newProject(t, func(up *gittest.Repo) string {
				srv = newStallServer(t, filepath.Dir(up.Dir), 1<<20)
				return srv.URL + "/" + filepath.Base(up.Dir)
			})
			if !first {
				wantVerdict(t, p.run(t, "apply", "app", "--check"), p.oracle(t, "v1.0.0"), "filling the cache")
			}
			// A large release: 12 MiB that does not compress.
			for i := range 12 {
				buf := make([]byte, 1<<20)
				rand.Read(buf)
				write(t, filepath.Join(p.up.Dir, fmt.Sprintf("data/blob-%02d.bin", i)), string(buf))
			}
			p.up.Git("add", "-A")
			p.up.Commit("v3: large")
			p.up.Tag("v3.0.0")
			p.up.Git("update-server-info")
			srv.stall()
			cmd := p.cmd("apply", "app", "--check", "--ref", "v3.0.0")
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "a partial temporary pack", func() bool { return tmpPackBytes(p.cache) > 0 })
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			if got := leftovers(t, p.cache); len(got) == 0 {
				t.Fatalf("the killed fetch left nothing to clean up; stderr: %s", errOut.String())
			}
			srv.unstall()
			oracle := p.oracle(t, "v3.0.0")
			wantVerdict(t, p.run(t, "apply", "app", "--check", "--ref", "v3.0.0"), oracle, "rerun after the kill")
			if got := leftovers(t, p.cache); len(got) != 0 {
				t.Errorf("after the rerun the cache holds %v", got)
			}
			fsck(t, p.cacheRepo(t))
		})
	}
}

// TestKilledApplyOut: patchkit killed with SIGKILL while it writes the
// patched tree (a loose object of the cache is a FIFO, so the writer blocks
// half-way, whatever the machine's speed); the next run removes the
// temporary tree and writes git's result.
func TestKilledApplyOut(t *testing.T) {
	p := newProject(t, nil)
	p.up.Git("checkout", "-q", "-b", "release-1.1", "v1.0.0")
	for i := range 50 {
		p.up.Write(fmt.Sprintf("aaa/%02d.txt", i), fmt.Sprintf("file %d\n", i))
	}
	p.up.Write("zzz/last.txt", "walked last\n")
	p.up.Commit("v1.1: more files")
	p.up.Tag("v1.1.0")
	p.up.Git("checkout", "-q", "main")
	out := filepath.Join(p.root, "out")
	wantVerdict(t, p.run(t, "apply", "app", "--check", "--ref", "v1.1.0"), p.oracle(t, "v1.1.0"), "filling the cache")
	repo := p.cacheRepo(t)
	explode(t, repo)
	last := filepath.Join(repo, "objects", p.blobAt("v1.1.0", "zzz/last.txt")[:2], p.blobAt("v1.1.0", "zzz/last.txt")[2:])
	saved, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(last)
	if err := syscall.Mkfifo(last, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := p.cmd("apply", "app", "--ref", "v1.1.0", "--out", out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tmpTrees := func() []string {
		m, _ := filepath.Glob(filepath.Join(p.root, ".patchkit-tree-*"))
		return m
	}
	waitFor(t, "a temporary tree", func() bool {
		for _, m := range tmpTrees() {
			if _, err := os.Stat(filepath.Join(m, "aaa/49.txt")); err == nil {
				return true
			}
		}
		return false
	})
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if len(tmpTrees()) == 0 {
		t.Fatal("the killed write left no temporary tree")
	}
	os.Remove(last)
	write(t, last, string(saved))

	wantVerdict(t, p.run(t, "apply", "app", "--ref", "v1.1.0", "--out", out), 0, "rerun after the kill")
	if got := tmpTrees(); len(got) != 0 {
		t.Errorf("after the rerun %s holds %v", p.root, got)
	}
	// The oracle: git apply in a checkout of v1.1.0.
	dir := t.TempDir()
	gittest.Run(p.up.Dir, nil, "worktree", "add", "--detach", dir, "v1.1.0")
	t.Cleanup(func() { gittest.Run(p.up.Dir, nil, "worktree", "remove", "--force", dir) })
	if _, errOut, err := gittest.Run(dir, []byte(p.patch), "apply", "-"); err != nil {
		t.Fatalf("git apply: %v\n%s", err, errOut)
	}
	for _, f := range []string{"src/app.txt", "aaa/49.txt", "zzz/last.txt"} {
		want, _ := os.ReadFile(filepath.Join(dir, f))
		got, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s after the rerun = %q, %v; want %q (git apply)", f, got, err, want)
		}
	}
}

// lockWaiter reports whether pid waits for an exclusive flock on the file
// with inode ino, as /proc/locks shows it ("->" lines are waiters).
func lockWaiter(ino uint64, pid int) bool {
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) < 7 || f[1] != "->" || f[4] != "WRITE" || f[5] != strconv.Itoa(pid) {
			continue
		}
		parts := strings.Split(f[6], ":")
		if n, err := strconv.ParseUint(parts[len(parts)-1], 10, 64); err == nil && n == ino {
			return true
		}
	}
	return false
}

// TestRepairWaitsForReaders: a process reading the cache (holding the
// readers lock shared, as every open cache does) keeps its files while
// another process repairs the cache: the repair waits for the exclusive
// readers lock, then swaps the fresh clone in and gives git's verdict.
func TestRepairWaitsForReaders(t *testing.T) {
	p := newProject(t, nil)
	oracle := p.oracle(t, "v1.0.0")
	wantVerdict(t, p.run(t, "apply", "app", "--check"), oracle, "filling the cache")
	repo := p.cacheRepo(t)
	explode(t, repo)
	id := p.blobAt("v1.0.0", "src/app.txt")
	os.Remove(filepath.Join(repo, "objects", id[:2], id[2:]))
	before, err := os.Stat(repo)
	if err != nil {
		t.Fatal(err)
	}
	readersLock := strings.TrimSuffix(repo, ".git") + ".readers.lock"
	reader := exec.Command("flock", "--shared", readersLock, "cat")
	stdin, err := reader.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := reader.Start(); err != nil {
		t.Fatal(err)
	}
	defer reader.Wait()
	defer stdin.Close()
	waitFor(t, "the reader's lock", func() bool { _, err := os.Stat(readersLock); return err == nil })
	fi, err := os.Stat(readersLock)
	if err != nil {
		t.Fatal(err)
	}
	ino := fi.Sys().(*syscall.Stat_t).Ino

	repairer := p.cmd("apply", "app", "--check")
	var out, errOut bytes.Buffer
	repairer.Stdout, repairer.Stderr = &out, &errOut
	if err := repairer.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the repair to wait for the readers", func() bool { return lockWaiter(ino, repairer.Process.Pid) })
	// The reader's view is intact: same directory, same objects.
	now, err := os.Stat(repo)
	if err != nil || !os.SameFile(before, now) {
		t.Fatalf("the cache directory was replaced under a live reader")
	}
	if _, errOut, err := gittest.Run(repo, nil, "cat-file", "-p", p.blobAt("v1.0.0", "src/other.txt")); err != nil {
		t.Fatalf("reading the cache under the reader's lock: %v\n%s", err, errOut)
	}
	stdin.Close()
	reader.Wait()
	err = repairer.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	wantVerdict(t, result{code, out.String(), errOut.String()}, oracle, "the repairing run")
	now, err = os.Stat(p.cacheRepo(t))
	if err != nil || os.SameFile(before, now) {
		t.Errorf("the repair did not swap in a fresh clone")
	}
	fsck(t, p.cacheRepo(t))
}

// TestDamagedCacheBuild: build reads the cache too. Offline, a damaged cache
// is exit 2 "cache damaged", never "the series does not apply"; online, the
// build repairs the cache and writes the image.
func TestDamagedCacheBuild(t *testing.T) {
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			p := newProject(t, nil)
			write(t, filepath.Join(p.root, "images/app/patchkit.yaml"),
				"upstream:\n  url: "+p.up.URL()+"\n  ref: v1.0.0\npatches: patches/app\n"+
					"build:\n  builder: native\n  base: scratch\n  files:\n    - {from: src/app.txt, to: /app.txt}\n"+
					"image:\n  repository: app\n  tag: v1\n")
			layout := filepath.Join(t.TempDir(), "oci")
			if r := p.run(t, "build", "app", "--oci-layout", layout); r.code != 0 {
				t.Fatalf("build on a healthy cache: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			repo := p.cacheRepo(t)
			id := p.blobAt("v1.0.0", "src/app.txt")
			d.do(t, repo, id)

			r := p.run(t, "--offline", "build", "app", "--oci-layout", layout)
			wantDamaged(t, r, repo, id)
			if strings.Contains(r.stdout+r.stderr, "does not apply") {
				t.Errorf("offline build on a damaged cache blamed the series:\n%s%s", r.stdout, r.stderr)
			}
			if r := p.run(t, "build", "app", "--oci-layout", layout); r.code != 0 {
				t.Fatalf("online build on a damaged cache: exit %d, want 0 after the repair\n%s%s", r.code, r.stdout, r.stderr)
			}
			fsck(t, p.cacheRepo(t))
		})
	}
}
