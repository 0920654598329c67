package apply

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/tree"
)

// The parity suite runs every case through patchkit and through the oracle,
// `git apply --whitespace=error-all` of all the case's patches in one command,
// and compares: the verdict, the first patch that fails and the file it
// fails on, the whitespace errors git reports, and the resulting trees.

type parityCase struct {
	name    string
	reverse bool
	// build prepares the repository r and returns the base tree and the
	// patch texts, in series order.
	build func(t *testing.T, r *gittest.Repo) (tree.Map, []string)
}

func TestParity(t *testing.T) {
	cases := parityCases()
	if len(cases) < 45 {
		t.Fatalf("only %d parity cases", len(cases))
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.name] {
			t.Fatalf("duplicate case %q", c.name)
		}
		seen[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := gittest.New(t)
			base, patches := c.build(t, r)
			checkParity(t, base, patches, c.reverse)
		})
	}
}

// num returns lines "line from" to "line to".
func num(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// setLine replaces 1-based line n of s.
func setLine(s string, n int, line string) string {
	ls := strings.SplitAfter(s, "\n")
	ls[n-1] = line + "\n"
	return strings.Join(ls, "")
}

// insertAt inserts text before 1-based line n of s.
func insertAt(s string, n int, text string) string {
	ls := strings.SplitAfter(s, "\n")
	return strings.Join(ls[:n-1], "") + text + strings.Join(ls[n-1:], "")
}

// deleteLines removes count lines from 1-based line n of s.
func deleteLines(s string, n, count int) string {
	ls := strings.SplitAfter(s, "\n")
	return strings.Join(ls[:n-1], "") + strings.Join(ls[n-1+count:], "")
}

// gitOut runs git in r and returns its stdout unchanged.
func gitOut(t *testing.T, r *gittest.Repo, args ...string) string {
	t.Helper()
	out, errOut, err := r.GitIn(nil, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// commitPatch commits the work tree and returns `git format-patch` of the commit.
func commitPatch(t *testing.T, r *gittest.Repo, extra ...string) string {
	t.Helper()
	r.Commit("change")
	args := append([]string{"format-patch", "-1", "--stdout"}, extra...)
	return gitOut(t, r, append(args, "HEAD")...)
}

// snap reads dir (without .git) into a tree.
func snap(t *testing.T, dir string) tree.Map {
	t.Helper()
	m := tree.Map{}
	for rel, e := range gittest.Checkout(t, dir) {
		switch {
		case e.Mode&os.ModeSymlink != 0:
			m[rel] = &tree.File{Mode: tree.Symlink, Data: e.Data}
		case e.Mode.IsDir():
		case e.Mode&0o100 != 0:
			m[rel] = &tree.File{Mode: tree.Executable, Data: e.Data}
		default:
			m[rel] = &tree.File{Mode: tree.Regular, Data: e.Data}
		}
	}
	return m
}

// overlay lays changes over base.
func overlay(base tree.Map, changes map[string]*tree.File) tree.Map {
	out := tree.Map{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range changes {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// treeDiff describes how two trees differ, or returns "".
func treeDiff(got, want tree.Map) string {
	var b strings.Builder
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		g, w := got[k], want[k]
		switch {
		case g == nil:
			fmt.Fprintf(&b, "%s: missing (git has %s %q)\n", k, w.Mode, w.Data)
		case w == nil:
			fmt.Fprintf(&b, "%s: unexpected %s %q\n", k, g.Mode, g.Data)
		case g.Mode != w.Mode || !bytes.Equal(g.Data, w.Data):
			fmt.Fprintf(&b, "%s: got %s %q, git has %s %q\n", k, g.Mode, g.Data, w.Mode, w.Data)
		}
	}
	return b.String()
}

// oracle is what git apply did.
type oracle struct {
	ok        bool
	stderr    string   // of the run with every patch
	result    tree.Map // the tree after that run
	firstFail int      // index of the first patch that fails, applied one by one; -1 if none
	failErr   string   // stderr of that patch's run
}

func applyArgs(reverse bool) []string {
	args := []string{"apply", "--whitespace=error-all"}
	if reverse {
		args = append(args, "-R")
	}
	return args
}

// workTree writes base into a new git work tree.
func workTree(t *testing.T, base tree.Map) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "work")
	if err := tree.WriteAtomic(dir, base, nil); err != nil {
		t.Fatal(err)
	}
	if _, errOut, err := gittest.Run(dir, nil, "init", "-q"); err != nil {
		t.Fatalf("git init: %v\n%s", err, errOut)
	}
	return dir
}

// gitApplyAlone applies one patch file to base and returns git's stderr.
func gitApplyAlone(t *testing.T, base tree.Map, file string, reverse bool) string {
	t.Helper()
	_, errOut, _ := gittest.Run(workTree(t, base), nil, append(applyArgs(reverse), file)...)
	return errOut
}

// withoutLines drops the line numbers from "file:line: message" entries.
func withoutLines(ws []string) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		file, rest, _ := strings.Cut(w, ":")
		_, msg, _ := strings.Cut(rest, ": ")
		out = append(out, file+": "+msg)
	}
	sort.Strings(out)
	return out
}

func gitApply(t *testing.T, base tree.Map, files []string, reverse bool) oracle {
	t.Helper()
	args := applyArgs(reverse)
	prepare := func() string { return workTree(t, base) }
	var o oracle
	dir := prepare()
	_, errOut, err := gittest.Run(dir, nil, append(args, files...)...)
	o.ok, o.stderr = err == nil, errOut
	o.result = snap(t, dir)

	o.firstFail = -1
	dir = prepare()
	for i, f := range files {
		_, errOut, err := gittest.Run(dir, nil, append(args, f)...)
		if err != nil {
			o.firstFail, o.failErr = i, errOut
			break
		}
	}
	return o
}

var (
	wsLineRE  = regexp.MustCompile(`^(.*):(\d+): (.*)\.$`)
	errPathRE = []*regexp.Regexp{
		regexp.MustCompile(`^error: patch failed: (.+):\d+$`),
		regexp.MustCompile(`^error: (.+): patch does not apply$`),
		regexp.MustCompile(`^error: (.+): already exists in working directory$`),
		regexp.MustCompile(`^error: (.+): No such file or directory$`),
		regexp.MustCompile(`^error: (.+): wrong type$`),
		regexp.MustCompile(`^error: affected file '(.+)' is beyond a symbolic link$`),
		regexp.MustCompile(`^error: reading from '(.+)' beyond a symbolic link$`),
		regexp.MustCompile(`^error: cannot apply binary patch to '(.+)' without full index line$`),
		regexp.MustCompile(`^error: the patch applies to '(.+)' \(`),
		regexp.MustCompile(`^error: binary patch to '(.+)' creates incorrect result`),
		regexp.MustCompile(`^error: binary patch does not apply to '(.+)'$`),
		regexp.MustCompile(`^error: missing binary patch data for '(.+)'$`),
		regexp.MustCompile(`^error: cannot reverse-apply a binary patch without the reverse hunk to '(.+)'$`),
		regexp.MustCompile(`^error: path (.+) has been renamed/deleted$`),
		regexp.MustCompile(`^error: invalid path '(.+)'$`),
		regexp.MustCompile(`^error: unable to write file '(.+)' mode`),
		regexp.MustCompile(`^error: new mode \(\d+\) of (.+) does not match`),
	}
)

// gitWhitespace returns the whitespace errors in git's stderr as
// "file:line: message", sorted.
func gitWhitespace(stderr string, files []string) []string {
	isPatch := map[string]bool{}
	for _, f := range files {
		isPatch[f] = true
	}
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if m := wsLineRE.FindStringSubmatch(l); m != nil && isPatch[m[1]] {
			out = append(out, m[1]+":"+m[2]+": "+m[3])
		}
	}
	sort.Strings(out)
	return out
}

