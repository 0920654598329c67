package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/tree"
)

// Source is a base tree the gate reads and writes out: an upstream snapshot,
// or a tree.Map in tests.
type Source interface {
	tree.Source
	tree.Walker
}

// Gate runs one image's regression test. Make it with New.
type Gate struct {
	specFile string
	// applyOpts apply the series as the unit's tool does (spec.Apply).
	applyOpts []apply.Option
	pkg       string
	pattern   string
	inject    []injected
	env       []string
	tmpDir    string
	progress  io.Writer
	run       runner
}

// injected is one test.inject file, read at construction.
type injected struct {
	key  string // spec key, for messages: test.inject[0].to
	line int
	to   string
	data []byte
}

// runner runs the go command in dir with env and returns its stdout and
// stderr. An *exec.ExitError is what a failing test gives; any other error
// means go could not run at all.
type runner func(ctx context.Context, dir string, env []string, args ...string) (stdout, stderr []byte, err error)

// Option configures New.
type Option func(*Gate)

// WithEnv adds KEY=VALUE pairs to the environment of go test, after the
// process's own (GOCACHE, GOPATH, GOPROXY, GOFLAGS pass through unchanged).
func WithEnv(kv ...string) Option {
	return func(g *Gate) { g.env = append(g.env, kv...) }
}

// WithOffline sets GOPROXY=off for go test when offline is true, so a run
// that needs a module the module cache lacks fails at once instead of
// reaching for the network.
func WithOffline(offline bool) Option {
	return func(g *Gate) {
		if offline {
			g.env = append(g.env, "GOPROXY=off")
		}
	}
}

// WithTempDir makes the gate write its trees under dir instead of the
// system's temporary directory. Each tree is removed after its run.
func WithTempDir(dir string) Option {
	return func(g *Gate) { g.tmpDir = dir }
}

// WithProgress sends one line per go test run to w ("gate: without
// 0002-x.diff"). The default discards it.
func WithProgress(w io.Writer) Option {
	return func(g *Gate) {
		if w != nil {
			g.progress = w
		}
	}
}

// withRunner replaces the go command: the unit tests' seam.
func withRunner(r runner) Option {
	return func(g *Gate) { g.run = r }
}

// New returns the gate of the image spec s, whose repository root is root.
// It reads the test.inject files now, so a missing one is bad input before
// any test runs. A spec without a test section is bad input too.
func New(root string, s *spec.Spec, opts ...Option) (*Gate, error) {
	if s.Test == nil {
		return nil, &diag.InputError{File: s.File, Key: "test", Msg: "the image has no regression test: add a test section with package and run"}
	}
	g := &Gate{
		specFile:  s.File,
		applyOpts: apply.ForTool(s.Apply.Whitespace, s.Apply.Fuzz, s.Apply.Loose),
		pkg:       s.Test.Package,
		pattern:   s.Test.Run,
		progress:  io.Discard,
		run:       execGo,
	}
	for i, in := range s.Test.Inject {
		key := fmt.Sprintf("test.inject[%d]", i)
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(in.From)))
		if err != nil {
			return nil, &diag.InputError{File: s.File, Line: s.Line(key + ".from"), Key: key + ".from", Msg: "reading the test file", Err: err}
		}
		g.inject = append(g.inject, injected{key: key + ".to", line: s.Line(key + ".to"), to: in.To, data: data})
	}
	for _, o := range opts {
		o(g)
	}
	return g, nil
}

// Package is the go package the gate tests (./pkg/controller).
func (g *Gate) Package() string { return g.pkg }

// Pattern is the -run pattern; "" runs every test of the package.
func (g *Gate) Pattern() string { return g.pattern }

