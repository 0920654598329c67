package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"strings"
)

// ErrNoGit is wrapped by the error of a git run when the git executable
// cannot be found.
var ErrNoGit = errors.New("the git CLI is not installed")

// GitRun is one run of the git CLI on a cache's repository. Every stage that
// asks git about the cache goes through Cache.Git, so that they share one
// environment (GitEnv) and one reading of git's failures.
type GitRun struct {
	Args  []string
	Stdin []byte // fed to git's standard input; nil for none
	// Stdout consumes git's output as it streams; nil collects it into
	// Git's result.
	Stdout func(io.Reader) error
	// Env is added to GitEnv: a scratch index or object directory.
	Env []string
	// Bin is the git executable; "" is "git" on PATH.
	Bin string
	// GitDir replaces the cache's repository with a scratch repository
	// that borrows the cache's objects (objects/info/alternates), for runs
	// that must write objects or refs without writing the cache. git's
	// complaints of damage still name the cache, whose objects they read.
	GitDir string
}

// GitError is a git run that exited non-zero without saying that the cache
// is damaged.
type GitError struct {
	Args   []string
	Code   int    // git's exit code; -1 when it did not exit by itself
	Stderr string // git's error output, trimmed
	Err    error
}

func (e *GitError) Error() string {
	msg := fmt.Sprintf("git %s: %v", e.Args[0], e.Err)
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

func (e *GitError) Unwrap() error { return e.Err }

// Git runs git on the cache's bare repository (--git-dir) and returns what
// it printed on stdout (nothing when r.Stdout consumed it). The error is
// ctx's when the run was cancelled, wraps ErrNoGit when git is missing, is a
// *CacheFaultError when git's complaint says the cache is damaged (GitFault),
// and is a *GitError otherwise.
func (c *Cache) Git(ctx context.Context, r GitRun) ([]byte, error) {
	bin := r.Bin
	if bin == "" {
		bin = "git"
	}
	dir := c.Path()
	if r.GitDir != "" {
		dir = r.GitDir
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"--git-dir", dir}, r.Args...)...)
	cmd.Env = append(GitEnv(), r.Env...)
	if r.Stdin != nil {
		cmd.Stdin = bytes.NewReader(r.Stdin)
	}
	var out, stderr bytes.Buffer
	cmd.Stderr = &stderr
	var consumed error
	if r.Stdout == nil {
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			return nil, startError(r.Args, err)
		}
	} else {
		pipe, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, startError(r.Args, err)
		}
		if consumed = r.Stdout(pipe); consumed != nil {
			io.Copy(io.Discard, pipe) // let git end before waiting on it
		}
	}
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		msg := strings.TrimSpace(stderr.String())
		if f := c.GitFault(msg, err); f != nil {
			return nil, f
		}
		ge := &GitError{Args: r.Args, Code: -1, Stderr: msg, Err: err}
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			ge.Code = exit.ExitCode()
		}
		return nil, ge
	}
	return out.Bytes(), consumed
}

func startError(args []string, err error) error {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("running git %s: %w: %w", args[0], ErrNoGit, err)
	}
	return fmt.Errorf("running git %s: %w", args[0], err)
}
