package obsolete_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/cmd/cmdtest"
	"github.com/patchkit/patchkit/internal/cmd/obsolete"
	"github.com/patchkit/patchkit/internal/cmd/root"
	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/spf13/cobra"
)

// The upstream: greet.txt and tool.txt at v1.0.0 (the pin); v1.1.0 carries
// the greet fix; v1.2.0 rewrites the line the tool patch changes.
const (
	greetV1 = "one\ntwo\nhello\nfour\nfive\n"
	greetV2 = "one\ntwo\nhello world\nfour\nfive\n"
	toolV1  = "a\nb\nc\nd\ne\nf\ng\n"
	toolV3  = "a\nb\nc\nd upstream\ne\nf\ng\n"
)

const patchGreet = `Subject: greet the world
Origin: vendor
Forwarded: no

diff --git a/greet.txt b/greet.txt
--- a/greet.txt
+++ b/greet.txt
@@ -1,5 +1,5 @@
 one
 two
-hello
+hello world
 four
 five
`

const patchTool = `Subject: tool fix

diff --git a/tool.txt b/tool.txt
--- a/tool.txt
+++ b/tool.txt
@@ -1,7 +1,7 @@
 a
 b
 c
-d
+D
 e
 f
 g
`

const patchNew = `diff --git a/extra.txt b/extra.txt
new file mode 100644
--- /dev/null
+++ b/extra.txt
@@ -0,0 +1 @@
+extra
`

type fixture struct {
	up        *gittest.Repo
	root      string
	cache     string
	fixCommit string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	up := gittest.New(t)
	up.Write("greet.txt", greetV1)
	up.Write("tool.txt", toolV1)
	up.Release("v1", "v1.0.0")
	up.Write("greet.txt", greetV2)
	f := &fixture{up: up, root: t.TempDir(), cache: t.TempDir()}
	f.fixCommit = up.Commit("greet the world")
	up.Tag("v1.1.0")
	up.Write("tool.txt", toolV3)
	up.Release("rework d", "v1.2.0")
	f.addImage(t, "img", "v1.0.0", map[string]string{"0001-greet.diff": patchGreet, "0002-tool.patch": patchTool})
	return f
}

