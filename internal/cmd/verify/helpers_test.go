package verify_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/cmd/cmdtest"
	"github.com/patchkit/patchkit/internal/cmd/root"
	"github.com/patchkit/patchkit/internal/gittest"
)

// upstream is a generated upstream:
//
//	v1.0.0  the pin: greet.txt (line1..line40), other.txt, pkg/controller/ctl.go
//	v1.1.0  two lines on top of greet.txt
//	v1.2.0  fix: line20 gets a comment, a comment line after line26 (Fixes #12)
//	v1.3.0  clean: other.txt gets a line
//	main    later: a file no patch touches
type upstream struct {
	repo                    *gittest.Repo
	fix, clean, later, pin  string
	moved, resplit, notFix  string // patch diffs made against the pin
	greetPin, greetFixedPin string
}

const (
	comment   = "line20 // retry until the target pod is scheduled"
	requeue   = "// requeue: the target pod is not scheduled yet"
	repoURL   = "https://github.com/acme/widget"
	missingID = "1234567890abcdef1234567890abcdef12345678"
)

func fixed(s string) string {
	s = strings.Replace(s, "line20\n", comment+"\n", 1)
	return strings.Replace(s, "line26\n", "line26\n"+requeue+"\n", 1)
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	r := gittest.New(t)
	u := &upstream{repo: r}
	u.greetPin = gittest.Numbered("line%d", 40)
	u.greetFixedPin = fixed(u.greetPin)
	r.Write("greet.txt", u.greetPin)
	r.Write("other.txt", "other\n")
	r.Write("pkg/controller/ctl.go", "package controller\n")
	u.pin = r.Commit("initial")
	r.Tag("v1.0.0")
	r.Write("greet.txt", "top1\ntop2\n"+u.greetPin)
	r.Release("greet: two lines on top", "v1.1.0")
	r.Write("greet.txt", "top1\ntop2\n"+u.greetFixedPin)
	u.fix = r.Commit("fix: requeue while the target pod is not scheduled\n\nFixes #12")
	r.Tag("v1.2.0")
	r.Write("other.txt", "other\nmore\n")
	u.clean = r.Commit("other: one more line")
	r.Tag("v1.3.0")
	r.Write("later.txt", "later\n")
	u.later = r.Commit("later: a new file")

	// The fix made again at the pin: other line numbers, other index lines.
	r.Git("checkout", "-q", "--detach", "v1.0.0")
	r.Write("greet.txt", u.greetFixedPin)
	at := r.Commit("fix at the pin")
	u.moved = r.Show(at)
	u.resplit = r.Git("diff", "-U1", "v1.0.0", at) + "\n"
	r.Git("checkout", "-q", "-f", "main")
	return u
}

// header is a patch header naming commit id as upstream.
func header(subject, kind, id string, extra ...string) string {
	h := "Subject: " + subject + "\n"
	if kind != "" {
		h += "Origin: " + kind
		if id != "" {
			h += ", " + repoURL + "/commit/" + id
		}
		h += "\n"
	}
	for _, e := range extra {
		h += e + "\n"
	}
	return h + "\n"
}

// repo is a patchkit repository with one image, img, on the upstream.
type repo struct {
	t             *testing.T
	up            *upstream
	gittest.Files // the patchkit repository: Root
	cache         string
}

const specText = `upstream:
  url: ` + repoURL + `
  ref: v1.0.0
  releases: "v1.*"
patches: patches/img
image:
  repository: img
  tag: v1.0.0
`

func newRepo(t *testing.T, up *upstream, cache string, extraSpec string) *repo {
	t.Helper()
	r := &repo{t: t, up: up, Files: gittest.Files{TB: t, Root: t.TempDir()}, cache: cache}
	r.Write("images/img/patchkit.yaml", specText+extraSpec)
	if err := os.MkdirAll(filepath.Join(r.Root, "patches/img"), 0o755); err != nil {
		t.Fatal(err)
	}
	return r
}

// run runs patchkit with the repository's root, cache and upstream.
func (r *repo) run(args ...string) (code int, stdout, stderr string) {
	r.t.Helper()
	return runPatchkit(r.t, append([]string{"--root", r.Root, "--cache-dir", r.cache, "--upstream-url", r.up.repo.URL()}, args...)...)
}

func runPatchkit(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return cmdtest.Run(t, root.NewCmdRoot, args...)
}

type verifyJSON struct {
	Image  string      `json:"image"`
	OK     bool        `json:"ok"`
	Checks []checkJSON `json:"checks"`
}

type checkJSON struct {
	Patch   string `json:"patch"`
	Check   string `json:"check"`
	Status  string `json:"status"`
	Message string `json:"message"`
	Line    int    `json:"line"`
}

func decode(t *testing.T, stdout string) verifyJSON {
	t.Helper()
	var v verifyJSON
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("verify -o json: %v\n%s", err, stdout)
	}
	return v
}

// check returns the check of patch (a file name under patches/img, or the
// spec file) named name; of several (the spec's test checks), the first
// whose message contains like, if given.
func (v verifyJSON) check(t *testing.T, patch, name string, like ...string) checkJSON {
	t.Helper()
	if !strings.Contains(patch, "/") {
		patch = "patches/img/" + patch
	}
	var found []checkJSON
	for _, c := range v.Checks {
		if c.Patch == patch && c.Check == name {
			found = append(found, c)
		}
	}
	for _, c := range found {
		if len(like) == 0 || strings.Contains(c.Message, like[0]) {
			return c
		}
	}
	if len(found) > 0 {
		return found[0]
	}
	t.Fatalf("no %s check for %s in %+v", name, patch, v.Checks)
	return checkJSON{}
}
