package series

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
)

func TestIsFromLine(t *testing.T) {
	tests := []struct {
		name, line string
		want       bool
	}{
		{"format-patch", "From 8c5b0e1f2a3b4c5d6e7f8091a2b3c4d5e6f70819 Mon Sep 17 00:00:00 2001\n", true},
		{"mbox with a sender", "From someone@example.com Thu Jan  1 12:00:00 2015\n", true},
		{"a two-digit year at or below 90", "From x Mon Sep 17 00:00:00 89\n", false},
		{"prose", "From the upstream fix, we take two lines.\n", false},
		{"a header field", "From: A U Thor <a@example.com>\n", false},
		{"too short", "From x 0:00:00 2001\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isFromLine(tt.line); got != tt.want {
				t.Errorf("isFromLine(%q) = %v, want %v", tt.line, got, tt.want)
			}
		})
	}
}

func TestIsMail(t *testing.T) {
	tests := []struct {
		name, text string
		want       bool
	}{
		{"format-patch", "From 8c5b0e1f2a3b4c5d6e7f8091a2b3c4d5e6f70819 Mon Sep 17 00:00:00 2001\nFrom: a\n", true},
		{"DEP-3 fields", "Subject: fix\nOrigin: vendor\n\ndiff --git a/x b/x\n", true},
		{"continued field", "Subject: fix\n the rest\n\nbody\n", true},
		{"a bare diff", "diff --git a/x b/x\n--- a/x\n", false},
		{"prose first", "This fixes it.\n\ndiff --git a/x b/x\n", false},
		{"empty", "\n\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isMail([]byte(tt.text)); got != tt.want {
				t.Errorf("isMail(%q) = %v, want %v", tt.text, got, tt.want)
			}
		})
	}
}

func TestSplitMbox(t *testing.T) {
	from := "From 8c5b0e1f2a3b4c5d6e7f8091a2b3c4d5e6f70819 Mon Sep 17 00:00:00 2001\n"
	tests := []struct {
		name, text string
		parts      []string
		firsts     []int
	}{
		{"one mail", from + "Subject: a\n", []string{from + "Subject: a\n"}, []int{1}},
		{"two mails", from + "Subject: a\n\nFrom the text\n" + from + "Subject: b\n",
			[]string{from + "Subject: a\n\nFrom the text\n", from + "Subject: b\n"}, []int{1, 5}},
		{"leading blank lines", "\n" + from + "S: a\n" + from + "S: b\n", []string{from + "S: a\n", from + "S: b\n"}, []int{2, 4}},
		{"not a mailbox", "Subject: a\n" + from, []string{"Subject: a\n" + from}, []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts, firsts := splitMbox([]byte(tt.text))
			var got []string
			for _, p := range parts {
				got = append(got, string(p))
			}
			if strings.Join(got, "|") != strings.Join(tt.parts, "|") || len(firsts) != len(tt.firsts) {
				t.Fatalf("splitMbox() = %q %v, want %q %v", got, firsts, tt.parts, tt.firsts)
			}
			for i := range firsts {
				if firsts[i] != tt.firsts[i] {
					t.Errorf("splitMbox() first lines = %v, want %v", firsts, tt.firsts)
				}
			}
		})
	}
}

