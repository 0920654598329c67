package upstream

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/config"

	"github.com/patchkit/patchkit/internal/untrusted"
)

// gitFetch runs the git CLI's fetch of specs from the upstream into the bare
// repository at dir. The git CLI streams the pack to disk through index-pack
// in a few tens of megabytes; go-git's in-process fetch holds far more of it
// in memory. The refs are forced (the specs start with +), no tags beyond
// the specs, no FETCH_HEAD, no automatic gc or maintenance, and a shallow
// upstream's boundary is accepted into the cache's shallow file. d asks for
// a depth, or for the rest of a partial cache's history.
//
// git fetch writes the commit-graph itself (fetch.writeCommitGraph): a new
// layer of a split graph holding the commits it brought, merged into the
// layers below when it grows past half their size (git's --split
// defaults), so a fetch of one commit writes a graph of one commit. git
// writes none in a shallow repository, where it would ignore it.
func (c *Cache) gitFetch(ctx context.Context, dir string, specs []config.RefSpec, d fetchDepth) error {
	args := []string{
		"-c", "gc.auto=0", "-c", "core.logAllRefUpdates=false", "-c", "maintenance.auto=false", "-c", "fetch.writeCommitGraph=true", "-c", "fetch.unpackLimit=1",
		"--git-dir", dir, "fetch", "--no-tags", "--no-write-fetch-head", "--update-shallow", "--quiet",
	}
	switch {
	case d.depth > 0:
		args = append(args, "--depth", strconv.Itoa(d.depth))
	case d.unshallow:
		args = append(args, "--unshallow")
	}
	args = append(args, "--progress") // the idle watch needs it
	fetchURL, authEnv := credentialsOut(c.fetchURL)
	args = append(args, "--end-of-options", fetchURL)
	for _, s := range specs {
		args = append(args, s.String())
	}
	cmd := exec.Command("git", args...)
	cmd.Env = append(append(fetchEnv(), authEnv...), traceEnv...)
	var stderr tailBuffer
	watch := &idleWatch{}
	cmd.Stderr = io.MultiWriter(&stderr, watch)
	if c.opts.progress != io.Discard {
		cmd.Stderr = io.MultiWriter(&stderr, watch, untrusted.NewURLHider(c.opts.progress, c.url, c.fetchURL))
	}
	_, idle := c.opts.timeouts()
	stalled, err := watch.run(ctx, cmd, idle)
	if stalled {
		// The killed git leaves its temporary pack; this run holds the
		// exclusive lock, so nothing else writes one.
		removeMatching(filepath.Join(dir, "objects", "pack"), "tmp_pack_", "tmp_idx_", "tmp_obj_", "tmp_rev_", "packfile")
		removeGitLocks(dir)
		return &TimeoutError{URL: c.redacted, After: idle, Err: fmt.Errorf("git fetch: %s", stderr.String())}
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if strings.Contains(msg, "couldn't find remote ref") || strings.Contains(msg, "not our ref") || strings.Contains(msg, "unadvertised object") {
			err = fmt.Errorf("%w: %w", errRefGone, err)
		}
		if msg != "" {
			return fmt.Errorf("git fetch: %s: %w", msg, err)
		}
		return fmt.Errorf("git fetch: %w", err)
	}
	return nil
}

// packRefs packs the refs of the bare repository at dir into packed-refs.
// git fetch writes a loose file per ref, and an upstream's hundreds of tags
// would otherwise cost every later run a file open per ref when it lists
// them (every Open checks every ref); packRefsIfMany calls it once the
// loose refs are many. A killed pack-refs leaves
// packed-refs.lock, which removeLeftovers clears.
func packRefs(ctx context.Context, dir string) error {
	return maintain(ctx, dir, "core.logAllRefUpdates=false", "pack-refs", "--all", "--prune")
}

// writeCommitGraph writes the commit-graph of the bare repository at dir:
// every commit's parents, tree and generation, which git reads instead of
// inflating and parsing each commit. The stages that walk history with the
// git CLI (obsolete-check's git rev-list and git log over every commit after
// the pin) spend about half their time there without it. It is a split
// graph (objects/info/commit-graphs), the form git fetch then adds a layer
// to (see gitFetch); git ignores it in a shallow repository. A killed write
// leaves the chain's lock and a temporary layer, which removeLeftovers
// clears, and the integrity check removes a graph with a damaged or missing
// layer (checkCommitGraph).
func writeCommitGraph(ctx context.Context, dir string) error {
	return maintain(ctx, dir, "core.commitGraph=true", "commit-graph", "write", "--reachable", "--split", "--no-progress")
}

