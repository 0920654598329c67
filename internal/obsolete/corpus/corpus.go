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

	"github.com/bluekeyes/go-gitdiff/gitdiff"
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
// with one `git fast-import`, and returns each node's commit id, by node
// number (index 0 unused). Each node's files are its first parent's (none
// for a snapshot) with its diff applied (go-gitdiff), plus OtherPathsFile
// holding the real id when the real commit touched other files.
func Build(ctx context.Context, gitDir string, nodes []Node) ([]string, error) {
	if _, err := os.Stat(gitDir); err != nil {
		if err := os.MkdirAll(gitDir, 0o755); err != nil {
			return nil, err
		}
		if _, err := git(ctx, gitDir, nil, nil, "init", "-q", "--bare"); err != nil {
			return nil, err
		}
	}
	trees := make([]map[string]file, len(nodes)+1)
	var stream bytes.Buffer
	for _, nd := range nodes {
		files := map[string]file{}
		if len(nd.Parents) > 0 && nd.Kind != KindSnapshot {
			for p, f := range trees[nd.Parents[0]] {
				files[p] = f
			}
		}
		if err := applyDiff(files, nd); err != nil {
			return nil, err
		}
		if nd.OtherPaths {
			files[OtherPathsFile] = file{mode: "100644", data: []byte(nd.Real + "\n")}
		}
		trees[nd.N] = files
		fmt.Fprintf(&stream, "commit refs/corpus/%d\nmark :%d\nauthor %s\ncommitter %s\ndata %d\n%s\n",
			nd.N, nd.N, nd.Author, nd.Committer, len(nd.Message), nd.Message)
		for i, p := range nd.Parents {
			kw := "merge"
			if i == 0 {
				kw = "from"
			}
			fmt.Fprintf(&stream, "%s :%d\n", kw, p)
		}
		stream.WriteString("deleteall\n")
		paths := make([]string, 0, len(files))
		for p := range files {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			f := files[p]
			fmt.Fprintf(&stream, "M %s inline %s\ndata %d\n", f.mode, quotePath(p), len(f.data))
			stream.Write(f.data)
			stream.WriteString("\n")
		}
		stream.WriteString("\n")
	}
	marks := filepath.Join(gitDir, "corpus-marks")
	defer os.Remove(marks)
	if _, err := git(ctx, gitDir, nil, stream.Bytes(), "fast-import", "--quiet", "--date-format=raw", "--export-marks="+marks); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(marks)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(nodes)+1)
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		m, id, ok := strings.Cut(l, " ")
		n, err := strconv.Atoi(strings.TrimPrefix(m, ":"))
		if !ok || err != nil || n < 1 || n > len(nodes) {
			return nil, fmt.Errorf("fast-import marks: bad line %q", l)
		}
		ids[n] = id
	}
	// fast-import needs a ref per commit; the caller names its own.
	var del bytes.Buffer
	for _, nd := range nodes {
		fmt.Fprintf(&del, "delete refs/corpus/%d\n", nd.N)
	}
	if _, err := git(ctx, gitDir, nil, del.Bytes(), "update-ref", "--stdin"); err != nil {
		return nil, err
	}
	return ids, nil
}

// file is one file of a node's tree.
type file struct {
	mode string
	data []byte
}

// applyDiff applies nd.Diff to files, in place.
func applyDiff(files map[string]file, nd Node) error {
	if len(nd.Diff) == 0 {
		return nil
	}
	fds, _, err := gitdiff.Parse(bytes.NewReader(nd.Diff))
	if err != nil {
		return fmt.Errorf("node %d (%s): parsing its diff: %w", nd.N, nd.Real, err)
	}
	before := map[string]file{}
	for p, f := range files {
		before[p] = f
	}
	for _, fd := range fds {
		src, ok := before[fd.OldName]
		if fd.IsNew {
			src = file{}
		} else if !ok {
			return fmt.Errorf("node %d (%s): %s is not in its parent", nd.N, nd.Real, fd.OldName)
		}
		var out bytes.Buffer
		if err := gitdiff.Apply(&out, bytes.NewReader(src.data), fd); err != nil {
			return fmt.Errorf("node %d (%s): %w", nd.N, nd.Real, err)
		}
		if fd.IsRename || fd.IsDelete {
			delete(files, fd.OldName)
		}
		if fd.IsDelete {
			continue
		}
		mode := src.mode
		if fd.NewMode != 0 {
			mode = fmt.Sprintf("%o", fd.NewMode)
		}
		if mode == "" {
			mode = "100644"
		}
		files[fd.NewName] = file{mode: mode, data: out.Bytes()}
	}
	return nil
}

// quotePath quotes a path for fast-import when it needs it.
func quotePath(p string) string {
	if !strings.ContainsAny(p, "\" \n\\") {
		return p
	}
	return strconv.Quote(p)
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

// ReadAll reads every case directory under root, in name order, leaving
// out NAME.tmp (a case hack/cut-corpus.sh is writing).
func ReadAll(root string) ([]*Case, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []*Case
	for _, e := range ents {
		if !e.IsDir() || strings.HasSuffix(e.Name(), ".tmp") { // .tmp: a case the cutter is writing
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