// Run writes src with changes laid over it (a nil value deletes a path) and
// the injected test files into a temporary directory, runs go test there and
// removes the directory. The Result says whether the gate passed; an error
// means the test could not be run at all (no go command, a full disk, a
// cancelled context, or an injected file that would land outside the tree).
func (g *Gate) Run(ctx context.Context, src Source, changes map[string]*tree.File) (*Result, error) {
	overlay := make(map[string]*tree.File, len(changes)+len(g.inject))
	for p, f := range changes {
		overlay[p] = f
	}
	for _, in := range g.inject {
		if err := checkInject(src, overlay, in.to); err != nil {
			return nil, &diag.InputError{File: g.specFile, Line: in.line, Key: in.key, Msg: err.Error()}
		}
		overlay[in.to] = &tree.File{Mode: tree.Regular, Data: in.data}
	}
	tmp, err := os.MkdirTemp(g.tmpDir, "patchkit-gate-*")
	if err != nil {
		return nil, fmt.Errorf("creating the gate's directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "src")
	if err := tree.WriteAtomic(dir, src, overlay); err != nil {
		return nil, fmt.Errorf("writing the tree to test: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	env := append(os.Environ(), g.env...)
	args := []string{"test", "-json", "-count=1"}
	if !setsTrimpath(env) {
		args = append(args, "-trimpath")
	}
	if g.pattern != "" {
		args = append(args, "-run", g.pattern)
	}
	args = append(args, g.pkg)
	stdout, stderr, err := g.run(ctx, dir, env, args...)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, ctxErr
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return nil, fmt.Errorf("running go %s: %w", strings.Join(args, " "), err)
	}
	res := evaluate(parse(stdout), stderr, err, g.pattern, g.pkg)
	if !res.OK && res.Ran == 0 {
		if why := environmentFault(stdout, stderr); why != "" {
			return nil, fmt.Errorf("go test %s could not run: %s: a fault of the machine (TMPDIR, GOCACHE), not of the code", g.pkg, why)
		}
	}
	return res, nil
}

// environmentFault names the machine fault in go's output that kept the
// tests from building or running (a full disk, no memory), or "".
func environmentFault(out ...[]byte) string {
	for _, b := range out {
		low := strings.ToLower(string(b))
		for _, why := range []string{"no space left on device", "disk quota exceeded", "read-only file system", "cannot allocate memory", "too many open files"} {
			if strings.Contains(low, why) {
				return why
			}
		}
	}
	return ""
}

// setsTrimpath reports whether the GOFLAGS that go will see (the last one in
// env) already says -trimpath, either way: the user's choice stands.
//
// Otherwise the gate adds -trimpath. Each run writes its tree to a fresh
// directory, and without -trimpath that directory is part of the build
// cache's key, so every package of the tree would be compiled again in every
// run. With it, a run compiles only the packages whose files changed (and
// those that import them). The cost: file names in the test binary are
// module-relative, so a test that finds its files through runtime.Caller
// sees "example.com/mod/pkg/x_test.go", not an absolute path.
func setsTrimpath(env []string) bool {
	flags := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GOFLAGS="); ok {
			flags = v
		}
	}
	for _, f := range strings.Fields(flags) {
		f = strings.TrimPrefix(strings.TrimPrefix(f, "-"), "-")
		if f == "trimpath" || strings.HasPrefix(f, "trimpath=") {
			return true
		}
	}
	return false
}

// checkInject refuses an injected file whose path runs through a file or
// symlink of the tree, or that would replace a symlink: it must land inside
// the tree it is written to.
func checkInject(src tree.Source, overlay map[string]*tree.File, to string) error {
	lookup := func(p string) (*tree.File, error) {
		if f, ok := overlay[p]; ok {
			return f, nil // nil: deleted by the series
		}
		f, ok, err := src.Read(p)
		if err != nil || !ok {
			return nil, err
		}
		return f, nil
	}
	for d := path.Dir(to); d != "."; d = path.Dir(d) {
		f, err := lookup(d)
		if err != nil {
			return err
		}
		if f != nil {
			return fmt.Errorf("%s: %s is a file or symlink in the patched tree, not a directory", to, d)
		}
	}
	f, err := lookup(to)
	if err != nil {
		return err
	}
	if f != nil && f.Mode != tree.Regular && f.Mode != tree.Executable {
		return fmt.Errorf("%s is a symlink or submodule in the patched tree", to)
	}
	return nil
}

// execGo runs the go command found in PATH. A cancelled context interrupts
// it, and kills it if it has not stopped after a few seconds.
func execGo(ctx context.Context, dir string, env []string, args ...string) ([]byte, []byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.Bytes(), stderr.Bytes(), err
}
