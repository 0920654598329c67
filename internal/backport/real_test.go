package backport

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/tree"
)

// realBackport is one case of testdata/backports (see its README.md).
type realBackport struct {
	name, note, options string
	oracle              Grade
	patch               *series.Patch
	upstreamDiff        []byte
	parent, commit      tree.Map
}

// TestRealBackports grades real backports against the upstream commits they
// were cut from, and checks every grade against the git CLI's, which
// hack/cut-backports.sh recorded in each case's oracle line: identical when
// the two diffs are the same bytes but for index lines and "@@" lines (the
// reviewer's cmp), equivalent when `git apply` of the backport onto the
// commit's parent gives the commit's files, differs otherwise. The cases are
// release-branch cherry-picks and backports of kube-ovn, KubeVirt and
// cert-manager, verbatim and adapted, and verbatim ones written again with
// other context or another diff algorithm, so every grade is there at least
// once.
func TestRealBackports(t *testing.T) {
	cases := readRealBackports(t, filepath.Join("testdata", "backports"))
	seen := map[Grade]int{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := Compare(c.patch, c.upstreamDiff, &Trees{Parent: c.parent, Commit: c.commit})
			if err != nil {
				t.Fatalf("Compare() = %v", err)
			}
			seen[v.Grade]++
			t.Logf("%s: %s %s", c.note, v.Grade, v.Reason)
			if v.Grade != c.oracle {
				t.Errorf("%s (options %s): grade %s (%s), git says %s\n%s", c.note, c.options, v.Grade, v.Reason, c.oracle, v.Interdiff())
			}
			// Without the trees, only identical text passes: what verify says
			// when GitHub gave the diff and the cache cannot give the trees.
			bare, err := Compare(c.patch, c.upstreamDiff, nil)
			if err != nil {
				t.Fatalf("Compare() without trees = %v", err)
			}
			want := Differs
			if c.oracle == Identical {
				want = Identical
			}
			if bare.Grade != want {
				t.Errorf("without the trees: grade %s, want %s", bare.Grade, want)
			}
		})
	}
	for _, g := range []Grade{Identical, Equivalent, Differs} {
		if seen[g] == 0 {
			t.Errorf("no real backport graded %s: the cases no longer cover every grade", g)
		}
	}
}

// readRealBackports reads every case CASES names under dir, and fails on a
// case directory CASES does not name (a leftover of a renamed case).
func readRealBackports(t *testing.T, dir string) []realBackport {
	t.Helper()
	list, err := os.ReadFile(filepath.Join(dir, "CASES"))
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	var cases []realBackport
	for _, line := range strings.Split(string(list), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, _ := strings.Cut(line, "|")
		named[name] = true
		cases = append(cases, readRealBackport(t, filepath.Join(dir, name)))
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !named[e.Name()] {
			t.Errorf("%s: a case directory that CASES does not name", filepath.Join(dir, e.Name()))
		}
	}
	if len(cases) == 0 {
		t.Fatalf("%s: no cases", dir)
	}
	return cases
}

func readRealBackport(t *testing.T, dir string) realBackport {
	t.Helper()
	c := realBackport{name: filepath.Base(dir)}
	manifest, err := os.ReadFile(filepath.Join(dir, "case"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(manifest), "\n") {
		key, val, _ := strings.Cut(line, " ")
		switch key {
		case "note":
			c.note = val
		case "options":
			c.options = val
		case "oracle":
			c.oracle = Grade(val)
		}
	}
	if c.oracle == "" {
		t.Fatalf("%s: no oracle line", filepath.Join(dir, "case"))
	}
	text, err := os.ReadFile(filepath.Join(dir, "patch.diff"))
	if err != nil {
		t.Fatal(err)
	}
	if c.patch, err = series.Parse(filepath.Join(dir, "patch.diff"), text); err != nil {
		t.Fatal(err)
	}
	if c.upstreamDiff, err = os.ReadFile(filepath.Join(dir, "upstream.diff")); err != nil {
		t.Fatal(err)
	}
	c.parent, c.commit, err = readTrees(filepath.Join(dir, "trees"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// readTrees reads a trees file: records `file parent|commit MODE PATH SIZE`,
// each followed by SIZE bytes and a newline.
func readTrees(path string) (parent, commit tree.Map, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	parent, commit = tree.Map{}, tree.Map{}
	for line := 1; ; line++ {
		head, err := r.ReadString('\n')
		if err == io.EOF && head == "" {
			return parent, commit, nil
		}
		fields := strings.Fields(head)
		if err != nil || len(fields) != 5 || fields[0] != "file" {
			return nil, nil, fmt.Errorf("%s: record %d: %q is not `file SIDE MODE PATH SIZE`", path, line, head)
		}
		mode, err1 := strconv.ParseUint(fields[2], 8, 32)
		size, err2 := strconv.Atoi(fields[4])
		if err1 != nil || err2 != nil {
			return nil, nil, fmt.Errorf("%s: record %d: bad mode or size in %q", path, line, head)
		}
		data := make([]byte, size+1)
		if _, err := io.ReadFull(r, data); err != nil || data[size] != '\n' {
			return nil, nil, fmt.Errorf("%s: record %d (%s): content is not %d bytes and a newline", path, line, fields[3], size)
		}
		side := map[string]tree.Map{"parent": parent, "commit": commit}[fields[1]]
		if side == nil {
			return nil, nil, fmt.Errorf("%s: record %d: side %q is neither parent nor commit", path, line, fields[1])
		}
		side[fields[3]] = &tree.File{Mode: tree.Mode(mode), Data: bytes.Clone(data[:size])}
	}
}
