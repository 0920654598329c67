package gomod

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gomod/gomodtest"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/tree"
)

const bumpPatch = `Subject: bump x/net for CVE-2025-22870

diff --git a/go.mod b/go.mod
--- a/go.mod
+++ b/go.mod
@@ -1,9 +1,9 @@
 module example.com/app
 
-go 1.21
+go 1.22.3
 
 require (
 	example.com/a v1.0.0
-	example.com/b v1.1.0 // indirect
+	example.com/b v1.3.0 // indirect
 	example.com/c/v2 v2.0.0
 )
diff --git a/go.sum b/go.sum
--- a/go.sum
+++ b/go.sum
@@ -1,2 +1,2 @@
-example.com/b v1.1.0 h1:x=
-example.com/b v1.1.0/go.mod h1:y=
+example.com/b v1.3.0 h1:x=
+example.com/b v1.3.0/go.mod h1:y=
`

const codeHunk = `diff --git a/main.go b/main.go
--- a/main.go
+++ b/main.go
@@ -1,3 +1,3 @@
 package main
 
-func main() {}
+func main() { println() }
`

const moduleHunk = `diff --git a/go.mod b/go.mod
--- a/go.mod
+++ b/go.mod
@@ -1,3 +1,3 @@
-module example.com/app
+module example.com/app2
 
 go 1.21
`

