package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"

	"github.com/patchkit/patchkit/internal/gittest"
)

// manyRefs is an upstream shaped like a GitHub mirror: annotated and
// lightweight tags, branches, HEAD on a branch other than the first, and
// refs/pull/*, n refs in all.
func manyRefs(t *testing.T, n int) *gittest.Repo {
	t.Helper()
	r := gittest.New(t)
	r.Write("a.txt", "a\n")
	first := r.Commit("first")
	r.Write("a.txt", "b\n")
	second := r.Commit("second")
	r.Tag("v1.0.0")
	r.Git("tag", "v1.0.1-light", first)
	r.Git("checkout", "-q", "-b", "develop")
	var in strings.Builder
	for i := range n - 4 {
		target := first
		if i%2 == 0 {
			target = second
		}
		fmt.Fprintf(&in, "create refs/pull/%d/head %s\n", i, target)
	}
	r.GitIn([]byte(in.String()), "update-ref", "--stdin")
	return r
}

// goGitListing is the listing through go-git's own session, as patchkit
// read it before.
func goGitListing(t *testing.T, url string) *packp.AdvRefs {
	t.Helper()
	ep, err := transport.NewEndpoint(url)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.NewClient(ep)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := cl.NewUploadPackSession(ep, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	ar, err := sess.AdvertisedReferences()
	if err != nil {
		t.Fatalf("go-git's listing of %s: %v", url, err)
	}
	return ar
}

// lsRemote is the oracle: `git ls-remote` over protocol v0, one line per
// ref and per peeled tag, sorted.
func lsRemote(t *testing.T, url string) []string {
	t.Helper()
	want, e, err := gitLsRemote(url)
	if err != nil {
		t.Fatalf("git ls-remote %s: %v: %s", url, err, e)
	}
	return want
}

// gitLsRemote is `git ls-remote` of url over protocol v0 with the variables
// env added to the tests' environment: its lines sorted, its standard error.
func gitLsRemote(url string, env ...string) (lines []string, stderr string, err error) {
	git := exec.Command("git", "-c", "protocol.version=0", "ls-remote", url)
	git.Env = gittest.Env(env...)
	var out, errOut strings.Builder
	git.Stdout, git.Stderr = &out, &errOut
	err = git.Run()
	lines = strings.Split(strings.TrimSpace(out.String()), "\n")
	sort.Strings(lines)
	return lines, errOut.String(), err
}

// sameListing fails the test unless ar lists what want (lsRemote's lines)
// does.
func sameListing(t *testing.T, url string, ar *packp.AdvRefs, want []string) {
	t.Helper()
	if got := lines(ar); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("listRefs(%s) listed %d lines, git ls-remote %d; first difference at %s", url, len(got), len(want), firstDiff(got, want))
	}
}

// lines is ar as `git ls-remote` prints it.
func lines(ar *packp.AdvRefs) []string {
	var out []string
	if ar.Head != nil {
		out = append(out, ar.Head.String()+"\tHEAD")
	}
	for name, h := range ar.References {
		out = append(out, h.String()+"\t"+name)
	}
	for name, h := range ar.Peeled {
		out = append(out, h.String()+"\t"+name+"^{}")
	}
	sort.Strings(out)
	return out
}

// listing lists url's refs, given up after within.
func listing(t *testing.T, url string, within time.Duration) (*packp.AdvRefs, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	return (&Cache{}).listRefs(ctx, url, 5*time.Second)
}

// TestListRefsMatchesGit lists an upstream of 3,000 refs over file:// and
// git:// (a real git daemon): the refs and peeled tags are `git ls-remote`'s,
// and the advertisement (capabilities, HEAD's branch) is go-git's session's.
// The listing reads the stream through a buffer: a few dozen reads, where
// go-git's session makes two per ref.
func TestListRefsMatchesGit(t *testing.T) {
	const n = 3000
	r := manyRefs(t, n)
	for _, url := range []string{r.URL(), gittest.Daemon(t, r.Dir)} {
		t.Run(strings.SplitN(url, ":", 2)[0], func(t *testing.T) {
			reads := 0
			listSource = func(r io.Reader) io.Reader { return readCounter{r, &reads} }
			t.Cleanup(func() { listSource = nil })
			ar, err := listing(t, url, 20*time.Second)
			if err != nil {
				t.Fatalf("listRefs(%s) = %v", url, err)
			}
			sameListing(t, url, ar, lsRemote(t, url))
			if len(ar.References) < n {
				t.Errorf("listRefs(%s) listed %d refs, want at least %d", url, len(ar.References), n)
			}
			old := goGitListing(t, url)
			if got, want := ar.Capabilities.String(), old.Capabilities.String(); got != want {
				t.Errorf("capabilities = %q, go-git's session read %q", got, want)
			}
			head, err := ar.AllReferences()
			if err != nil {
				t.Fatal(err)
			}
			if h, err := head.Reference("HEAD"); err != nil || h.Target() != "refs/heads/develop" {
				t.Errorf("HEAD = %v, %v; want a symbolic ref to refs/heads/develop", h, err)
			}
			if reads > n/20 {
				t.Errorf("the listing read its stream %d times for %d refs; want it buffered (at most %d reads)", reads, n, n/20)
			}
		})
	}
}

type readCounter struct {
	r io.Reader
	n *int
}

