package gate

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/tree"
)

// TestSetsTrimpath: the gate adds -trimpath unless the GOFLAGS go will see
// already sets it, either way.
func TestSetsTrimpath(t *testing.T) {
	tests := []struct {
		env  []string
		want bool
	}{
		{nil, false},
		{[]string{"GOFLAGS=-mod=vendor"}, false},
		{[]string{"GOFLAGS=-trimpath"}, true},
		{[]string{"GOFLAGS=-mod=mod --trimpath"}, true},
		{[]string{"GOFLAGS=-trimpath=false"}, true},
		{[]string{"GOFLAGS=-trimpath", "GOFLAGS=-mod=mod"}, false}, // the last one counts
		{[]string{"GOFLAGS=-trimpathx"}, false},
		{[]string{"XGOFLAGS=-trimpath"}, false},
	}
	for _, tt := range tests {
		if got := setsTrimpath(tt.env); got != tt.want {
			t.Errorf("setsTrimpath(%q) = %v, want %v", tt.env, got, tt.want)
		}
	}
}

// TestRunKeepsUserTrimpath: a GOFLAGS that says -trimpath=false is the
// user's choice; the gate does not add the flag.
func TestRunKeepsUserTrimpath(t *testing.T) {
	root := t.TempDir()
	var got []string
	fake := func(_ context.Context, _ string, _ []string, args ...string) ([]byte, []byte, error) {
		got = args
		return lines(ev("run", "TestX", ""), ev("pass", "TestX", "")), nil, nil
	}
	g, err := New(root, testSpec(t, root, plainSpec), withRunner(fake), WithEnv("GOFLAGS=-trimpath=false"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Run(context.Background(), tree.Map{}, nil); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(got, "-trimpath") {
		t.Errorf("go args = %q, want no -trimpath beside GOFLAGS=-trimpath=false", got)
	}
}

const plainSpec = `upstream: {url: file:///u, ref: v1}
patches: patches/x
test:
  package: ./b
  run: '^TestB$'
`

// compiled runs the real go command with -x and records the import paths
// that the compiler was run for: a package the build cache had is not
// compiled.
type compiled struct{ runs [][]string }

var compileLine = regexp.MustCompile(`/compile(?:\.exe)? -o \S+ .*?-p (\S+)`)

func (c *compiled) run(ctx context.Context, dir string, env []string, args ...string) ([]byte, []byte, error) {
	x := append([]string{args[0], "-x"}, args[1:]...)
	stdout, stderr, err := execGo(ctx, dir, env, x...)
	var pkgs []string
	// -x lines go to stderr, or into the -json stream as build output.
	for _, out := range []string{string(stderr), strings.ReplaceAll(string(stdout), `\"`, `"`)} {
		for _, m := range compileLine.FindAllStringSubmatch(out, -1) {
			pkgs = append(pkgs, strings.Trim(m[1], `"`))
		}
	}
	slices.Sort(pkgs)
	c.runs = append(c.runs, slices.Compact(pkgs))
	return stdout, stderr, err
}

// TestRunReusesBuildCache runs the real go test three times, each in a fresh
// directory as the gate does: the second run of an unchanged tree compiles
// nothing, and a run that changes one package compiles only that package
// and the one that imports it, not the unrelated package.
func TestRunReusesBuildCache(t *testing.T) {
	root := t.TempDir()
	c := &compiled{}
	g, err := New(root, testSpec(t, root, plainSpec), withRunner(c.run), WithOffline(true), WithTempDir(t.TempDir()), WithEnv("GOFLAGS="))
	if err != nil {
		t.Fatal(err)
	}
	// A nonce, so no earlier test run has these packages in the cache.
	nonce := fmt.Sprint(time.Now().UnixNano())
	file := func(s string) *tree.File { return &tree.File{Mode: tree.Regular, Data: []byte(s)} }
	src := tree.Map{
		"go.mod":      file("module gatecache\n\ngo 1.22\n"),
		"a/a.go":      file("package a\n\nconst Nonce = \"" + nonce + "\"\n\nfunc A() string { return \"a\" }\n"),
		"c/c.go":      file("package c\n\nconst Nonce = \"" + nonce + "\"\n\nfunc C() string { return \"c\" }\n"),
		"b/b.go":      file("package b\n\nimport (\n\t\"gatecache/a\"\n\t\"gatecache/c\"\n)\n\nfunc B() string { return a.A() + c.C() }\n"),
		"b/b_test.go": file("package b\n\nimport \"testing\"\n\nfunc TestB(t *testing.T) {\n\tif B() != \"ac\" {\n\t\tt.Fatal(B())\n\t}\n}\n"),
	}
	ctx := context.Background()
	changed := map[string]*tree.File{"a/a.go": file("package a\n\nconst Nonce = \"" + nonce + "-changed\"\n\nfunc A() string { return \"a\" }\n")}
	for i, changes := range []map[string]*tree.File{nil, nil, changed} {
		res, err := g.Run(ctx, src, changes)
		if err != nil || !res.OK {
			t.Fatalf("run %d: Run() = %+v, %v", i+1, res, err)
		}
	}
	if len(c.runs) != 3 {
		t.Fatalf("go ran %d times, want 3", len(c.runs))
	}
	if !slices.Contains(c.runs[0], "gatecache/c") {
		t.Fatalf("first run compiled %q, want gatecache/c among them (is -x output recognised?)", c.runs[0])
	}
	if len(c.runs[1]) != 0 {
		t.Errorf("second run of the unchanged tree compiled %q, want nothing", c.runs[1])
	}
	if !slices.Contains(c.runs[2], "gatecache/a") || slices.Contains(c.runs[2], "gatecache/c") {
		t.Errorf("run with a/a.go changed compiled %q, want gatecache/a and not gatecache/c", c.runs[2])
	}
}

// TestFullDiskIsNotABuildFailure: go test that fails to build because the
// disk is full is an environment fault (an error, exit 2), not the gate's
// "does not build" finding; a real compile error stays a finding.
func TestFullDiskIsNotABuildFailure(t *testing.T) {
	root := t.TempDir()
	for _, tt := range []struct {
		output  string
		wantErr bool
	}{
		{"go: creating work dir: mkdir /tmp/go-build123: no space left on device\n", true},
		{"b/b_test.go:3:1: syntax error: non-declaration statement outside function body\n", false},
	} {
		fake := func(context.Context, string, []string, ...string) ([]byte, []byte, error) {
			return lines(`{"Action":"build-output","ImportPath":"x/b","Output":`+strconv.Quote(tt.output)+`}`, `{"Action":"build-fail","ImportPath":"x/b"}`),
				[]byte(tt.output), &exec.ExitError{}
		}
		g, err := New(root, testSpec(t, root, plainSpec), withRunner(fake))
		if err != nil {
			t.Fatal(err)
		}
		res, err := g.Run(context.Background(), tree.Map{}, nil)
		if (err != nil) != tt.wantErr || (err == nil && (res == nil || res.OK)) {
			t.Errorf("Run() with %q = %+v, %v; want an error: %v", tt.output, res, err, tt.wantErr)
		}
	}
}
