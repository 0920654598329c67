package apply

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/tree"
)

// vendoredChange builds, in a downstream monorepo, a chart vendored under
// prefix and a change to it: a modified file, a new file, a rename with an
// edit, a deletion and a binary change. It returns the chart's files before
// the change (relative to the chart) and `git diff --binary -M` of the change,
// whose names carry "a/" + prefix, as cozystack's `patch -p4` series do.
func vendoredChange(t *testing.T, prefix string) (map[string]string, string) {
	t.Helper()
	r := gittest.New(t)
	files := map[string]string{
		"templates/service.yaml": num(1, 30),
		"templates/old.yaml":     num(100, 130),
		"templates/gone.yaml":    num(200, 210),
		"values.yaml":            num(300, 320),
		"logo.bin":               "\x00\x01\x02binary\x00",
	}
	for p, c := range files {
		r.Write(prefix+p, c)
	}
	r.Write("README", "monorepo\n")
	r.Commit("vendor the chart")
	r.Write(prefix+"templates/service.yaml", setLine(num(1, 30), 12, "line 12 patched"))
	r.Write(prefix+"templates/new.yaml", "kind: New\n")
	r.Remove(prefix + "templates/old.yaml")
	r.Write(prefix+"templates/renamed.yaml", setLine(num(100, 130), 20, "line 119 patched"))
	r.Remove(prefix + "templates/gone.yaml")
	r.Write(prefix+"logo.bin", "\x00\x01\x02binary\x00changed\x00")
	r.Git("add", "-A")
	return files, gitOut(t, r, "diff", "--cached", "--binary", "-M", "HEAD")
}

// traditional turns a git diff of modified text files into a traditional
// unified diff: no "diff --git" and "index" lines.
func traditional(diff string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(diff, "\n") {
		if strings.HasPrefix(l, "diff --git ") || strings.HasPrefix(l, "index ") {
			continue
		}
		b.WriteString(l)
	}
	return b.String()
}

// TestStripDirectoryParity applies vendored-subtree patches with a strip
// level and a directory, and compares the tree with
// `git apply -p<n> --directory=<dir>` on the same base.
func TestStripDirectoryParity(t *testing.T) {
	cases := []struct {
		name      string
		prefix    string // where the chart lives downstream
		treeDir   string // where it lives in the upstream tree
		strip     int
		directory string
		trad      bool
	}{
		{name: "p1 default", prefix: "", treeDir: "", strip: 0},
		{name: "p1 explicit", prefix: "", treeDir: "", strip: 1},
		{name: "p4 into the root", prefix: "packages/system/foo/", treeDir: "", strip: 4},
		{name: "p4 with directory", prefix: "packages/system/foo/", treeDir: "charts/foo/", strip: 4, directory: "charts/foo"},
		{name: "p1 with directory", prefix: "", treeDir: "deploy/helm/", strip: 1, directory: "deploy/helm/"},
		{name: "p3 keeps a component", prefix: "packages/system/foo/", treeDir: "foo/", strip: 3},
		{name: "traditional p4 with directory", prefix: "packages/system/foo/", treeDir: "k8s/", strip: 4, directory: "k8s", trad: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			files, diff := vendoredChange(t, c.prefix)
			base := tree.Map{"UPSTREAM": {Mode: tree.Regular, Data: []byte("upstream\n")}}
			for p, content := range files {
				base[c.treeDir+p] = &tree.File{Mode: tree.Regular, Data: []byte(content)}
			}
			if c.trad {
				diff = traditional(onlyText(diff))
				delete(base, c.treeDir+"logo.bin")
			}
			f := filepath.Join(t.TempDir(), "0001-chart.patch")
			if err := os.WriteFile(f, []byte(diff), 0o644); err != nil {
				t.Fatal(err)
			}
			dir := workTree(t, base)
			args := []string{"apply"}
			if c.strip > 0 {
				args = append(args, "-p"+strconv.Itoa(c.strip))
			}
			if c.directory != "" {
				args = append(args, "--directory="+c.directory)
			}
			if _, errOut, err := gittest.Run(dir, nil, append(args, f)...); err != nil {
				t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, errOut)
			}
			want := snap(t, dir)

			p, err := series.Parse(f, []byte(diff), series.WithStrip(c.strip), series.WithDirectory(c.directory))
			if err != nil {
				t.Fatalf("series.Parse() = %v", err)
			}
			res := Series(base, []*series.Patch{p})
			if !res.OK {
				t.Fatalf("Series() failed: %+v", res.Patches)
			}
			if d := treeDiff(overlay(base, res.Changes), want); d != "" {
				t.Fatalf("trees differ from git apply %s:\n%s", strings.Join(args[1:], " "), d)
			}
		})
	}
}