func (c readCounter) Read(p []byte) (int, error) {
	*c.n++
	return c.r.Read(p)
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("%q against %q", a[i], b[i])
		}
	}
	return "the end of the shorter"
}

// TestListRefsAnswers: what the listing makes of answers that are not a
// list of refs, over file:// and over git:// (a real git daemon, and
// servers that lie or stall): a repository that does not exist, one with
// no refs, text that is not an advertisement, an advertisement cut off, and
// silence, which ends with the context as a timeout. None of them reads as
// a damaged cache.
func TestListRefsAnswers(t *testing.T) {
	base := t.TempDir()
	empty := filepath.Join(base, "empty.git")
	if _, e, err := gittest.Run(base, nil, "init", "-q", "--bare", empty); err != nil {
		t.Fatalf("git init: %v: %s", err, e)
	}
	daemon := gittest.Daemon(t, empty)
	missing := strings.TrimSuffix(daemon, "empty.git") + "missing.git"
	full := manyRefs(t, 50)
	advert, e, err := gittest.Run(full.Dir, []byte("0000"), "upload-pack", "--", full.Dir)
	if err != nil {
		t.Fatalf("git upload-pack: %v: %s", err, e)
	}
	for _, tc := range []struct {
		name, url string
		want      error
	}{
		{"file, no repository", "file://" + filepath.Join(base, "missing.git"), transport.ErrRepositoryNotFound},
		{"git daemon, no repository", missing, transport.ErrRepositoryNotFound},
		{"file, no refs", "file://" + empty, transport.ErrEmptyRemoteRepository},
		{"git daemon, no refs", daemon, transport.ErrEmptyRemoteRepository},
		{"not an advertisement", fakeDaemon(t, "HTTP/1.1 400 Bad Request\r\n\r\n", false), nil},
		{"cut off", fakeDaemon(t, advert[:len(advert)/2], false), nil},
		{"closed at once", fakeDaemon(t, "", false), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ar, err := listing(t, tc.url, 20*time.Second)
			if err == nil {
				t.Fatalf("listRefs(%s) = %d refs, want an error", tc.url, len(ar.References))
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("listRefs(%s) = %v, want %v", tc.url, err, tc.want)
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("listRefs(%s) = %v, which AsFault would read as a damaged cache", tc.url, err)
			}
		})
	}
	t.Run("silent", func(t *testing.T) {
		_, err := listing(t, fakeDaemon(t, "", true), 300*time.Millisecond)
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("listRefs of a server that never answers = %v, want a timeout", err)
		}
	})
}

// fakeDaemon is a git:// server that reads the request, writes answer and
// closes the connection, or (hold) says nothing and keeps it open until the
// test ends.
func fakeDaemon(t *testing.T, answer string, hold bool) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.Read(make([]byte, 4096))
				if hold {
					<-done
					return
				}
				io.WriteString(c, answer)
			}()
		}
	}()
	return "git://" + l.Addr().String() + "/repo.git"
}

// TestListRefsThroughGitProxy: with GIT_PROXY_COMMAND set, a git://
// upstream is listed through that program, as git reaches it (the fetch
// after the listing always did): it is run with the host and the port, and
// `git ls-remote` in the same environment runs it the same way and lists
// the same refs. The proxy here is `git daemon --inetd`, serving the
// request it reads on its standard input.
func TestListRefsThroughGitProxy(t *testing.T) {
	r := manyRefs(t, 20)
	dir := t.TempDir()
	log := filepath.Join(dir, "proxy.log")
	proxy := filepath.Join(dir, "proxy")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> " + log + "\nexec git daemon --inetd --export-all --base-path=" + filepath.Dir(r.Dir) + "\n"
	if err := os.WriteFile(proxy, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_PROXY_COMMAND", proxy)
	for _, url := range []string{
		"git://example.invalid/" + filepath.Base(r.Dir),
		"git://example.invalid:1234/" + filepath.Base(r.Dir),
	} {
		t.Run(url, func(t *testing.T) {
			os.Remove(log)
			want, e, err := gitLsRemote(url, "GIT_PROXY_COMMAND="+proxy)
			if err != nil {
				t.Fatalf("git ls-remote %s: %v: %s", url, err, e)
			}
			gitLog := readAndRemove(t, log)
			ar, err := listing(t, url, 20*time.Second)
			if err != nil {
				t.Fatalf("listRefs(%s) = %v", url, err)
			}
			if got := readAndRemove(t, log); got != gitLog {
				t.Errorf("the proxy ran as %q; git ran it as %q", got, gitLog)
			}
			sameListing(t, url, ar, want)
			// The whole fetch goes through it: the listing, then git fetch.
			c := open(t, t.TempDir(), url)
			if err := c.Fetch(context.Background()); err != nil {
				t.Fatalf("Fetch through the proxy: %v", err)
			}
			if got, want := resolveOK(t, c, "v1.0.0"), strings.TrimSpace(r.Git("rev-parse", "v1.0.0^{commit}")); got != want {
				t.Errorf("v1.0.0 resolved to %s, want %s", got, want)
			}
			if ran := strings.Count(readAndRemove(t, log), "\n"); ran < 2 {
				t.Errorf("the fetch ran the proxy %d times; want the listing's and git fetch's", ran)
			}
		})
	}
}

// readAndRemove is the text of the log at path ("" when nothing wrote it),
// and removes the file.
func readAndRemove(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	os.Remove(path)
	return string(b)
}
