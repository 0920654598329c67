// Package corpus reads the real-history cases of obsolete-check's corpus
// (cut by hack/cut-corpus.sh) and rebuilds each reduced upstream as a git
// repository with the git CLI.
package corpus

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// OtherPathsFile is the file a reduced commit changes when its real commit
// also touched files outside the patch's: its content is the real commit's
// id, so that the reduced diff never has a patch-id the real one lacks.
const OtherPathsFile = "CORPUS-OTHER-PATHS"

// The kinds of a history node.
const (
	// KindSnapshot: the files as a commit outside the range had them, the
	// root the range starts from.
	KindSnapshot = "snapshot"
	// KindCommit: an upstream commit that touched the files.
	KindCommit = "commit"
	// KindRef: the pin or a scanned ref that touched none of the files, an
	// empty commit over its rewritten parents.
	KindRef = "ref"
)

// Node is one commit of a reduced upstream.
type Node struct {
	N    int
	Kind string
	// Real is the upstream commit it stands for.
	Real string
	// Parents are node numbers, the first parent first.
	Parents []int
	// Author and Committer are "Name <email> unix-time tz".
	Author, Committer string
	// PatchID is the real full commit's `git patch-id --stable`, "" for
	// snapshots, refs and merges.
	PatchID string
	// OtherPaths: the real commit also touched files outside the patch's.
	OtherPaths bool
	Message    string
	// Diff is the diff from the first parent (or from nothing) restricted
	// to the patch's files.
	Diff []byte
}

// ReadHistory parses a history file.
func ReadHistory(path string) ([]Node, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var nodes []Node
	r := bufio.NewReader(bytes.NewReader(data))
	line := 0
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s:%d: %s", path, line, fmt.Sprintf(format, a...))
	}
	readLine := func() (string, error) {
		s, err := r.ReadString('\n')
		if err != nil {
			return "", err
		}
		line++
		return strings.TrimSuffix(s, "\n"), nil
	}
	readData := func(key, head string) ([]byte, error) {
		k, n, ok := strings.Cut(head, " ")
		size, err := strconv.Atoi(n)
		if !ok || k != key || err != nil || size < 0 {
			return nil, bad("want %q SIZE, have %q", key, head)
		}
		buf := make([]byte, size+1)
		if _, err := io.ReadFull(r, buf); err != nil || buf[size] != '\n' {
			return nil, bad("short %s block", key)
		}
		line += bytes.Count(buf, []byte("\n"))
		return buf[:size], nil
	}
	for {
		head, err := readLine()
		if err == io.EOF {
			return nodes, nil
		}
		if err != nil {
			return nil, bad("%v", err)
		}
		f := strings.Fields(head)
		if len(f) != 3 || f[0] != "node" {
			return nil, bad("want node N KIND, have %q", head)
		}
		nd := Node{Kind: f[2]}
		if nd.N, err = strconv.Atoi(f[1]); err != nil || nd.N != len(nodes)+1 {
			return nil, bad("node %q out of order", f[1])
		}
		for {
			s, err := readLine()
			if err != nil {
				return nil, bad("node %d: %v", nd.N, err)
			}
			k, v, _ := strings.Cut(s, " ")
			switch k {
			case "real":
				nd.Real = v
			case "parents":
				for _, p := range strings.Fields(v) {
					n, err := strconv.Atoi(p)
					if err != nil || n < 1 || n >= nd.N {
						return nil, bad("node %d: bad parent %q", nd.N, p)
					}
					nd.Parents = append(nd.Parents, n)
				}
			case "author":
				nd.Author = v
			case "committer":
				nd.Committer = v
			case "patch-id":
				if v != "-" {
					nd.PatchID = v
				}
			case "other-paths":
				nd.OtherPaths = v == "yes"
			case "message":
				b, err := readData("message", s)
				if err != nil {
					return nil, err
				}
				nd.Message = string(b)
			case "diff":
				b, err := readData("diff", s)
				if err != nil {
					return nil, err
				}
				nd.Diff = b
			default:
				return nil, bad("node %d: unknown key %q", nd.N, k)
			}
			if k == "diff" {
				break
			}
		}
		nodes = append(nodes, nd)
	}
}

// Build rebuilds nodes in the bare repository gitDir (created if missing)
// and returns each node's commit id, by node number (index 0 unused).
func Build(ctx context.Context, gitDir string, nodes []Node) ([]string, error) {
	if _, err := os.Stat(gitDir); err != nil {
		if err := os.MkdirAll(gitDir, 0o755); err != nil {
			return nil, err
		}
		if _, err := git(ctx, gitDir, nil, nil, "init", "-q", "--bare"); err != nil {
			return nil, err
		}
	}
	index := filepath.Join(gitDir, "corpus-index")
	defer os.Remove(index)
	ids := make([]string, len(nodes)+1)
	for _, nd := range nodes {
		idx := []string{"GIT_INDEX_FILE=" + index}
		base := []string{"read-tree", "--empty"}
		if len(nd.Parents) > 0 && nd.Kind != KindSnapshot {
			base = []string{"read-tree", ids[nd.Parents[0]]}
		}
		if _, err := git(ctx, gitDir, idx, nil, base...); err != nil {
			return nil, err
		}
		if len(nd.Diff) > 0 {
			if _, err := git(ctx, gitDir, idx, nd.Diff, "apply", "--cached", "--binary", "--whitespace=nowarn"); err != nil {
				return nil, fmt.Errorf("node %d (%s): %w", nd.N, nd.Real, err)
			}
		}
		if nd.OtherPaths {
			blob, err := git(ctx, gitDir, nil, []byte(nd.Real+"\n"), "hash-object", "-w", "--stdin")
			if err != nil {
				return nil, err
			}
			if _, err := git(ctx, gitDir, idx, nil, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+OtherPathsFile); err != nil {
				return nil, err
			}
		}
		tree, err := git(ctx, gitDir, idx, nil, "write-tree")
		if err != nil {
			return nil, err
		}
		args := []string{"commit-tree", tree}
		for _, p := range nd.Parents {
			args = append(args, "-p", ids[p])
		}
		env, err := identEnv(nd)
		if err != nil {
			return nil, err
		}
		id, err := git(ctx, gitDir, env, []byte(nd.Message), args...)
		if err != nil {
			return nil, err
		}
		ids[nd.N] = id
	}
	return ids, nil
}

