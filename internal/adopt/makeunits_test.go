package adopt

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// eksCommon is a Common.mk of aws/eks-distro's shape, cut to what init
// reads: the clone URL from the owner and repository, the checkout of
// $(GIT_TAG), and git am of the release branch's patches (else the
// project's).
const eksCommon = `MAKE_ROOT=$(BASE_DIRECTORY)/projects/$(REPO_OWNER)/$(REPO)
PROJECT_ROOT?=$(MAKE_ROOT)/$(RELEASE_BRANCH)
CLONE_URL?=https://github.com/$(REPO_OWNER)/$(REPO).git
PATCHES_DIR=$(or $(wildcard $(PROJECT_ROOT)/patches),$(wildcard $(MAKE_ROOT)/patches))
GIT_CHECKOUT_TARGET?=$(REPO)/eks-distro-checkout-$(GIT_TAG)
GIT_PATCH_TARGET?=$(REPO)/eks-distro-patched

$(REPO):
	git clone $(CLONE_URL) $(REPO)

$(GIT_CHECKOUT_TARGET): | $(REPO)
	git -C $(REPO) checkout --quiet -f $(GIT_TAG)
	@touch $@

$(GIT_PATCH_TARGET): $(GIT_CHECKOUT_TARGET)
	if [ -n "$(PATCHES_DIR)" ]; then git -C $(REPO) am --committer-date-is-author-date $(PATCHES_DIR)/*; fi; \
	touch $@
`

const eksProject = `BASE_DIRECTORY:=$(shell git rev-parse --show-toplevel)
GIT_TAG?=$(shell cat $(RELEASE_BRANCH)/GIT_TAG)
GOLANG_VERSION?=$(shell cat $(RELEASE_BRANCH)/GOLANG_VERSION)

REPO=widget
REPO_OWNER=acme

include $(BASE_DIRECTORY)/Common.mk
`