// traceEnv is added to the environment of the git commands a fetch runs
// (git fetch and the housekeeping after it). Tests set it to git's trace
// variables to count the processes and the refs listed.
var traceEnv []string

// maintain runs the git housekeeping command args on the bare repository at
// dir, with one config setting. Its error names the command and ends with
// git's last words.
func maintain(ctx context.Context, dir, config string, args ...string) error {
	return maintainIn(ctx, dir, nil, config, args...)
}

// maintainIn is maintain with stdin as the command's standard input.
func maintainIn(ctx context.Context, dir string, stdin []byte, config string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", config, "--git-dir", dir}, args...)...)
	cmd.Env = append(GitEnv(), traceEnv...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr tailBuffer
	cmd.Stderr = &stderr
	if err := runTied(cmd); err != nil {
		return fmt.Errorf("git %s: %s: %w", strings.Join(args, " "), stderr.String(), err)
	}
	return nil
}

// fetchDepth is how much history a git fetch brings: depth commits of each
// ref, or (unshallow) all that the upstream has beyond the cache's shallow
// boundaries; the zero value fetches what the refs reach, stopping at the
// cache's boundaries.
type fetchDepth struct {
	depth     int
	unshallow bool
}

// credentialsOut moves the user and password of an http(s) URL out of the
// command line, where other users of the machine could read them, into a
// credential helper scoped to the URL's own scheme, host and port: git asks
// it only for that host, after that host's 401, so a redirect to another host
// never receives them (an http.extraHeader would be sent to any host a
// redirect names). The helper reads them from the environment of git, which
// only the user can read; they are never in a config value.
func credentialsOut(raw string) (string, []string) {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil || (u.Scheme != "http" && u.Scheme != "https") {
		return raw, nil
	}
	pass, _ := u.User.Password()
	user := u.User.Username()
	u.User = nil
	scope := u.Scheme + "://" + u.Host
	return u.String(), []string{
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=credential." + scope + ".helper",
		"GIT_CONFIG_VALUE_0=" + credentialHelper,
		"PATCHKIT_GIT_USERNAME=" + user,
		"PATCHKIT_GIT_PASSWORD=" + pass,
	}
}

// credentialHelper answers git's "get" with the username and password in
// PATCHKIT_GIT_USERNAME and PATCHKIT_GIT_PASSWORD.
const credentialHelper = `!f() { test "$1" = get && printf 'username=%s\npassword=%s\n' "$PATCHKIT_GIT_USERNAME" "$PATCHKIT_GIT_PASSWORD"; }; f`

// fetchEnv is GitEnv, keeping the variables that say how to reach the
// upstream: ssh's command and TLS settings.
func fetchEnv() []string {
	env := GitEnv()
	for _, k := range []string{"GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "GIT_SSL_NO_VERIFY", "GIT_PROXY_COMMAND"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// tailBuffer keeps the last 4 KiB written to it: enough for git's error
// lines without holding a long progress stream.
type tailBuffer struct{ b []byte }

const tailMax = 4 << 10

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > tailMax {
		t.b = append(t.b[:0], t.b[len(t.b)-tailMax:]...)
	}
	return len(p), nil
}

// String is the kept text without progress lines: of a line that \r
// rewrites, only its last text. A line that ends in \r\n, as ssh writes its
// errors, keeps its text.
func (t *tailBuffer) String() string {
	var out []string
	for _, line := range strings.Split(string(t.b), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if i := strings.LastIndexByte(line, '\r'); i >= 0 {
			line = line[i+1:]
		}
		if line = strings.TrimSpace(cleanSideband(line)); line != "" {
			out = append(out, line)
		}
	}
	return strings.Join(out, "; ")
}

// cleanSideband is untrusted.Sideband: the text of a sideband line.
func cleanSideband(line string) string { return untrusted.Sideband(line) }