func (f *fixture) addImage(t *testing.T, name, pin string, patches map[string]string) {
	t.Helper()
	dir := filepath.Join(f.root, "images", name)
	must(t, os.MkdirAll(dir, 0o755))
	spec := "upstream:\n  url: " + f.up.URL() + "\n  ref: " + pin + "\n  releases: \"v1.*\"\npatches: patches/" + name + "\n"
	must(t, os.WriteFile(filepath.Join(dir, "patchkit.yaml"), []byte(spec), 0o644))
	pdir := filepath.Join(f.root, "patches", name)
	must(t, os.MkdirAll(pdir, 0o755))
	for n, txt := range patches {
		must(t, os.WriteFile(filepath.Join(pdir, n), []byte(txt), 0o644))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// runPatchkit runs the patchkit command tree in-process, with obsolete-check
// added if the root does not have it yet, and returns the exit code main
// would return, stdout and stderr.
func runPatchkit(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return cmdtest.Run(t, func(f *cmdutil.Factory) *cobra.Command {
		cmd := root.NewCmdRoot(f)
		if c, _, err := cmd.Find([]string{"obsolete-check"}); err != nil || c == cmd {
			cmd.AddCommand(obsolete.NewCmdObsolete(f, nil))
		}
		return cmd
	}, args...)
}

func (f *fixture) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runPatchkit(t, append([]string{"--root", f.root, "--cache-dir", f.cache}, args...)...)
}

type checkJSON struct {
	Image    string   `json:"image"`
	Pin      string   `json:"pin"`
	Refs     []string `json:"refs"`
	RefsInfo []struct {
		Ref, Kind, Commit string
		NonSemver         bool
	} `json:"refsInfo"`
	OK      bool `json:"ok"`
	Patches []struct {
		File        string  `json:"file"`
		ObsoletedBy *string `json:"obsoletedBy"`
		Commit      *string `json:"commit"`
		Results     []struct {
			Ref      string  `json:"ref"`
			Status   string  `json:"status"`
			Commit   *string `json:"commit"`
			Via      string  `json:"via"`
			Evidence string  `json:"evidence"`
			Conflict *struct {
				File string `json:"file"`
				Line int    `json:"line"`
				Hunk string `json:"hunk"`
			} `json:"conflict"`
		} `json:"results"`
	} `json:"patches"`
	Written []struct {
		File, AppliedUpstream, Previous string
	} `json:"written"`
}

func TestObsoleteCheckJSON(t *testing.T) {
	f := newFixture(t)
	code, stdout, stderr := f.run(t, "obsolete-check", "img", "-o", "json")
	if code != 1 {
		t.Fatalf("exit = %d, want 1 (findings)\n%s%s", code, stdout, stderr)
	}
	var got checkJSON
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &raw); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
	}
	for _, k := range []string{"image", "pin", "refs", "patches"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	if got.Image != "img" || got.Pin != "v1.0.0" || strings.Join(got.Refs, " ") != "v1.1.0 v1.2.0" || got.OK {
		t.Errorf("image %q pin %q refs %q ok %v; want img v1.0.0 [v1.1.0 v1.2.0] false", got.Image, got.Pin, got.Refs, got.OK)
	}
	if len(got.Patches) != 2 {
		t.Fatalf("patches = %d, want 2", len(got.Patches))
	}
	greet, tool := got.Patches[0], got.Patches[1]
	if greet.File != "patches/img/0001-greet.diff" || greet.ObsoletedBy == nil || *greet.ObsoletedBy != "v1.1.0" || greet.Commit == nil || *greet.Commit != f.fixCommit {
		t.Errorf("greet = %s obsoletedBy %v commit %v; want v1.1.0 %s", greet.File, greet.ObsoletedBy, greet.Commit, f.fixCommit)
	}
	if tool.ObsoletedBy != nil || tool.Commit != nil {
		t.Errorf("tool obsoletedBy = %v, commit = %v; want null, null", tool.ObsoletedBy, tool.Commit)
	}
	var st []string
	for _, p := range got.Patches {
		for _, r := range p.Results {
			st = append(st, r.Ref+"="+r.Status)
		}
	}
	if want := "v1.1.0=present v1.2.0=present v1.1.0=applies v1.2.0=conflict"; strings.Join(st, " ") != want {
		t.Errorf("results = %q, want %q", strings.Join(st, " "), want)
	}
	if r := tool.Results[1]; r.Conflict == nil || r.Conflict.File != "patches/img/0002-tool.patch" || r.Conflict.Line != 6 || r.Commit != nil {
		t.Errorf("tool at v1.2.0: conflict %+v commit %v; want the hunk at patches/img/0002-tool.patch:6 and a null commit", r.Conflict, r.Commit)
	}
	if r := greet.Results[0]; r.Commit == nil || *r.Commit != f.fixCommit || r.Via != "reverse-apply" {
		t.Errorf("greet at v1.1.0: commit %v via %s; want %s via reverse-apply", r.Commit, r.Via, f.fixCommit)
	}
}

func TestObsoleteCheckExitCodes(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, f *fixture)
		args  []string
		code  int
		err   string
	}{
		{name: "all apply", args: []string{"obsolete-check", "clean"}, code: 0,
			setup: func(t *testing.T, f *fixture) {
				f.addImage(t, "clean", "v1.0.0", map[string]string{"0001.diff": patchNew})
			}},
		{name: "present", args: []string{"obsolete-check", "img", "--refs", "v1.1.0"}, code: 1},
		{name: "conflict", args: []string{"obsolete-check", "conflicting"}, code: 1,
			setup: func(t *testing.T, f *fixture) {
				f.addImage(t, "conflicting", "v1.0.0", map[string]string{"0001.diff": patchTool})
			}},
		{name: "unknown spec key", args: []string{"obsolete-check", "bad"}, code: 2, err: "images/bad/patchkit.yaml",
			setup: func(t *testing.T, f *fixture) {
				f.addImage(t, "bad", "v1.0.0", map[string]string{"0001.diff": patchTool})
				p := filepath.Join(f.root, "images/bad/patchkit.yaml")
				b, _ := os.ReadFile(p)
				must(t, os.WriteFile(p, append(b, "colour: red\n"...), 0o644))
			}},
		{name: "unknown image", args: []string{"obsolete-check", "nope"}, code: 2, err: "no image"},
		{name: "upstream-url with two images", args: []string{"obsolete-check", "--upstream-url", "file:///nowhere", "img", "other"}, code: 2, err: "one IMAGE"},
		{name: "upstream-url with no image", args: []string{"obsolete-check", "--upstream-url", "file:///nowhere"}, code: 2, err: "one IMAGE"},
		{name: "unknown ref", args: []string{"obsolete-check", "img", "--refs", "v9.9.9"}, code: 2, err: "v9.9.9"},
		{name: "bad output format", args: []string{"obsolete-check", "img", "-o", "yaml"}, code: 2, err: "yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.setup != nil {
				tt.setup(t, f)
			}
			code, stdout, stderr := f.run(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit = %d, want %d\n%s%s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stderr, tt.err) {
				t.Errorf("stderr = %q, want it to contain %q", stderr, tt.err)
			}
		})
	}
}

