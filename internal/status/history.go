package status

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/upstream"
)

// added is when a patch file was last added, and the pin changes since.
type added struct {
	time   time.Time
	commit string
	pins   int
}

// history is a unit's series over the downstream repository's history.
type history struct {
	points []Point
	// added is keyed by the patch file's base name.
	added map[string]added
}

// unitHistory walks the first-parent history of the repository at root
// that touches the unit's patch directory or its spec, oldest first: the
// series is every *.diff and *.patch directly in the directory, as at each
// commit; the pin is the spec's upstream.ref then. A root that is not a git
// repository, or has no commits, has no history.
func unitHistory(ctx context.Context, root string, s *spec.Spec) (history, error) {
	h := history{points: []Point{}, added: map[string]added{}}
	if root == "" {
		return h, nil
	}
	if _, err := git(ctx, root, "rev-parse", "--verify", "-q", "HEAD^{commit}"); err != nil {
		return h, nil
	}
	dir := strings.TrimSuffix(s.Patches, "/")
	out, err := git(ctx, root, "log", "--first-parent", "--reverse", "--no-renames", "--relative", "--format=%x00%H %ct",
		"--name-status", "HEAD", "--", dir, s.File)
	if err != nil {
		return h, fmt.Errorf("reading the history of %s: %w", dir, err)
	}
	files := map[string]bool{}
	pin := ""
	for _, rec := range bytes.Split(out, []byte{0})[1:] {
		sc := bufio.NewScanner(bytes.NewReader(rec))
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		if !sc.Scan() {
			continue
		}
		id, ts, _ := strings.Cut(sc.Text(), " ")
		sec, err := strconv.ParseInt(ts, 10, 64)
		if err != nil {
			return h, fmt.Errorf("reading the history of %s: bad line %q", dir, sc.Text())
		}
		when := time.Unix(sec, 0).UTC()
		specChanged := false
		for sc.Scan() {
			status, name, ok := strings.Cut(sc.Text(), "\t")
			if !ok {
				continue
			}
			if name == s.File {
				specChanged = true
				continue
			}
			if path.Dir(name) != dir || !isPatchFile(name) {
				continue
			}
			base := path.Base(name)
			switch status[0] {
			case 'A':
				files[base] = true
				h.added[base] = added{time: when, commit: id}
			case 'D':
				delete(files, base)
				delete(h.added, base)
			}
		}
		if specChanged {
			if p := pinAt(ctx, root, id, s.File); p != "" && p != pin {
				if pin != "" {
					for name, a := range h.added {
						if a.commit != id {
							a.pins++
							h.added[name] = a
						}
					}
				}
				pin = p
			}
		}
		h.points = append(h.points, Point{Time: when, Commit: id, Count: len(files)})
	}
	return h, nil
}

// isPatchFile says a name is a series file: *.diff or *.patch.
func isPatchFile(name string) bool {
	return strings.HasSuffix(name, ".diff") || strings.HasSuffix(name, ".patch")
}

// pinAt reads upstream.ref from the spec file at commit id; "" when it
// cannot (the file was removed, or holds no ref).
func pinAt(ctx context.Context, root, id, file string) string {
	data, err := git(ctx, root, "show", id+":./"+file)
	if err != nil {
		return ""
	}
	var doc struct {
		Upstream struct {
			Ref string `yaml:"ref"`
		} `yaml:"upstream"`
	}
	if yaml.Unmarshal(data, &doc) != nil {
		return ""
	}
	return doc.Upstream.Ref
}

// git runs the git CLI in dir with upstream.GitEnv (no user configuration)
// and returns its stdout; an error carries its stderr.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = upstream.GitEnv()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, fmt.Errorf("status needs the git CLI: %w", err)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(errOut.String()))
	}
	return out.Bytes(), nil
}
