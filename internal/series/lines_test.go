package series

import (
	"strings"
	"testing"
)

func TestCountHunkLine(t *testing.T) {
	tests := []struct {
		line     string
		old, new int
		ok       bool
	}{
		{" context\n", 1, 1, true},
		{"\n", 1, 1, true}, // a blank context line whose space was eaten
		{"-removed\n", 1, 0, true},
		{"+added\n", 0, 1, true},
		{"\\ No newline at end of file\n", 0, 0, false},
		{"\r\n", 0, 0, false}, // git takes no "\r" line for context
		{"\tcode\n", 0, 0, false},
		{"@@ -1 +1 @@\n", 0, 0, false},
		{"diff --git a/x b/x\n", 0, 0, false},
	}
	for _, tt := range tests {
		var old, new int
		ok := CountHunkLine(tt.line[0], &old, &new)
		if old != tt.old || new != tt.new || ok != tt.ok {
			t.Errorf("CountHunkLine(%q) = old %d, new %d, %v; want %d, %d, %v", tt.line, old, new, ok, tt.old, tt.new, tt.ok)
		}
	}
}

// TestHunkEnd checks HunkEnd against go-gitdiff's reading of each hunk (the
// parse Parse makes): a hunk ends after the lines its fragment holds, its
// "\ No newline" marker included, whatever the next line reads like.
func TestHunkEnd(t *testing.T) {
	raw := "Subject: x\n\n" +
		"diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n" +
		"@@ -1,4 +1,4 @@\n one\n\n--- two\n+-- two\n four\n" +
		"@@ -10,2 +10,2 @@\n ten\n-eleven\n\\ No newline at end of file\n+eleven\n\\ No newline at end of file\n" +
		"diff --git a/b.txt b/b.txt\n--- a/b.txt\n+++ b/b.txt\n" +
		"@@ -1 +1,2 @@\n b\n+c\n"
	p, err := Parse("x.patch", []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	lines := SplitKeep(raw)
	var ends []int
	for _, f := range p.Files {
		for _, tf := range f.TextFragments {
			h := p.HunkLine[tf]
			end := HunkEnd(lines, h, tf)
			markers := strings.Count(strings.Join(lines[h:end], ""), "\\ No newline")
			if got := end - h - markers; got != len(tf.Lines) {
				t.Errorf("hunk at line %d: HunkEnd takes %d lines and %d markers, go-gitdiff read %d lines", h, end-h-markers, markers, len(tf.Lines))
			}
			ends = append(ends, end)
		}
	}
	// The lines after each hunk: the next "@@" line, the next file's header, the end.
	if len(ends) != 3 || !strings.HasPrefix(lines[ends[0]], "@@ -10,2") || !strings.HasPrefix(lines[ends[1]], "diff --git a/b.txt") || ends[2] != len(lines) {
		t.Errorf("HunkEnd = %v: want the second hunk's \"@@\" line, the next file's header and the end (%d)", ends, len(lines))
	}
}