func parse(t *testing.T, text string) *series.Patch {
	t.Helper()
	p, err := series.Parse("0001.patch", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSplitPatch(t *testing.T) {
	cases := []struct {
		name        string
		text        string
		bump, mixed bool
		nilSplit    bool
		wants       []string
	}{
		{name: "bump", text: bumpPatch, bump: true, wants: []string{"go 1.22.3 from 1.21", "example.com/b v1.3.0 from v1.1.0"}},
		{name: "mixed", text: bumpPatch + codeHunk, mixed: true, wants: []string{"go 1.22.3 from 1.21", "example.com/b v1.3.0 from v1.1.0"}},
		{name: "module line is code", text: moduleHunk, nilSplit: true},
		{name: "code only", text: "Subject: x\n\n" + codeHunk, nilSplit: true},
		{name: "go.sum only raises nothing", text: `diff --git a/go.sum b/go.sum
--- a/go.sum
+++ b/go.sum
@@ -1 +1 @@
-example.com/b v1.1.0 h1:x=
+example.com/b v1.3.0 h1:x=
`, nilSplit: true},
		{name: "vendor/modules.txt and exclude", text: `diff --git a/go.mod b/go.mod
--- a/go.mod
+++ b/go.mod
@@ -1,3 +1,4 @@
 require example.com/a v1.0.0
+exclude example.com/a v1.0.1
 
-require example.com/b v1.0.0
+require example.com/b v1.0.1
diff --git a/vendor/modules.txt b/vendor/modules.txt
--- a/vendor/modules.txt
+++ b/vendor/modules.txt
@@ -1,2 +1,2 @@
-# example.com/b v1.0.0
+# example.com/b v1.0.1
 ## explicit
`, bump: true, wants: []string{"example.com/b v1.0.1 from v1.0.0"}},
		{name: "replace", text: `diff --git a/go.mod b/go.mod
--- a/go.mod
+++ b/go.mod
@@ -5,3 +5,3 @@
 replace (
-	example.com/a => example.com/a v1.0.0
+	example.com/a => example.com/a v1.4.0
 )
`, bump: true, wants: []string{"example.com/a v1.4.0 from v1.0.0 => example.com/a"}},
		{name: "replace lowered is a hold", text: `diff --git a/go.mod b/go.mod
--- a/go.mod
+++ b/go.mod
@@ -5,3 +5,3 @@
 replace (
-	example.com/a => example.com/a v1.4.0
+	example.com/a => example.com/a v1.0.0
 )
`, bump: true, wants: []string{"example.com/a v1.0.0 from v1.4.0 => example.com/a holds"}},
		{name: "replace by a fork is code", text: `diff --git a/go.mod b/go.mod
--- a/go.mod
+++ b/go.mod
@@ -5,3 +5,3 @@
 replace (
-	example.com/a => example.com/a v1.0.0
+	example.com/a => example.com/fork v1.4.0
 )
`, nilSplit: true},
		// containernetworking/plugins as aws/eks-distro carried it
		// (1-22/patches/0003): raise the go directive and x/sys, hold
		// ethtool below v0.2.0.
		{name: "raises and a lowered pseudo-version", text: `diff --git a/go.mod b/go.mod
--- a/go.mod
+++ b/go.mod
@@ -1,6 +1,6 @@
 module github.com/containernetworking/plugins
 
-go 1.17
+go 1.18
 
 require (
 	github.com/Microsoft/hcsshim v0.9.6
@@ -17,9 +17,9 @@ require (
 	github.com/networkplumbing/go-nft v0.2.0
 	github.com/onsi/ginkgo v1.16.5
 	github.com/onsi/gomega v1.24.2
-	github.com/safchain/ethtool v0.2.0
+	github.com/safchain/ethtool v0.0.0-20190326074333-42ed695e3de8
 	github.com/vishvananda/netlink v1.2.1-beta.2
-	golang.org/x/sys v0.4.0
+	golang.org/x/sys v0.5.0
 )
 
 require (
`, bump: true, wants: []string{"go 1.18 from 1.17", "github.com/safchain/ethtool v0.0.0-20190326074333-42ed695e3de8 from v0.2.0 holds", "golang.org/x/sys v0.5.0 from v0.4.0"}},
		{name: "replace by directory is code", text: `diff --git a/go.mod b/go.mod
--- a/go.mod
+++ b/go.mod
@@ -5,3 +5,3 @@
 replace (
-	example.com/a => example.com/a v1.0.0
+	example.com/a => ../a
 )
`, nilSplit: true},
		{name: "single-line require and toolchain", text: `diff --git a/go.mod b/go.mod
--- a/go.mod
+++ b/go.mod
@@ -1,4 +1,4 @@
 module m
 
-toolchain go1.22.0
+toolchain go1.22.5
-require example.com/a v1.0.0-20240101000000-abcdefabcdef
+require example.com/a v1.0.1-0.20240301000000-abcdefabcdef
`, bump: true, wants: []string{"toolchain go1.22.5 from go1.22.0", "example.com/a v1.0.1-0.20240301000000-abcdefabcdef from v1.0.0-20240101000000-abcdefabcdef"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := SplitPatch(parse(t, tc.text))
			if tc.nilSplit {
				if s != nil {
					t.Fatalf("SplitPatch() = %+v, want nil", s)
				}
				return
			}
			if s == nil {
				t.Fatal("SplitPatch() = nil")
			}
			if s.IsBump() != tc.bump || s.IsMixed() != tc.mixed {
				t.Errorf("IsBump, IsMixed = %v, %v, want %v, %v", s.IsBump(), s.IsMixed(), tc.bump, tc.mixed)
			}
			var got []string
			for _, w := range s.Wants {
				g := w.Path + " " + w.Version + " from " + w.From
				if w.Replace != "" {
					g += " => " + w.Replace
				}
				if w.Hold {
					g += " holds"
				}
				got = append(got, g)
			}
			if strings.Join(got, "|") != strings.Join(tc.wants, "|") {
				t.Errorf("Wants = %q, want %q", got, tc.wants)
			}
			if tc.mixed {
				if len(s.Code.Files) != 1 || s.Code.Files[0].NewName != "main.go" {
					t.Errorf("Code part files = %v, want main.go", s.Code.Files)
				}
				if len(s.Bump.Files) != 2 {
					t.Errorf("Bump part has %d files, want go.mod and go.sum", len(s.Bump.Files))
				}
				if !strings.HasPrefix(string(s.Code.Bytes()), "Subject: bump") {
					t.Errorf("Code part lost the header: %q", s.Code.Bytes()[:20])
				}
			}
		})
	}
}

func TestCover(t *testing.T) {
	gomod := `module example.com/app

go 1.22.1

require (
	example.com/a v1.2.0
	example.com/b v1.3.0-rc.1
	example.com/c/v3 v3.0.0
	example.com/d v2.1.0+incompatible
	example.com/e v0.0.0-20240301000000-abcdefabcdef
	example.com/f v1.5.0
)

replace example.com/f => example.com/f v1.1.0

replace example.com/g => ./local
`
	m, err := Parse("go.mod", []byte(gomod))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		want    Want
		covered bool
		note    string
	}{
		{Want{Path: "example.com/a", Version: "v1.2.0"}, true, ""},
		{Want{Path: "example.com/a", Version: "v1.10.0"}, false, ""},
		{Want{Path: "example.com/a", Version: "v1.2.0-rc.1"}, true, ""},
		{Want{Path: "example.com/b", Version: "v1.3.0"}, false, ""}, // a prerelease is lower
		{Want{Path: "example.com/c/v2", Version: "v2.9.0", From: "v2.0.0"}, true, "moved to example.com/c/v3"},
		{Want{Path: "example.com/d", Version: "v2.0.5+incompatible"}, true, ""},
		{Want{Path: "example.com/e", Version: "v0.0.0-20240201000000-abcdefabcdef"}, true, ""},
		{Want{Path: "example.com/e", Version: "v0.0.1"}, false, ""}, // a pseudo-version is below its base's next patch
		{Want{Path: "example.com/f", Version: "v1.2.0"}, false, ""}, // replace pins it lower than required
		{Want{Path: "example.com/g", Version: "v1.0.0"}, false, "replaced by the directory ./local"},
		{Want{Path: "example.com/h", Version: "v1.0.0", From: "v0.9.0"}, true, "no longer required"},
		{Want{Path: "example.com/h", Version: "v1.0.0"}, false, ""},
		{Want{Path: DirectiveGo, Version: "1.22.0"}, true, ""},
		{Want{Path: DirectiveGo, Version: "1.22.3"}, false, ""},
		{Want{Path: DirectiveToolchain, Version: "go1.22.1"}, true, "the go directive"},
		{Want{Path: DirectiveToolchain, Version: "go1.23rc1"}, false, "the go directive"},
	}
	for _, tc := range cases {
		c := m.Cover(tc.want)
		if c.Covered != tc.covered || c.Note != tc.note {
			t.Errorf("Cover(%s %s) = %v %q (upstream %s), want %v %q", tc.want.Path, tc.want.Version, c.Covered, c.Note, c.Upstream, tc.covered, tc.note)
		}
	}
}

// TestRaise raises a requirement of a module tree with the real go command
// against a proxy on disk, then builds it offline.
func TestRaise(t *testing.T) {
	proxy := gomodtest.Proxy(t,
		gomodtest.Module{Path: "example.com/a", Version: "v1.0.0"},
		gomodtest.Module{Path: "example.com/a", Version: "v1.2.0", Require: []string{"example.com/b@v1.1.0"}},
		gomodtest.Module{Path: "example.com/b", Version: "v1.1.0"},
	)
	gomodtest.Env(t, proxy)
	src := tree.Map{
		"go.mod":  {Mode: tree.Regular, Data: []byte("module example.com/app\n\ngo 1.21\n\nrequire example.com/a v1.0.0\n")},
		"main.go": {Mode: tree.Regular, Data: []byte("package main\n\nimport \"example.com/a\"\n\nfunc main() { println(a.V) }\n")},
	}
	root := t.TempDir()
	if err := Materialize(root, src, nil, ""); err != nil {
		t.Fatal(err)
	}
	var g Go
	ctx := context.Background()
	mod, sum, err := g.Raise(ctx, root, []Want{{File: "go.mod", Path: "example.com/a", Version: "v1.2.0", From: "v1.0.0"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"example.com/a v1.2.0", "example.com/b v1.1.0 // indirect"} {
		if !strings.Contains(string(mod), want) {
			t.Errorf("go.mod lacks %q:\n%s", want, mod)
		}
	}
	if !strings.Contains(string(sum), "example.com/a v1.2.0 h1:") || !strings.Contains(string(sum), "example.com/b v1.1.0/go.mod h1:") {
		t.Errorf("go.sum lacks the new hashes:\n%s", sum)
	}
	// Offline, with -mod=readonly: go.mod and go.sum are complete.
	gomodtest.Go(t, root, []string{"GOPROXY=off", "GOFLAGS=-modcacherw"}, "build", "-mod=readonly", "./...")
	if _, err := os.Stat(filepath.Join(root, "app")); err == nil {
		os.Remove(filepath.Join(root, "app"))
	}
}

func TestLowered(t *testing.T) {
	before := "module m\n\ngo 1.22\n\nrequire (\n\texample.com/a v1.2.0\n\texample.com/b v1.0.0\n\texample.com/c v1.0.0\n)\n"
	after := "module m\n\ngo 1.21\n\nrequire (\n\texample.com/a v1.1.0\n\texample.com/b v1.3.0\n)\n"
	got, err := Lowered("go.mod", []byte(before), []byte(after))
	if err != nil {
		t.Fatal(err)
	}
	want := "example.com/a v1.2.0 -> v1.1.0|go 1.22 -> 1.21"
	if strings.Join(got, "|") != want {
		t.Errorf("Lowered() = %q, want %q", got, want)
	}
}

func TestCoverUnparsable(t *testing.T) {
	if _, err := Parse("go.mod", []byte("module m\nrequire (\n")); err == nil {
		t.Fatal("Parse() of a broken go.mod = nil error")
	}
	c := (&Mod{Err: "broken"}).Cover(Want{File: "go.mod", Path: "example.com/a", Version: "v1.0.0", From: "v0.9.0"})
	if c.Covered || !strings.Contains(c.Note, "does not parse") {
		t.Errorf("Cover() on an unparsable go.mod = %+v", c)
	}
	var missing *Mod
	if c := missing.Cover(Want{File: "go.mod", Path: "example.com/a", Version: "v1.0.0", From: "v0.9.0"}); c.Covered {
		t.Errorf("Cover() on a missing go.mod = %+v", c)
	}
}

// TestOrient tells holds by the tree a patch applies to: a replace or a
// require line that sets a module below what that go.mod requires holds it
// down; one above raises it; the go.mod missing tells nothing.
func TestOrient(t *testing.T) {
	base := tree.Map{"go.mod": {Mode: tree.Regular, Data: []byte(`module m

go 1.22

require (
	example.com/a v1.5.0
	example.com/b v1.0.0
	example.com/c v1.0.0
)

replace example.com/c => example.com/c v1.3.0
`)}}
	p := parse(t, `diff --git a/go.mod b/go.mod
--- a/go.mod
+++ b/go.mod
@@ -10,3 +10,6 @@
 )
 
 replace example.com/c => example.com/c v1.3.0
+replace example.com/a => example.com/a v1.4.1
+replace example.com/b => example.com/b v1.2.0
+replace example.com/d => example.com/d v0.1.0
`)
	s := SplitPatch(p)
	if s == nil {
		t.Fatal("SplitPatch() = nil")
	}
	if err := s.Orient(base); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"example.com/a": true, "example.com/b": false, "example.com/d": false}
	for _, w := range s.Wants {
		if w.Hold != want[w.Path] {
			t.Errorf("Orient(): %s %s Hold = %v, want %v", w.Path, w.Version, w.Hold, want[w.Path])
		}
	}
	s = SplitPatch(p)
	if err := s.Orient(tree.Map{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range s.Wants {
		if w.Hold {
			t.Errorf("Orient() without a go.mod: %s holds", w.Path)
		}
	}
}

// TestCoverHold: a hold is covered only where upstream keeps the module at
// the held version or lower, or no longer requires it; upstream going
// higher, moving to another major version or replacing it elsewhere is not.
func TestCoverHold(t *testing.T) {
	m, err := Parse("go.mod", []byte(`module example.com/app

go 1.22.1

require (
	example.com/a v1.2.0
	example.com/c/v3 v3.0.0
	example.com/f v1.5.0
	example.com/g v1.0.0
	example.com/h v0.0.0-20190326074333-42ed695e3de8
)

replace example.com/f => example.com/f v1.1.0

replace example.com/g => example.com/fork v1.0.0
`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		want    Want
		covered bool
		note    string
	}{
		{Want{Path: "example.com/a", Version: "v1.1.0", From: "v1.3.0", Hold: true}, false, ""},
		{Want{Path: "example.com/a", Version: "v1.2.0", From: "v1.3.0", Hold: true}, true, ""},
		{Want{Path: "example.com/a", Version: "v1.2.1", From: "v1.3.0", Hold: true}, true, ""},
		{Want{Path: "example.com/c/v2", Version: "v2.1.0", From: "v2.3.0", Hold: true}, false, "moved to example.com/c/v3: the hold no longer says what is built"},
		{Want{Path: "example.com/f", Version: "v1.0.0", Replace: "example.com/f", Hold: true}, false, ""},
		{Want{Path: "example.com/f", Version: "v1.1.0", Replace: "example.com/f", Hold: true}, true, ""},
		{Want{Path: "example.com/g", Version: "v0.9.0", Hold: true}, false, "replaced by example.com/fork v1.0.0"},
		{Want{Path: "example.com/h", Version: "v0.0.0-20190326074333-42ed695e3de8", From: "v0.2.0", Hold: true}, true, ""},
		{Want{Path: "example.com/h", Version: "v0.0.0-20180101000000-abcdefabcdef", From: "v0.2.0", Hold: true}, false, ""},
		{Want{Path: "example.com/x", Version: "v0.1.0", From: "v0.2.0", Hold: true}, true, "no longer required"},
		{Want{Path: DirectiveGo, Version: "1.22.1", From: "1.23", Hold: true}, true, ""},
		{Want{Path: DirectiveGo, Version: "1.21", From: "1.23", Hold: true}, false, ""},
	}
	for _, tc := range cases {
		c := m.Cover(tc.want)
		if c.Covered != tc.covered || c.Note != tc.note {
			t.Errorf("Cover(hold %s %s) = %v %q (upstream %s), want %v %q", tc.want.Path, tc.want.Version, c.Covered, c.Note, c.Upstream, tc.covered, tc.note)
		}
	}
}