func TestObsoleteCheckWrite(t *testing.T) {
	f := newFixture(t)
	greetFile := filepath.Join(f.root, "patches/img/0001-greet.diff")
	toolFile := filepath.Join(f.root, "patches/img/0002-tool.patch")
	code, stdout, stderr := f.run(t, "obsolete-check", "img", "--write", "-o", "json")
	if code != 1 {
		t.Fatalf("exit = %d, want 1\n%s%s", code, stdout, stderr)
	}
	want := strings.Replace(patchGreet, "Forwarded: no\n", "Forwarded: no\nApplied-Upstream: v1.1.0\n", 1)
	if got, _ := os.ReadFile(greetFile); string(got) != want {
		t.Errorf("greet patch after --write =\n%s\nwant\n%s", got, want)
	}
	if got, _ := os.ReadFile(toolFile); string(got) != patchTool {
		t.Errorf("tool patch changed by --write:\n%s", got)
	}
	var first checkJSON
	must(t, json.Unmarshal([]byte(stdout), &first))
	if len(first.Written) != 1 || first.Written[0].File != "patches/img/0001-greet.diff" || first.Written[0].AppliedUpstream != "v1.1.0" {
		t.Errorf("written = %+v, want the greet patch with v1.1.0", first.Written)
	}

	// A second --write changes nothing.
	code, stdout, stderr = f.run(t, "obsolete-check", "img", "--write", "--offline")
	if code != 1 {
		t.Fatalf("second run: exit = %d, want 1\n%s%s", code, stdout, stderr)
	}
	if got, _ := os.ReadFile(greetFile); string(got) != want {
		t.Errorf("greet patch after a second --write =\n%s", got)
	}
	if !strings.Contains(stdout, "every Applied-Upstream field is up to date") {
		t.Errorf("second run says\n%s\nwant it to say nothing was written", stdout)
	}

	// A wrong note is corrected.
	must(t, os.WriteFile(greetFile, []byte(strings.Replace(want, "v1.1.0", "v1.2.0", 1)), 0o644))
	f.run(t, "obsolete-check", "img", "--write", "--offline")
	if got, _ := os.ReadFile(greetFile); string(got) != want {
		t.Errorf("greet patch after correcting =\n%s\nwant\n%s", got, want)
	}
}

func TestObsoleteCheckAllImages(t *testing.T) {
	f := newFixture(t)
	f.addImage(t, "other", "v1.1.0", map[string]string{"0001.diff": patchTool})
	code, stdout, stderr := f.run(t, "obsolete-check", "-o", "json")
	if code != 1 {
		t.Fatalf("exit = %d, want 1\n%s%s", code, stdout, stderr)
	}
	var got []checkJSON
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("stdout is not a JSON array: %v\n%s", err, stdout)
	}
	if len(got) != 2 || got[0].Image != "img" || got[1].Image != "other" {
		t.Fatalf("images = %+v, want img and other", got)
	}
	if refs := strings.Join(got[1].Refs, " "); refs != "v1.2.0" {
		t.Errorf("other (pinned at v1.1.0) scans %q, want v1.2.0", refs)
	}
}