// TestMakeUnits: init on a repository of aws/eks-distro's shape finds one
// unit per release branch that holds patches, by its path, with the pin
// read from the branch's GIT_TAG and the series applied as the recipe's
// git am applies it; a branch without patches is no unit; a Makefile that
// computes its pin when make runs is listed, with its line, as unreadable.
func TestMakeUnits(t *testing.T) {
	r := gittest.New(t)
	r.Write("Common.mk", eksCommon)
	r.Write("projects/acme/widget/Makefile", eksProject)
	for _, b := range []struct{ branch, tag string }{{"1-29", "v1.2.0"}, {"1-30", "v1.3.1"}, {"1-31", "v1.3.1"}} {
		r.Write("projects/acme/widget/"+b.branch+"/GIT_TAG", b.tag+"\n")
		r.Write("projects/acme/widget/"+b.branch+"/GOLANG_VERSION", "1.24.4\n")
	}
	patch := "From 1 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] fix\n\n---\ndiff --git a/a.go b/a.go\n--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-a\n+b\n-- \n2.40.0\n\n"
	r.Write("projects/acme/widget/1-30/patches/0001-fix.patch", patch)
	r.Write("projects/acme/widget/1-31/patches/0001-fix.patch", patch)
	r.Write("projects/acme/gadget/Makefile", "BASE_DIRECTORY:=$(shell git rev-parse --show-toplevel)\n\nifdef RELEASE_BRANCH\nexport GIT_TAG:=$(shell ./bootstrap.sh)\nendif\n")
	r.Write("projects/acme/gadget/1-30/patches/0001-x.patch", patch)
	// aws-iam-authenticator's shape: the pin file, and a bootstrap script
	// that asks a cloud API when make reads the Makefile. init must not
	// run it (it would leave ran-bootstrap behind).
	r.Write("projects/acme/gizmo/Makefile", "BASE_DIRECTORY:=$(shell git rev-parse --show-toplevel)\nGIT_TAG?=$(shell cat $(RELEASE_BRANCH)/GIT_TAG)\nREPO=gizmo\n\nifdef RELEASE_BRANCH\n_bootstrap:=$(shell REPO=$(REPO) ./bootstrap.sh)\nendif\ninclude $(BASE_DIRECTORY)/Common.mk\n")
	r.Write("projects/acme/gizmo/bootstrap.sh", "#!/bin/sh\ntouch ran-bootstrap\n")
	r.Git("update-index", "--add", "--chmod=+x", "projects/acme/gizmo/bootstrap.sh")
	r.Write("projects/acme/gizmo/1-30/GIT_TAG", "v2.0.0\n")
	r.Write("projects/acme/gizmo/1-30/patches/0001-x.patch", patch)
	r.Commit("eks shape")
	if err := os.Chmod(filepath.Join(r.Dir, "projects/acme/gizmo/bootstrap.sh"), 0o755); err != nil {
		t.Fatal(err)
	}

	units, err := ScanContext(context.Background(), r.Dir, nil)
	if err != nil {
		t.Fatalf("ScanContext() = %v", err)
	}
	var got, problems []string
	for _, u := range units {
		got = append(got, u.Dir+" "+u.Status)
		problems = append(problems, u.Problem)
	}
	want := []string{"projects/acme/gadget unreadable", "projects/acme/gizmo unreadable", "projects/acme/widget/1-30 new", "projects/acme/widget/1-31 new"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("ScanContext() units = %q, want %q (problems: %q)", got, want, problems)
	}
	if p := units[0].Problem; !strings.Contains(p, "projects/acme/gadget/Makefile: the release branches 1-30 hold patches, but line 4 sets GIT_TAG when make runs") {
		t.Errorf("gadget: Problem = %q", p)
	}
	if p := units[1].Problem; !strings.Contains(p, "projects/acme/gizmo/Makefile: the release branches 1-30 hold patches, but line 6 runs ./bootstrap.sh when make reads it") {
		t.Errorf("gizmo: Problem = %q", p)
	}
	if _, err := os.Stat(filepath.Join(r.Dir, "projects/acme/gizmo/ran-bootstrap")); err == nil {
		t.Errorf("init ran gizmo's bootstrap script")
	}
	u := units[2]
	if u.Upstream.URL != "https://github.com/acme/widget.git" || u.Upstream.Ref != "v1.3.1" || u.Patches != "projects/acme/widget/1-30/patches" || u.Recipe != "projects/acme/widget/Makefile" {
		t.Errorf("1-30: %+v", u)
	}
	yaml := string(u.SpecYAML())
	for _, want := range []string{
		"  url: https://github.com/acme/widget.git  # Common.mk:9\n",
		"  ref:\n    file: ./GIT_TAG  # v1.3.1\n",
		"  releases: v1.*",
		"patches: ./patches\n",
		"apply:  # as the recipe applies the series\n  tool: git-am\n  args: [--committer-date-is-author-date]\n",
	} {
		if !strings.Contains(yaml, want) {
			t.Errorf("1-30 spec lacks %q:\n%s", want, yaml)
		}
	}
	if want := "    - file: ./GOLANG_VERSION  # projects/acme/widget/Makefile:3 reads it into GOLANG_VERSION\n      whole-file: true\n      spelling: go\n"; !strings.Contains(yaml, want) {
		t.Errorf("1-30 spec lacks the Go version place %q:\n%s", want, yaml)
	}
	if len(u.Notes) != 0 {
		t.Errorf("1-30 notes = %q, want none", u.Notes)
	}
}

func TestShellWords(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`if [ -n "/r/p" ]; then git -C x am --3way /r/p/*; fi;`, `if|[|-n|/r/p|]|;|then|git|-C|x|am|--3way|/r/p/*|;|fi|;`},
		{`git clone 'https://h/a b.git' x`, `git|clone|https://h/a b.git|x`},
	} {
		if got := strings.Join(shellWords(tc.in), "|"); got != tc.want {
			t.Errorf("shellWords(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