// TestLoadMail: as git am reads them, a file that is no mail is bad input,
// and a signature "--" ends the last hunk only for git am.
func TestLoadMail(t *testing.T) {
	diff := "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n"
	tests := []struct {
		name, text string
		opts       []Option
		line       int
		msg        string // "" when it loads
	}{
		{"stripped signature, git am", "Subject: x\n\n" + diff + "--\n2.47.3\n\n", []Option{WithMail(false)}, 0, ""},
		{"stripped signature, git apply", "Subject: x\n\n" + diff + "--\n2.47.3\n\n", nil, 9, "goes on past"},
		{"a bare diff, git am", diff, []Option{WithMail(false)}, 1, "not a mail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "0001-x.patch"), []byte(tt.text), 0o644)
			ps, err := Load(dir, "p", tt.opts...)
			if tt.msg == "" {
				if err != nil || len(ps) != 1 {
					t.Fatalf("Load() = %v, %v; want one patch", ps, err)
				}
				return
			}
			var ie *diag.InputError
			if !errors.As(err, &ie) || ie.File != "p/0001-x.patch" || ie.Line != tt.line || !strings.Contains(ie.Msg, tt.msg) {
				t.Errorf("Load() error = %v, want p/0001-x.patch:%d: ...%s", err, tt.line, tt.msg)
			}
		})
	}
}

func TestReadSeriesFile(t *testing.T) {
	tests := []struct {
		name, series string
		want         string // the names, in order, or the error
	}{
		{"order, comments, options", "# top\nb.patch -p1\n\na.patch # why\n", "b.patch a.patch"},
		{"a per-patch strip", "a.patch -p2\n", "a.patch"},
		{"missing patch", "a.patch\nc.patch\n", "s:2: c.patch: no such patch"},
		{"listed twice", "a.patch\na.patch\n", "s:2: a.patch is listed twice (first on line 1)"},
		{"reverse option", "a.patch -R\n", "s:1: a.patch: option -R is not modelled"},
		{"-p0", "a.patch -p0\n", "s:1: a.patch: -p0: want -p<n> with n 1 or more"},
		{"leaves the directory", "../a.patch\n", `s:1: "../a.patch": want a path inside the patch directory`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "a.patch"), nil, 0o644)
			os.WriteFile(filepath.Join(dir, "b.patch"), nil, 0o644)
			os.WriteFile(filepath.Join(dir, "series"), []byte(tt.series), 0o644)
			es, err := readSeriesFile(dir, Options{SeriesFile: "series", SeriesShown: "s"})
			var got []string
			for _, e := range es {
				got = append(got, e.name)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tt.want) {
					t.Errorf("readSeriesFile() error = %v, want %q", err, tt.want)
				}
				return
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("readSeriesFile() = %v, want %s", got, tt.want)
			}
		})
	}
}

// TestLoadMailbox: a mailbox of several mails gives a patch per mail, named
// FILE#N, and upgrade and refresh refuse to rewrite it (CheckRewritable).
func TestLoadMailbox(t *testing.T) {
	from := "From 8c5b0e1f2a3b4c5d6e7f8091a2b3c4d5e6f70819 Mon Sep 17 00:00:00 2001\n"
	mail := func(subject, old, new string) string {
		return from + "From: A <a@example.com>\nSubject: [PATCH] " + subject + "\n\n---\n" +
			"diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-" + old + "\n+" + new + "\n-- \n2.47.3\n\n"
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "all.patch"), []byte(mail("one", "a", "b")+mail("two", "b", "c")), 0o644)
	ps, err := Load(dir, "p", WithMail(false))
	if err != nil || len(ps) != 2 {
		t.Fatalf("Load() = %v, %v; want two patches", ps, err)
	}
	if ps[0].Path != "p/all.patch#1" || ps[1].Path != "p/all.patch#2" || ps[1].Header.Subject != "two" || ps[1].Mailbox != "p/all.patch" {
		t.Errorf("Load() = %s %s (%q, mailbox %q), want p/all.patch#1, #2", ps[0].Path, ps[1].Path, ps[1].Header.Subject, ps[1].Mailbox)
	}
	if err := CheckRewritable(ps); err == nil || !strings.Contains(err.Error(), "p/all.patch: a mailbox of several mails") {
		t.Errorf("CheckRewritable() = %v, want the mailbox refused", err)
	}
	if err := CheckRewritable([]*Patch{{Path: "p/x.patch"}}); err != nil {
		t.Errorf("CheckRewritable(one patch per file) = %v, want nil", err)
	}
}
