package gate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/gate/gatetest"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/tree"
)

func testSpec(t *testing.T, root, yaml string) *spec.Spec {
	t.Helper()
	s, err := spec.LoadReader(strings.NewReader(yaml), root, "x")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const fakeSpec = `upstream: {url: file:///u, ref: v1}
patches: patches/x
test:
  inject:
    - from: patches/x/tests/x_test.go
      to: pkg/x_test.go
  package: ./pkg
  run: '^TestX$'
`

// TestRunWithFakeRunner checks the go command line, the environment and the
// tree the test runs in, through the runner seam.
func TestRunWithFakeRunner(t *testing.T) {
	root := t.TempDir()
	gatetest.WriteFile(t, root, "patches/x/tests/x_test.go", "package pkg // injected\n")
	var gotArgs, gotEnv []string
	var injected, patched string
	fake := func(_ context.Context, dir string, env []string, args ...string) ([]byte, []byte, error) {
		gotArgs, gotEnv = args, env
		b, _ := os.ReadFile(filepath.Join(dir, "pkg", "x_test.go"))
		injected = string(b)
		b, _ = os.ReadFile(filepath.Join(dir, "pkg", "x.go"))
		patched = string(b)
		return lines(ev("run", "TestX", ""), ev("pass", "TestX", "")), nil, nil
	}
	g, err := New(root, testSpec(t, root, fakeSpec), withRunner(fake), WithOffline(true), WithEnv("GOFLAGS=-mod=vendor"))
	if err != nil {
		t.Fatal(err)
	}
	src := tree.Map{"pkg/x.go": {Mode: tree.Regular, Data: []byte("package pkg // upstream\n")}, "go.mod": {Mode: tree.Regular, Data: []byte("module x\n")}}
	res, err := g.Run(context.Background(), src, map[string]*tree.File{"pkg/x.go": {Mode: tree.Regular, Data: []byte("package pkg // patched\n")}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Ran != 1 {
		t.Errorf("Run() = %+v, want a pass", res)
	}
	if want := []string{"test", "-json", "-count=1", "-trimpath", "-run", "^TestX$", "./pkg"}; !slices.Equal(gotArgs, want) {
		t.Errorf("go args = %q, want %q", gotArgs, want)
	}
	if !slices.Contains(gotEnv, "GOPROXY=off") || !slices.Contains(gotEnv, "GOFLAGS=-mod=vendor") || !slices.Contains(gotEnv, "PATH="+os.Getenv("PATH")) {
		t.Errorf("go env lacks GOPROXY=off, the extra GOFLAGS or the process's PATH: %q", gotEnv)
	}
	if injected != "package pkg // injected\n" || patched != "package pkg // patched\n" {
		t.Errorf("tree under test: injected %q, patched %q", injected, patched)
	}
}

func TestRunErrors(t *testing.T) {
	root := t.TempDir()
	gatetest.WriteFile(t, root, "patches/x/tests/x_test.go", "package pkg\n")
	s := testSpec(t, root, fakeSpec)
	pass := func(context.Context, string, []string, ...string) ([]byte, []byte, error) {
		return lines(ev("run", "TestX", ""), ev("pass", "TestX", "")), nil, nil
	}
	t.Run("inject through a symlink", func(t *testing.T) {
		g, _ := New(root, s, withRunner(pass))
		_, err := g.Run(context.Background(), tree.Map{"pkg": {Mode: tree.Symlink, Data: []byte("/etc")}}, nil)
		var ie *diag.InputError
		if !errors.As(err, &ie) || ie.Key != "test.inject[0].to" || ie.Line != 6 {
			t.Errorf("Run() error = %v, want an input error at test.inject[0].to, line 6", err)
		}
	})
	t.Run("inject replacing a symlink", func(t *testing.T) {
		g, _ := New(root, s, withRunner(pass))
		_, err := g.Run(context.Background(), tree.Map{"pkg/x_test.go": {Mode: tree.Symlink, Data: []byte("/etc/passwd")}}, nil)
		if !diag.IsInput(err) {
			t.Errorf("Run() error = %v, want an input error", err)
		}
	})
	t.Run("go missing", func(t *testing.T) {
		g, _ := New(root, s, withRunner(func(context.Context, string, []string, ...string) ([]byte, []byte, error) {
			return nil, nil, errors.New(`exec: "go": executable file not found in $PATH`)
		}))
		_, err := g.Run(context.Background(), tree.Map{}, nil)
		if err == nil || !strings.Contains(err.Error(), "executable file not found") {
			t.Errorf("Run() error = %v, want go's absence", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		g, _ := New(root, s, withRunner(pass))
		if _, err := g.Run(ctx, tree.Map{}, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("Run() error = %v, want context.Canceled", err)
		}
	})
	t.Run("missing inject file", func(t *testing.T) {
		_, err := New(t.TempDir(), s)
		var ie *diag.InputError
		if !errors.As(err, &ie) || ie.Key != "test.inject[0].from" {
			t.Errorf("New() error = %v, want an input error at test.inject[0].from", err)
		}
	})
	t.Run("no test section", func(t *testing.T) {
		_, err := New(root, testSpec(t, root, "upstream: {url: file:///u, ref: v1}\npatches: p\n"))
		if !diag.IsInput(err) || !strings.Contains(err.Error(), "no regression test") {
			t.Errorf("New() error = %v, want no regression test", err)
		}
	})
}

// greeter prepares the greeter example as the gate command does.
func greeter(t *testing.T, root, url string) (*Gate, *pipeline.Image, Source) {
	t.Helper()
	ctx := context.Background()
	im, err := pipeline.Prepare(ctx, pipeline.Env{Root: root, CacheDir: t.TempDir(), UpstreamURL: url}, "greeter", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { im.Close() })
	src, err := im.Cache.Source(im.Commit)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(root, im.Spec, WithTempDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	return g, im, src
}

// TestGreeter runs the real go test on the example: the gate passes on the
// series, fails on the pin, and the matrix matches the Test: headers.
func TestGreeter(t *testing.T) {
	root, url := gatetest.Greeter(t)
	g, im, src := greeter(t, root, url)
	ctx := context.Background()
	res, _, err := im.Apply()
	if err != nil || !res.OK {
		t.Fatalf("Apply() = %+v, %v", res, err)
	}
	full, err := g.Run(ctx, src, res.Changes)
	if err != nil {
		t.Fatal(err)
	}
	if !full.OK || full.Ran != 4 || full.Passed != 4 || full.Failed != 0 {
		t.Fatalf("Run(series) = %+v, want 4 tests passed", full)
	}
	own, err := g.Ownership(ctx, src, im.Patches, full)
	if err != nil {
		t.Fatal(err)
	}
	wantCols := []string{"TestGreeterPatches/plain_name", "TestGreeterPatches/empty_name", "TestGreeterPatches/shout_trims"}
	if !slices.Equal(own.Subtests, wantCols) {
		t.Errorf("Subtests = %q, want %q", own.Subtests, wantCols)
	}
	if !own.OK() {
		t.Errorf("Findings = %+v, want none", own.Findings)
	}
	if want := []string{Green, Red, Red}; !slices.Equal(own.Pin.Cells, want) || own.Pin.Result.OK {
		t.Errorf("pin cells = %q, want %q", own.Pin.Cells, want)
	}
	want := map[string][]string{
		"0001-greet-world.diff": {Green, Red, Green},
		"0002-shout-trims.diff": {Green, Green, Red},
	}
	if len(own.Patches) != 2 {
		t.Fatalf("Patches = %+v, want 2 rows", own.Patches)
	}
	for _, row := range own.Patches {
		if !slices.Equal(row.Cells, want[row.Patch]) || !row.Match || row.Status != RowRan {
			t.Errorf("row %s = %q match %v, want %q", row.Patch, row.Cells, row.Match, want[row.Patch])
		}
	}
}

// TestGreeterFindings breaks the example: a Test: header that names the
// wrong subtest, and an injected test that passes on the pin.
func TestGreeterFindings(t *testing.T) {
	root, url := gatetest.Greeter(t)
	p := filepath.Join(root, "patches", "greeter", "0002-shout-trims.diff")
	b, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(b), "Test: TestGreeterPatches/shout_trims", "Test: TestGreeterPatches/plain_name", 1)), 0o644)
	g, im, src := greeter(t, root, url)
	ctx := context.Background()
	res, _, _ := im.Apply()
	full, err := g.Run(ctx, src, res.Changes)
	if err != nil || !full.OK {
		t.Fatalf("Run(series) = %+v, %v", full, err)
	}
	own, err := g.Ownership(ctx, src, im.Patches, full)
	if err != nil {
		t.Fatal(err)
	}
	if len(own.Findings) != 1 || own.Findings[0].Patch != "0002-shout-trims.diff" {
		t.Fatalf("Findings = %+v, want one on 0002", own.Findings)
	}
	msg := own.Findings[0].Message
	for _, w := range []string{"TestGreeterPatches/shout_trims also go red", "TestGreeterPatches/plain_name, but it stays green"} {
		if !strings.Contains(msg, w) {
			t.Errorf("finding = %q, want it to contain %q", msg, w)
		}
	}

	// Only plain_name: green on the pin too, so the test guards nothing.
	os.WriteFile(filepath.Join(root, "patches", "greeter", "tests", "patches_test.go"), []byte(`package greet

import "testing"

func TestGreeterPatches(t *testing.T) {
	t.Run("plain_name", func(t *testing.T) {
		if Greet("Ada") != "Hello, Ada!" {
			t.Fail()
		}
	})
}
`), 0o644)
	g, err = New(root, im.Spec, WithTempDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	full, err = g.Run(ctx, src, res.Changes)
	if err != nil || !full.OK {
		t.Fatalf("Run(series) = %+v, %v", full, err)
	}
	own, err = g.Ownership(ctx, src, im.Patches, full)
	if err != nil {
		t.Fatal(err)
	}
	if len(own.Findings) == 0 || !strings.Contains(own.Findings[0].Message, "does not guard the series") {
		t.Errorf("Findings = %+v, want the pin passing", own.Findings)
	}
}

// TestGreeterRunFailures: a pattern that matches nothing, and a test that
// does not compile, are failures, never passes.
func TestGreeterRunFailures(t *testing.T) {
	root, url := gatetest.Greeter(t)
	_, im, src := greeter(t, root, url)
	res, _, _ := im.Apply()
	ctx := context.Background()

	s := *im.Spec
	tst := *s.Test
	tst.Run = "^TestNothing$"
	s.Test = &tst
	g, err := New(root, &s, WithTempDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	r, err := g.Run(ctx, src, res.Changes)
	if err != nil || r.OK || r.Ran != 0 || !strings.Contains(r.Message, "matched nothing") {
		t.Errorf("Run(^TestNothing$) = %+v, %v; want matched nothing", r, err)
	}

	gatetest.WriteFile(t, root, "patches/greeter/tests/patches_test.go", "package greet\n\nimport \"testing\"\n\nfunc TestGreeterPatches(t *testing.T) { Whisper(\"x\") }\n")
	g, _ = New(root, im.Spec, WithTempDir(t.TempDir()))
	r, err = g.Run(ctx, src, res.Changes)
	if err != nil || r.OK || !r.BuildFailed || !strings.Contains(r.Output, "undefined: Whisper") {
		t.Errorf("Run(broken test) = %+v, %v; want a build failure naming Whisper", r, err)
	}
}
