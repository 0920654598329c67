// Package gittest builds small git repositories for tests with the git CLI,
// which is also the oracle that patchkit's verdicts are checked against.
package gittest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Env is the environment every git command of this package runs with: no user
// or system configuration, a fixed identity, and no prompts.
func Env(extra ...string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Test Author",
		"GIT_AUTHOR_EMAIL=author@example.com",
		"GIT_COMMITTER_NAME=Test Committer",
		"GIT_COMMITTER_EMAIL=committer@example.com",
		"GIT_TERMINAL_PROMPT=0",
	)
	return append(env, extra...)
}

// Repo is a git repository with a work tree in a test's temp dir.
type Repo struct {
	TB  testing.TB
	Dir string
	// tick advances the commit dates so that every commit has its own time.
	tick int
}

// New makes an empty repository whose default branch is main.
func New(tb testing.TB) *Repo {
	tb.Helper()
	r := &Repo{TB: tb, Dir: tb.TempDir()}
	r.Git("init", "-q", "-b", "main")
	r.Git("config", "core.autocrlf", "false")
	return r
}

// Run runs git in dir and returns its stdout, stderr and error.
func Run(dir string, stdin []byte, args ...string) (stdout, stderr string, err error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = Env()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// Git runs git in the repository, fails the test on error, and returns stdout
// with its trailing newline removed.
func (r *Repo) Git(args ...string) string {
	r.TB.Helper()
	out, errOut, err := r.run(nil, args...)
	if err != nil {
		r.TB.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return strings.TrimRight(out, "\n")
}

// GitIn runs git with stdin and returns stdout, stderr and the error, without failing.
func (r *Repo) GitIn(stdin []byte, args ...string) (string, string, error) {
	return r.run(stdin, args...)
}

func (r *Repo) run(stdin []byte, args ...string) (string, string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = r.Dir
	date := fmt.Sprintf("@%d +0000", 1700000000+r.tick*60)
	cmd.Env = Env("GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	return o.String(), e.String(), err
}

// Write writes a regular file (mode 0644), creating directories.
func (r *Repo) Write(path, content string) { r.WriteMode(path, content, 0o644) }

// WriteMode writes a file with the given permission bits.
func (r *Repo) WriteMode(path, content string, mode os.FileMode) {
	r.TB.Helper()
	full := filepath.Join(r.Dir, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		r.TB.Fatal(err)
	}
	os.Remove(full)
	if err := os.WriteFile(full, []byte(content), mode); err != nil {
		r.TB.Fatal(err)
	}
	if err := os.Chmod(full, mode); err != nil {
		r.TB.Fatal(err)
	}
}

// Symlink makes path a symbolic link to target.
func (r *Repo) Symlink(path, target string) {
	r.TB.Helper()
	full := filepath.Join(r.Dir, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		r.TB.Fatal(err)
	}
	os.Remove(full)
	if err := os.Symlink(target, full); err != nil {
		r.TB.Fatal(err)
	}
}

// Remove deletes path from the work tree.
func (r *Repo) Remove(path string) {
	r.TB.Helper()
	if err := os.RemoveAll(filepath.Join(r.Dir, path)); err != nil {
		r.TB.Fatal(err)
	}
}

// Read returns a work-tree file's content.
func (r *Repo) Read(path string) string {
	r.TB.Helper()
	b, err := os.ReadFile(filepath.Join(r.Dir, path))
	if err != nil {
		r.TB.Fatal(err)
	}
	return string(b)
}

// Commit stages everything and commits it, returning the commit id.
func (r *Repo) Commit(msg string) string {
	r.TB.Helper()
	r.tick++
	r.Git("add", "-A")
	r.Git("commit", "-q", "--allow-empty", "-m", msg)
	return r.Git("rev-parse", "HEAD")
}

// Tag makes an annotated tag at HEAD.
func (r *Repo) Tag(name string) {
	r.TB.Helper()
	r.Git("tag", "-a", "-m", name, name)
}

// Release commits the work tree as msg (see Commit), tags the commit tag (see
// Tag) and returns its id.
func (r *Repo) Release(msg, tag string) string {
	r.TB.Helper()
	id := r.Commit(msg)
	r.Tag(tag)
	return id
}

// Head returns the commit id of HEAD.
func (r *Repo) Head() string { return r.Git("rev-parse", "HEAD") }

// URL is the repository's file:// URL.
func (r *Repo) URL() string { return "file://" + r.Dir }

// Show returns `git show --format= --full-index --binary COMMIT`, the diff of a commit.
func (r *Repo) Show(commit string) string {
	return r.Git("show", "--format=", "--binary", commit) + "\n"
}

// WriteFiles writes files (slash-separated paths relative to root, and their
// contents) under root, creating directories as needed: the repository
// fixtures of the spec, matrix and verify tests.
func WriteFiles(tb testing.TB, root string, files map[string]string) {
	tb.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// ReadFile reads the file name (slash-separated) under root, failing the
// test if it cannot.
func ReadFile(tb testing.TB, root, name string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// Files is a directory a test writes files into and reads them back from
// by slash path, such as a downstream repository's root, which needs no
// commits: WriteFiles and ReadFile bound to one test and one root.
type Files struct {
	TB   testing.TB
	Root string
}

// Write writes content to path (slash-separated) under Root.
func (f Files) Write(path, content string) {
	f.TB.Helper()
	WriteFiles(f.TB, f.Root, map[string]string{path: content})
}

// Read reads path (slash-separated) under Root, failing the test if it cannot.
func (f Files) Read(path string) string {
	f.TB.Helper()
	return ReadFile(f.TB, f.Root, path)
}

// Numbered returns n lines, fmt.Sprintf(format, i) for i from 1 to n, each
// ending in a newline: Numbered("line%d", 3) is "line1\nline2\nline3\n".
func Numbered(format string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, format+"\n", i)
	}
	return b.String()
}