// gitFirstPath returns the path of git's first error that names one.
func gitFirstPath(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		for _, re := range errPathRE {
			if m := re.FindStringSubmatch(l); m != nil {
				return m[1]
			}
		}
	}
	return ""
}

func isParseWS(e Problem) bool { return e.Kind == KindWhitespace && e.Message != msgBlankAtEOF }
func isEOFWS(e Problem) bool   { return e.Kind == KindWhitespace && e.Message == msgBlankAtEOF }

func wsString(e Problem) string {
	return e.File + ":" + strconv.Itoa(e.Line) + ": " + e.Message
}

// visibleWhitespace returns the whitespace errors git would print for res,
// whose first failed patch is k. git reports the whitespace errors of every
// patch it parses, but checks a patch (and finds new blank lines at EOF) only
// while no whitespace error was seen; and after a patch that fails its
// checks it stops.
func visibleWhitespace(res *Result, k int) []string {
	var out []string
	var parse, eof, other int
	for _, e := range res.Patches[k].Errors {
		switch {
		case isParseWS(e):
			parse++
			out = append(out, wsString(e))
		case isEOFWS(e):
			eof++
		default:
			other++
		}
	}
	if parse == 0 {
		for _, e := range res.Patches[k].Errors {
			if isEOFWS(e) {
				out = append(out, wsString(e))
			}
		}
	}
	if parse > 0 || other == 0 {
		for _, pr := range res.Patches[k+1:] {
			for _, e := range pr.Errors {
				if isParseWS(e) {
					out = append(out, wsString(e))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func checkParity(t *testing.T, base tree.Map, patches []string, reverse bool) {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for i, p := range patches {
		f := filepath.Join(dir, fmt.Sprintf("%04d.patch", i+1))
		if err := os.WriteFile(f, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	o := gitApply(t, base, files, reverse)

	ps := make([]*series.Patch, 0, len(patches))
	for i, p := range patches {
		ps = append(ps, parsePatchForTest(t, files[i], []byte(p)))
	}
	var opts []Option
	if reverse {
		opts = append(opts, WithReverse())
	}
	res := Series(base, ps, opts...)
	ourFirst := -1
	for i, pr := range res.Patches {
		if pr.Status == StatusFailed {
			ourFirst = i
			break
		}
	}
	dump := func() string {
		var b strings.Builder
		for i, pr := range res.Patches {
			fmt.Fprintf(&b, "patch %d: %s\n", i+1, pr.Status)
			for _, e := range pr.Errors {
				fmt.Fprintf(&b, "  %s %s:%d %s: %s\n", e.Kind, filepath.Base(e.File), e.Line, e.Path, e.Message)
			}
		}
		return fmt.Sprintf("patchkit:\n%sgit (all patches, ok=%v):\n%s\ngit (first failing patch %d):\n%s",
			b.String(), o.ok, o.stderr, o.firstFail+1, o.failErr)
	}
	if o.ok != (o.firstFail < 0) {
		t.Fatalf("oracle disagrees with itself\n%s", dump())
	}
	if res.OK != o.ok || ourFirst != o.firstFail {
		t.Fatalf("Series() OK = %v, first failed patch %d; git apply ok = %v, first failed patch %d\n%s",
			res.OK, ourFirst+1, o.ok, o.firstFail+1, dump())
	}
	if o.ok {
		if d := treeDiff(overlay(base, res.Changes), o.result); d != "" {
			t.Fatalf("trees differ:\n%s\n%s", d, dump())
		}
		return
	}
	// git numbers the lines of every patch file after the first on one
	// command line as if the files were one (its line counter is never
	// reset), so exact line numbers come from runs of one patch each: the
	// failing patch's own run, and for each later patch that git went on
	// to parse, a run of that patch alone (its parse-time errors only).
	gotWS := visibleWhitespace(res, ourFirst)
	wantWS := gitWhitespace(o.failErr, files)
	for _, f := range files[ourFirst+1:] {
		if !strings.Contains(o.stderr, f+":") {
			continue
		}
		for _, l := range gitWhitespace(gitApplyAlone(t, base, f, reverse), files) {
			if !strings.HasSuffix(l, ": "+msgBlankAtEOF) {
				wantWS = append(wantWS, l)
			}
		}
	}
	sort.Strings(wantWS)
	if strings.Join(gotWS, "\n") != strings.Join(wantWS, "\n") {
		t.Fatalf("whitespace errors = %q, git reports %q\n%s", gotWS, wantWS, dump())
	}
	if got, want := withoutLines(gotWS), withoutLines(gitWhitespace(o.stderr, files)); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("whitespace errors = %q, git reports %q in one run\n%s", got, want, dump())
	}
	pr := res.Patches[ourFirst]
	parse := false
	ourPath := ""
	for _, e := range pr.Errors {
		if isParseWS(e) {
			parse = true
		}
		if e.Kind != KindWhitespace && ourPath == "" {
			ourPath = e.Path
		}
	}
	if parse {
		// git did not check this patch's files.
		return
	}
	if gitPath := gitFirstPath(o.failErr); gitPath != ourPath {
		t.Fatalf("first failing file = %q, git says %q\n%s", ourPath, gitPath, dump())
	}
}