// identEnv is the environment that gives commit-tree the node's identities
// and dates.
func identEnv(nd Node) ([]string, error) {
	var env []string
	for _, who := range []struct{ prefix, v string }{{"AUTHOR", nd.Author}, {"COMMITTER", nd.Committer}} {
		lt := strings.LastIndex(who.v, "<")
		gt := strings.LastIndex(who.v, ">")
		if lt < 0 || gt < lt {
			return nil, fmt.Errorf("node %d: bad identity %q", nd.N, who.v)
		}
		env = append(env,
			"GIT_"+who.prefix+"_NAME="+strings.TrimSpace(who.v[:lt]),
			"GIT_"+who.prefix+"_EMAIL="+who.v[lt+1:gt],
			"GIT_"+who.prefix+"_DATE="+strings.TrimSpace(who.v[gt+1:]))
	}
	return env, nil
}

// git runs the git CLI on gitDir with no user or system configuration.
func git(ctx context.Context, gitDir string, env []string, stdin []byte, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir=" + gitDir}, args...)...)
	cmd.Env = append(cleanEnv(), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0")
}

// Ref is a scanned ref of a case.
type Ref struct {
	// Name is the tag, or branch:NAME.
	Name string
	// Node is its node in the history; Real its upstream commit.
	Node int
	Real string
	// Evidence is the git CLI's evidence line (key=value words).
	Evidence string
	// Status and Commit are the label: the expected status, and the real
	// commit that carries the change ("" when none).
	Status, Commit string
}

// Branch returns the branch name of a branch:NAME ref, "" for a tag.
func (r Ref) Branch() string {
	b, ok := strings.CutPrefix(r.Name, "branch:")
	if !ok {
		return ""
	}
	return b
}

// Case is one corpus case: a real patch and the reduced upstream it is
// scanned against.
type Case struct {
	Name     string
	Dir      string
	Upstream string // OWNER+NAME
	Source   string
	Note     string
	// Pin is the pinned ref, PinNode its node, PinReal its upstream commit.
	Pin      string
	PinNode  int
	PinReal  string
	Releases string
	PatchID  string
	Refs     []Ref
	// Reduced is each node's reduced commit id as the cutter built it.
	Reduced map[int]string
}

// ReadCase parses dir/case.
func ReadCase(dir string) (*Case, error) {
	path := filepath.Join(dir, "case")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &Case{Name: filepath.Base(dir), Dir: dir, Reduced: map[int]string{}}
	refs := map[string]*Ref{}
	for i, s := range strings.Split(string(data), "\n") {
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		bad := fmt.Errorf("%s:%d: cannot read %q", path, i+1, s)
		k, v, _ := strings.Cut(s, " ")
		f := strings.Fields(v)
		switch k {
		case "upstream":
			c.Upstream = v
		case "source":
			c.Source = v
		case "note":
			c.Note = v
		case "releases":
			c.Releases = v
		case "patch-id":
			c.PatchID = v
		case "pin":
			if len(f) != 3 {
				return nil, bad
			}
			c.Pin, c.PinReal = f[0], f[2]
			if c.PinNode, err = strconv.Atoi(f[1]); err != nil {
				return nil, bad
			}
		case "ref":
			if len(f) != 3 {
				return nil, bad
			}
			n, err := strconv.Atoi(f[1])
			if err != nil {
				return nil, bad
			}
			c.Refs = append(c.Refs, Ref{Name: f[0], Node: n, Real: f[2]})
			refs[f[0]] = &c.Refs[len(c.Refs)-1]
		case "git", "expect":
			if len(f) < 2 || refs[f[0]] == nil {
				return nil, bad
			}
			r := refs[f[0]]
			if k == "git" {
				r.Evidence = strings.Join(f[1:], " ")
				continue
			}
			if len(f) != 3 {
				return nil, bad
			}
			r.Status = f[1]
			if f[2] != "-" {
				r.Commit = f[2]
			}
		case "reduced":
			if len(f) != 2 {
				return nil, bad
			}
			n, err := strconv.Atoi(f[0])
			if err != nil {
				return nil, bad
			}
			c.Reduced[n] = f[1]
		default:
			return nil, bad
		}
	}
	if c.Pin == "" || len(c.Refs) == 0 {
		return nil, fmt.Errorf("%s: no pin or no refs", path)
	}
	return c, nil
}

// ReadAll reads every case directory under root, in name order.
func ReadAll(root string) ([]*Case, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []*Case
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		c, err := ReadCase(filepath.Join(root, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// EvidenceOf returns the value of key in the ref's evidence line.
func (r Ref) EvidenceOf(key string) string {
	for _, kv := range strings.Fields(r.Evidence) {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}
