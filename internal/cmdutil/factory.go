package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/report"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/untrusted"
	"github.com/patchkit/patchkit/internal/upstream"
)

// Factory carries the global flags and the streams to every command.
type Factory struct {
	IO *IOStreams
	// Root is the repository root (--root), default ".".
	Root string
	// CacheDir is the upstream cache directory (--cache-dir).
	CacheDir string
	// Output is the output format (-o).
	Output string
	// UpstreamURL replaces upstream.url (--upstream-url), for one image only.
	UpstreamURL string
	// Offline forbids network access (--offline).
	Offline bool
	// FetchTimeout is --fetch-timeout: how long a git fetch may receive
	// nothing, and how long an HTTP request (GitHub API, Helm repository,
	// chart archive) may take to its answer's last byte; 0 reads
	// PATCHKIT_FETCH_TIMEOUT, else each client's default.
	FetchTimeout time.Duration
	// LockTimeout is --lock-timeout: how long a writing command waits for
	// the repository lock; 0 is txn.DefaultLockTimeout.
	LockTimeout time.Duration
}

// fetchTimeoutEnv names the environment variable --fetch-timeout defaults to.
const fetchTimeoutEnv = "PATCHKIT_FETCH_TIMEOUT"

// ResolveFetchTimeout is --fetch-timeout, else PATCHKIT_FETCH_TIMEOUT (a Go
// duration, such as 30s), else 0 (the upstream package's default).
func (f *Factory) ResolveFetchTimeout() (time.Duration, error) {
	if f.FetchTimeout < 0 {
		return 0, &UsageError{Err: errors.New("--fetch-timeout must be positive")}
	}
	if f.FetchTimeout > 0 {
		return f.FetchTimeout, nil
	}
	v := os.Getenv(fetchTimeoutEnv)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, &UsageError{Err: fmt.Errorf("%s=%q: want a positive duration such as 30s", fetchTimeoutEnv, v)}
	}
	return d, nil
}

// Format parses -o.
func (f *Factory) Format() (report.Format, error) {
	fm, err := report.ParseFormat(f.Output)
	if err != nil {
		return "", &UsageError{Err: err}
	}
	f.IO.AllowCommands(fm == report.GitHub)
	return fm, nil
}

// ResolveCacheDir returns --cache-dir or the default under the user's cache dir.
func (f *Factory) ResolveCacheDir() (string, error) {
	if f.CacheDir != "" {
		return filepath.Abs(f.CacheDir)
	}
	return upstream.DefaultCacheDir()
}

// ResolveRoot returns the absolute repository root, which must be a directory.
func (f *Factory) ResolveRoot() (string, error) {
	root := f.Root
	if root == "" {
		root = "."
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", &UsageError{Err: fmt.Errorf("--root %s: %w", root, err)}
	}
	st, err := os.Stat(abs)
	if err != nil || !st.IsDir() {
		return "", &UsageError{Err: fmt.Errorf("--root %s is not a directory", root)}
	}
	return abs, nil
}

// UsageError is a bad invocation: exit code 2. It is diag's, so that stages
// can return it too.
type UsageError = diag.UsageError

// Exit codes.
const (
	ExitOK       = 0
	ExitFindings = 1
	ExitBadInput = 2
)

// ExitCode maps a command's error to patchkit's exit code (diag.ExitCode):
// nil is 0, findings are 1, bad input, bad invocations and any other error
// are 2.
func ExitCode(err error) int { return diag.ExitCode(err) }

// Env resolves the global flags every stage needs: the repository root, the
// cache directory, the upstream override, offline mode and where progress
// goes.
func (f *Factory) Env() (pipeline.Env, error) {
	root, err := f.ResolveRoot()
	if err != nil {
		return pipeline.Env{}, err
	}
	cacheDir, err := f.ResolveCacheDir()
	if err != nil {
		return pipeline.Env{}, err
	}
	timeout, err := f.ResolveFetchTimeout()
	if err != nil {
		return pipeline.Env{}, err
	}
	untrusted.AddURL(f.UpstreamURL)
	return pipeline.Env{Root: root, CacheDir: cacheDir, UpstreamURL: f.UpstreamURL, Offline: f.Offline, Progress: f.IO.Progress(), FetchTimeout: timeout}, nil
}

// Setup resolves what a command that runs the stages needs first: the output
// format and the Env.
func (f *Factory) Setup() (report.Format, pipeline.Env, error) {
	format, err := f.Format()
	if err != nil {
		return "", pipeline.Env{}, err
	}
	env, err := f.Env()
	if err != nil {
		return "", pipeline.Env{}, err
	}
	if err := recoverJournal(context.Background(), f.IO, env.Root); err != nil {
		return "", pipeline.Env{}, err
	}
	return format, env, nil
}

// Images returns the images a command was given, or every image under
// root/images when it was given none. --upstream-url replaces the upstream
// of one image, so with it exactly one IMAGE must be named.
func (f *Factory) Images(root string, args []string) ([]string, error) {
	return f.ImagesIn(spec.NewDiscovery(root), args)
}

// ImagesIn is Images with the units of d, whose one tree walk the caller
// shares with the rest of its run (pipeline.Env.Units).
func (f *Factory) ImagesIn(d *spec.Discovery, args []string) ([]string, error) {
	if f.UpstreamURL != "" && len(args) != 1 {
		return nil, &UsageError{Err: errors.New("--upstream-url replaces the upstream of one image: name exactly one IMAGE")}
	}
	if len(args) > 0 {
		return args, nil
	}
	return d.List()
}