func TestObsoleteCheckRefsFlag(t *testing.T) {
	f := newFixture(t)
	code, stdout, stderr := f.run(t, "obsolete-check", "img", "--refs", "v1.2.0,main", "-o", "json")
	if code != 1 {
		t.Fatalf("exit = %d, want 1\n%s%s", code, stdout, stderr)
	}
	var got checkJSON
	must(t, json.Unmarshal([]byte(stdout), &got))
	var refs []string
	for _, r := range got.RefsInfo {
		refs = append(refs, r.Ref+":"+r.Kind)
	}
	if strings.Join(refs, " ") != "v1.2.0:tag main:branch" {
		t.Errorf("refs = %q, want v1.2.0:tag main:branch", refs)
	}
	if ob := got.Patches[0].ObsoletedBy; ob == nil || *ob != "v1.2.0" {
		t.Errorf("obsoletedBy = %v, want v1.2.0", ob)
	}
}

func TestObsoleteCheckFormats(t *testing.T) {
	tests := []struct {
		format string
		want   []string
	}{
		{format: "text", want: []string{
			"img: 2 patches against file://",
			"PATCH                        v1.1.0   v1.2.0    OBSOLETED BY",
			"patches/img/0001-greet.diff  present  present   v1.1.0 (",
			"patches/img/0002-tool.patch  applies  conflict  -",
			"    v1.2.0: conflict\n      patches/img/0002-tool.patch:6: hunk #1 does not apply",
		}},
		{format: "markdown", want: []string{
			"| patch | `v1.1.0` | `v1.2.0` | first obsoleting release | evidence |",
			"| `patches/img/0001-greet.diff` | 🟢 **present** | 🟢 **present** | `v1.1.0` (`",
			"| `patches/img/0002-tool.patch` | applies | 🔴 **conflict** |  | at `v1.2.0`: hunk #1 does not apply",
		}},
		{format: "github", want: []string{
			"::warning file=patches/img/0001-greet.diff,line=1,title=patchkit obsolete-check%3A obsolete::patches/img/0001-greet.diff is present in upstream v1.1.0",
			"::error file=patches/img/0002-tool.patch,line=6,title=patchkit obsolete-check%3A conflict::patches/img/0002-tool.patch no longer applies to upstream v1.2.0",
			"::notice title=patchkit obsolete-check::img: 2 patches, 2 refs scanned: 1 obsoleted by a release, 0 partly upstream, 1 in conflict",
		}},
	}
	f := newFixture(t)
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			code, stdout, stderr := f.run(t, "obsolete-check", "img", "-o", tt.format)
			if code != 1 {
				t.Fatalf("exit = %d, want 1\n%s%s", code, stdout, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("output lacks %q:\n%s", w, stdout)
				}
			}
		})
	}
}

func TestNewCmdObsoleteOptions(t *testing.T) {
	var got *Options
	f := &cmdutil.Factory{IO: cmdutil.Test(&bytes.Buffer{}, &bytes.Buffer{})}
	cmd := obsolete.NewCmdObsolete(f, func(_ context.Context, o *obsolete.Options) error { got = o; return nil })
	cmd.SetArgs([]string{"a", "b", "--refs", "v1,v2", "--refs", "main", "--write"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Images, " ") != "a b" || strings.Join(got.Refs, " ") != "v1 v2 main" || !got.Write {
		t.Errorf("options = %+v, want images a b, refs v1 v2 main, write", got)
	}
}

// Options is the command's options type, for the runF test.
type Options = obsolete.Options

// TestObsoleteCheckWritePartFailure: the series names one file twice (the
// second entry is a symbolic link to the first). The write set is refused
// as a whole: the error names both, and neither is written.
func TestObsoleteCheckWritePartFailure(t *testing.T) {
	f := newFixture(t)
	f.addImage(t, "dup", "v1.0.0", map[string]string{"0001-greet.diff": patchGreet})
	first := filepath.Join(f.root, "patches/dup/0001-greet.diff")
	must(t, os.Symlink("0001-greet.diff", filepath.Join(f.root, "patches/dup/0002-greet-again.diff")))
	code, stdout, stderr := f.run(t, "obsolete-check", "dup", "--write")
	if code != 2 {
		t.Fatalf("exit = %d, want 2\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"patches/dup/0002-greet-again.diff: is the same file as patches/dup/0001-greet.diff",
		"no patch file was written",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr = %q, want it to say %q", stderr, want)
		}
	}
	if got, _ := os.ReadFile(first); strings.Contains(string(got), "Applied-Upstream") {
		t.Errorf("first patch =\n%s\nwant it unchanged", got)
	}
}
