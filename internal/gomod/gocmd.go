package gomod

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/patchkit/patchkit/internal/tree"
)

// Go runs the go command for the module operations patchkit needs. Its zero
// value runs "go" from PATH with the process's environment (GOPROXY,
// GOFLAGS, GONOSUMDB... as the user set them).
type Go struct {
	// Bin is the go executable; "" is "go".
	Bin string
	// Offline sets GOPROXY=off: only the module cache answers.
	Offline bool
}

// env is the environment of every go command: the process's, with
// GOFLAGS=-mod=mod (go.mod may be updated), GOWORK=off (no go.work of the
// caller's applies to an upstream tree) and GOTOOLCHAIN=local (no toolchain
// download), and GOPROXY=off offline.
func (g Go) env() []string {
	env := os.Environ()
	flags := os.Getenv("GOFLAGS")
	if !strings.Contains(flags, "-mod=") {
		flags = strings.TrimSpace(flags + " -mod=mod")
	}
	env = append(env, "GOFLAGS="+flags, "GOWORK=off", "GOTOOLCHAIN=local")
	if g.Offline {
		env = append(env, "GOPROXY=off")
	}
	return env
}

// Run runs the go command in dir and returns its stdout. An error carries
// its stderr.
func (g Go) Run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	bin := g.Bin
	if bin == "" {
		bin = "go"
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = g.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("the go command is needed for go.mod and go.sum: %w", err)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// Materialize writes the files of w, with overlay laid over them (nil
// deletes), that lie under dir (the module's directory in the tree, "" or
// "." for the root) into out, which must exist. Symlinks and submodules are
// left out: the go command needs the module's Go files, go.mod and go.sum.
func Materialize(out string, w tree.Walker, overlay map[string]*tree.File, dir string) error {
	under := func(p string) bool {
		return dir == "" || dir == "." || strings.HasPrefix(p, dir+"/")
	}
	write := func(p string, f *tree.File) error {
		if f == nil || !under(p) || (f.Mode != tree.Regular && f.Mode != tree.Executable) {
			return nil
		}
		if tree.Clean(p) != nil {
			return fmt.Errorf("unsafe path %q in the tree", p)
		}
		full := filepath.Join(out, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		return os.WriteFile(full, f.Data, 0o644)
	}
	if err := w.Walk(func(p string, f *tree.File) error {
		if _, ok := overlay[p]; ok {
			return nil
		}
		return write(p, f)
	}); err != nil {
		return err
	}
	for p, f := range overlay {
		if err := write(p, f); err != nil {
			return err
		}
	}
	return nil
}

// EditArgs are the `go mod edit` flags that raise ws.
func EditArgs(ws []Want) []string {
	var args []string
	for _, w := range ws {
		switch {
		case w.Path == DirectiveGo:
			args = append(args, "-go="+w.Version)
		case w.Path == DirectiveToolchain:
			args = append(args, "-toolchain="+w.Version)
		case w.Replace != "":
			args = append(args, "-replace="+w.Path+"="+w.Replace+"@"+w.Version)
		default:
			args = append(args, "-require="+w.Path+"@"+w.Version)
		}
	}
	return args
}

// ModDir is the directory of a go.mod path in the tree ("" for the root).
func ModDir(gomod string) string {
	d := path.Dir(gomod)
	if d == "." {
		return ""
	}
	return d
}

// Raise raises ws (all of one go.mod, ws[0].File) in the module materialized
// at root: `go mod edit` with the wants, then `go mod tidy`, so that go.sum
// holds what the build needs. It returns the new go.mod and go.sum.
func (g Go) Raise(ctx context.Context, root string, ws []Want) (gomod, gosum []byte, err error) {
	if len(ws) == 0 {
		return nil, nil, errors.New("gomod.Raise: nothing to raise")
	}
	dir := filepath.Join(root, filepath.FromSlash(ModDir(ws[0].File)))
	if _, err := g.Run(ctx, dir, append([]string{"mod", "edit"}, EditArgs(ws)...)...); err != nil {
		return nil, nil, err
	}
	if _, err := g.Run(ctx, dir, "mod", "tidy"); err != nil {
		return nil, nil, err
	}
	return readModSum(dir)
}

// Tidy runs `go mod tidy` in the module at dir (in a copy the caller made)
// and returns go.mod and go.sum as it leaves them.
func (g Go) Tidy(ctx context.Context, dir string) (gomod, gosum []byte, err error) {
	if _, err := g.Run(ctx, dir, "mod", "tidy"); err != nil {
		return nil, nil, err
	}
	return readModSum(dir)
}

func readModSum(dir string) ([]byte, []byte, error) {
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil, nil, err
	}
	gosum, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	return gomod, gosum, nil
}
