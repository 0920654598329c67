package series

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
)

var headerSeeds = []string{
	"",
	"Subject: x\nOrigin: upstream, https://github.com/o/r/commit/" + sha1a + "\nBug: https://b/1\nApplied-Upstream: v1.15.14\nTest: TestA, TestB\n",
	"Description: short\n long\n .\n more\nOrigin: vendor\nForwarded: no\n",
	"From " + sha1b + " Mon Sep 17 00:00:00 2001\nFrom: A <a@b>\nDate: Tue, 14 Nov 2023 22:13:20 +0000\nSubject: [PATCH v2 1/3] x\n y\n\nbody\n\nSigned-off-by: A\n(cherry picked from commit " + sha1a + ")\n---\n f | 1 +\n",
	"Subject: x\n\ncommit " + sha1a + " upstream.\n",
	"Upstream-Status: Backport [https://gitlab.com/g/p/-/commit/" + sha1b + "]\n",
	"Backport-of: commit:" + sha1b[:9] + "\n",
	"Origin: bogus\n",
	"Origin:\n",
	"Origin: upstream,\n",
	"Applied-Upstream:\n",
	"Test: ,\n",
	"Subject: \xff\n",
	"\x00",
	" continuation first\n\tand a tab\n",
	"Subject: x\r\n\r\n---\r\nTest: y\r\n",
}

func FuzzParseHeader(f *testing.F) {
	for _, s := range headerSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		h, err := ParseHeader(text, "fuzz.diff")
		n := bytes.Count(text, []byte("\n"))
		if len(text) > 0 && text[len(text)-1] != '\n' {
			n++
		}
		if err != nil {
			var ie *diag.InputError
			if !errors.As(err, &ie) || ie.File != "fuzz.diff" || ie.Line < 1 || ie.Line > n {
				t.Fatalf("ParseHeader() error = %v, want an InputError on a line of the %d", err, n)
			}
			return
		}
		if h.Lines != n {
			t.Fatalf("ParseHeader() Lines = %d, want %d", h.Lines, n)
		}
		for _, fl := range h.Fields {
			if fl.Line < 1 || fl.Line > n {
				t.Fatalf("Field %q on line %d, outside 1..%d", fl.Key, fl.Line, n)
			}
		}
		if h.Origin.Line < 0 || h.Origin.Line > n {
			t.Fatalf("Origin on line %d, outside 1..%d", h.Origin.Line, n)
		}
		for _, s := range append([]string{h.Subject, h.Origin.Commit}, h.Tests...) {
			if strings.ContainsAny(s, "\n") {
				t.Fatalf("ParseHeader() value %q holds a newline", s)
			}
		}
	})
}

// parseSeeds are the seeds of FuzzParse; TestElisionParsesAlike parses
// them too.
var parseSeeds = []string{
	"Subject: change f\nOrigin: vendor\n\n" + modify("f", "a", "A"),
	modify("f", "a", "A") + "+extra\n",
	strings.TrimSuffix(modify("f", "a", "A"), " c\n") + createG,
	deleteF + createF,
	renameF + createF,
	createG + deleteG,
	"diff --git a/f b/f\nold mode 100644\nnew mode 100755\n",
	"diff --git a/b b/b\nindex 1111111..2222222 100644\nGIT binary patch\nliteral 1\nIc${}\n\nliteral 0\nHcmV?d00001\n\n",
	"diff --git a/m b/m\n--- a/m\n+++ b/m\n@@ -1,2 +1,2 @@\n keep\n-old\n\\ No newline at end of file\n+new\n\\ No newline at end of file\n",
	"Subject: x\n\n--- f.orig\n+++ f\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n c\n",
	"Subject: x\n@@ -1 +1 @@\n" + modify("f", "a", "A"),
	"Subject: x\n---\n f | 2 +-\n\n" + modify("f", "a", "A") + "-- \n2.39.5\n\n",
	strings.ReplaceAll(modify("f", "a", "A"), "\n", "\r\n"),
	"diff --git a/f b/f\n",
}

func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkElisionAlike(t, raw)
		p, err := Parse("fuzz.diff", raw)
		if err != nil {
			if !diag.IsInput(err) {
				t.Fatalf("Parse() error = %v, want an InputError", err)
			}
			return
		}
		if p.IsReference() {
			// a reference file has no diff until the upstream fills it in
			return
		}
		if !bytes.HasSuffix(raw, p.Diff()) || len(p.Diff()) == 0 {
			t.Fatalf("Diff() = %q, want a non-empty tail of the input", p.Diff())
		}
		if id, err := PatchID(p.Diff()); id != p.PatchID || (err != nil && !errors.Is(err, ErrNoPatchID)) {
			t.Fatalf("PatchID(Diff()) = %q, %v; Parse() gave %q", id, err, p.PatchID)
		}
		checkHunkLines(t, p)
	})
}

func FuzzPatchID(f *testing.F) {
	f.Add([]byte(modify("f", "a", "A")))
	f.Add([]byte("diff --git a/g b/g\nindex 34..\nBinary files differ\n"))
	f.Add([]byte("diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,-3 +1,99999999999999999999 @@\n-a\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		id, err := PatchID(in)
		if err == nil && len(id) != 40 {
			t.Fatalf("PatchID() = %q, want 40 hex digits", id)
		}
	})
}
