package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/spec"
)

// TestOpenRefusesABadPin: a pin the upstream lacks, one that names a tree
// (a tag such as linux's v2.6.11), and an abbreviated id of two commits are
// bad input (exit 2) naming the spec's upstream.ref line, or --ref when
// the user typed it; git rev-parse refuses each as the oracle.
func TestOpenRefusesABadPin(t *testing.T) {
	up := gittest.New(t)
	up.Write("a.txt", "a\n")
	up.Commit("one")
	up.Tag("v1.0.0")
	up.Git("tag", "v1.0.0-tree", strings.TrimSpace(up.Git("rev-parse", "HEAD^{tree}")))
	// Commits enough for two ids to share their first four digits (one
	// git fast-import), on main: an abbreviation of both.
	var stream strings.Builder
	for i := range 1500 {
		fmt.Fprintf(&stream, "commit refs/heads/main\ncommitter T <t@example.com> %d +0000\ndata 2\n%d\n", 1700000000+i, i%10)
		if i == 0 {
			stream.WriteString("from refs/heads/main^0\n")
		}
		fmt.Fprintf(&stream, "M 100644 inline many.txt\ndata %d\n%d\n\n", len(fmt.Sprint(i))+1, i)
	}
	if _, errOut, err := up.GitIn([]byte(stream.String()), "fast-import", "--quiet"); err != nil {
		t.Fatalf("git fast-import: %v\n%s", err, errOut)
	}
	prefix := ""
	seen := map[string]bool{}
	for _, id := range strings.Fields(up.Git("rev-list", "main")) {
		if seen[id[:4]] {
			prefix = id[:4]
			break
		}
		seen[id[:4]] = true
	}
	if prefix == "" {
		t.Fatal("no two commits share four digits: the fixture changed")
	}
	up.Tag("v1.1.0")
	for _, tc := range []struct {
		name, ref, flag, msg string
	}{
		{name: "not upstream", ref: "v9.9.9", msg: "pin not found upstream"},
		{name: "a tree", ref: "v1.0.0-tree", msg: "the pin is no commit"},
		{name: "ambiguous", ref: prefix, msg: "ambiguous pin"},
		{name: "a tree by --ref", ref: "v1.0.0", flag: "v1.0.0-tree", msg: "bad ref"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.ref
			if tc.flag != "" {
				want = tc.flag
			}
			if _, _, err := up.GitIn(nil, "rev-parse", "--verify", "-q", want+"^{commit}"); err == nil {
				t.Fatalf("git rev-parse %s^{commit} succeeds: the fixture changed", want)
			}
			root := t.TempDir()
			gittest.WriteFiles(t, root, map[string]string{
				"images/img/patchkit.yaml": "upstream:\n  url: " + up.URL() + "\n  ref: \"" + tc.ref + "\"\npatches: patches/img\n",
				"patches/img/.keep":        "",
			})
			s, err := spec.Load(root, "img")
			if err != nil {
				t.Fatalf("spec.Load: %v", err)
			}
			_, err = Open(context.Background(), Env{Root: root, CacheDir: t.TempDir()}, s, tc.flag)
			var in *diag.InputError
			if !errors.As(err, &in) || diag.ExitCode(err) != 2 {
				t.Fatalf("Open = %v (exit %d), want a *diag.InputError, exit 2", err, diag.ExitCode(err))
			}
			file, line := "images/img/patchkit.yaml", 3
			if tc.flag != "" {
				file, line = "--ref", 0
			}
			if in.File != file || in.Line != line || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("Open = %v, naming %s:%d; want %s:%d and %q", err, in.File, in.Line, file, line, tc.msg)
			}
		})
	}
}