// onlyText keeps the file diffs of diff that modify a file in place.
func onlyText(diff string) string {
	parts := strings.Split(diff, "diff --git ")
	var b strings.Builder
	for _, p := range parts[1:] {
		if strings.Contains(p, "\nrename ") || strings.Contains(p, "\nnew file") ||
			strings.Contains(p, "\ndeleted file") || strings.Contains(p, "GIT binary patch") {
			continue
		}
		b.WriteString("diff --git " + p)
	}
	return b.String()
}

// TestStripRemovesWholePath: a strip level deeper than a name is bad input
// naming the file diff's line; git apply refuses it too.
func TestStripRemovesWholePath(t *testing.T) {
	_, diff := vendoredChange(t, "a/")
	f := filepath.Join(t.TempDir(), "deep.patch")
	if err := os.WriteFile(f, []byte(diff), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := series.Parse(f, []byte(diff), series.WithStrip(4))
	var ie *diag.InputError
	if !asInput(err, &ie) || ie.Line == 0 || !strings.Contains(ie.Msg, "strip 4 removes the whole path") {
		t.Fatalf("series.Parse(-p4) = %v, want an input error with a line", err)
	}
	base := tree.Map{"x": {Mode: tree.Regular, Data: []byte("x\n")}}
	if _, _, err := gittest.Run(workTree(t, base), nil, "apply", "-p4", f); err == nil {
		t.Fatalf("git apply -p4 accepted a patch whose names have fewer components")
	}
}

func asInput(err error, ie **diag.InputError) bool {
	e, ok := err.(*diag.InputError)
	if ok {
		*ie = e
	}
	return ok
}

// TestRecountParity: a hunk whose "@@" counts are wrong (a hand-edited
// patch) is bad input by default and applies with Recount exactly as
// `git apply --recount` applies it.
func TestRecountParity(t *testing.T) {
	r := gittest.New(t)
	r.Write("f.txt", num(1, 20))
	r.Commit("base")
	r.Write("f.txt", insertAt(setLine(num(1, 20), 5, "line 5 changed"), 10, "added 1\nadded 2\n"))
	r.Git("add", "-A")
	diff := gitOut(t, r, "diff", "--cached")
	// Hand edit: one more added line, counts left as they were.
	edited := strings.Replace(diff, "+added 2\n", "+added 2\n+added by hand\n", 1)
	if edited == diff {
		t.Fatal("the edit did not happen")
	}
	f := filepath.Join(t.TempDir(), "recount.patch")
	if err := os.WriteFile(f, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	base := tree.Map{"f.txt": {Mode: tree.Regular, Data: []byte(num(1, 20))}}
	if _, err := series.Parse(f, []byte(edited)); !diag.IsInput(err) {
		t.Fatalf("series.Parse() without recount = %v, want bad input", err)
	}
	if _, _, err := gittest.Run(workTree(t, base), nil, "apply", f); err == nil {
		t.Fatal("git apply without --recount accepted the miscounted hunk")
	}
	dir := workTree(t, base)
	if _, errOut, err := gittest.Run(dir, nil, "apply", "--recount", f); err != nil {
		t.Fatalf("git apply --recount: %v\n%s", err, errOut)
	}
	p, err := series.Parse(f, []byte(edited), series.WithRecount())
	if err != nil {
		t.Fatalf("series.Parse(recount) = %v", err)
	}
	res := Series(base, []*series.Patch{p})
	if !res.OK {
		t.Fatalf("Series() failed: %+v", res.Patches)
	}
	if d := treeDiff(overlay(base, res.Changes), snap(t, dir)); d != "" {
		t.Fatalf("trees differ from git apply --recount:\n%s", d)
	}
}
