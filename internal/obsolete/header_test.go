package obsolete

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/series"
)

const headerDiff = `diff --git a/x.txt b/x.txt
--- a/x.txt
+++ b/x.txt
@@ -1 +1 @@
-a
+b
`

func TestSetAppliedUpstream(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		changed bool
	}{
		{
			name: "after the last field",
			in:   "Subject: fix\nOrigin: vendor\nForwarded: no\n\n" + headerDiff,
			want: "Subject: fix\nOrigin: vendor\nForwarded: no\nApplied-Upstream: v1.2.0\n\n" + headerDiff, changed: true,
		},
		{
			name: "after a field's continuation lines",
			in:   "Subject: fix\nDescription: one\n two\n\nfree text\n" + headerDiff,
			want: "Subject: fix\nDescription: one\n two\nApplied-Upstream: v1.2.0\n\nfree text\n" + headerDiff, changed: true,
		},
		{
			name: "replaces a field, keeping its key",
			in:   "Subject: fix\napplied-upstream: v1.1.0\nTest: TestX\n\n" + headerDiff,
			want: "Subject: fix\napplied-upstream: v1.2.0\nTest: TestX\n\n" + headerDiff, changed: true,
		},
		{
			name: "already set",
			in:   "Subject: fix\nApplied-Upstream: v1.2.0\n\n" + headerDiff,
			want: "Subject: fix\nApplied-Upstream: v1.2.0\n\n" + headerDiff,
		},
		{
			name: "no fields: before the first diff line",
			in:   "Fix the thing.\n\n" + headerDiff,
			want: "Fix the thing.\n\nApplied-Upstream: v1.2.0\n" + headerDiff, changed: true,
		},
		{
			name: "no header",
			in:   headerDiff,
			want: "Applied-Upstream: v1.2.0\n" + headerDiff, changed: true,
		},
		{
			name: "CRLF header",
			in:   "Subject: fix\r\nOrigin: vendor\r\n\r\n" + headerDiff,
			want: "Subject: fix\r\nOrigin: vendor\r\nApplied-Upstream: v1.2.0\r\n\r\n" + headerDiff, changed: true,
		},
		{
			name: "mail: before the --- line",
			in:   "From 1234567890123456789012345678901234567890 Mon Sep 17 00:00:00 2001\nFrom: A <a@example.com>\nSubject: [PATCH] fix\n\nBody.\n\nSigned-off-by: A <a@example.com>\n---\n x.txt | 2 +-\n\n" + headerDiff,
			want: "From 1234567890123456789012345678901234567890 Mon Sep 17 00:00:00 2001\nFrom: A <a@example.com>\nSubject: [PATCH] fix\n\nBody.\n\nSigned-off-by: A <a@example.com>\nApplied-Upstream: v1.2.0\n---\n x.txt | 2 +-\n\n" + headerDiff, changed: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := series.Parse("patches/x/0001.diff", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			got, changed, err := SetAppliedUpstream(p, "v1.2.0")
			if err != nil {
				t.Fatalf("SetAppliedUpstream() = %v", err)
			}
			if string(got) != tt.want || changed != tt.changed {
				t.Errorf("SetAppliedUpstream() = %q, %v; want %q, %v", got, changed, tt.want, tt.changed)
			}
		})
	}
}

func TestWriteAppliedUpstream(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "0001.diff")
	in := "Subject: fix\n\n" + headerDiff
	if err := os.WriteFile(file, []byte(in), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "0002.diff")
	if err := os.Symlink("0001.diff", link); err != nil {
		t.Fatal(err)
	}
	load := func() *series.Patch {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		p, err := series.Parse("patches/x/0001.diff", raw)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	changed, err := WriteAppliedUpstream(link, load(), "v2.0.0")
	if err != nil || !changed {
		t.Fatalf("WriteAppliedUpstream() = %v, %v; want true, nil", changed, err)
	}
	got, _ := os.ReadFile(file)
	if want := "Subject: fix\nApplied-Upstream: v2.0.0\n\n" + headerDiff; string(got) != want {
		t.Errorf("file = %q, want %q", got, want)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symbolic link was replaced by a file")
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o640 {
		t.Errorf("mode = %o, want 640", st.Mode().Perm())
	}
	if changed, err := WriteAppliedUpstream(file, load(), "v2.0.0"); err != nil || changed {
		t.Errorf("second WriteAppliedUpstream() = %v, %v; want false, nil", changed, err)
	}
	stale := load()
	os.WriteFile(file, []byte(in), 0o640)
	if _, err := WriteAppliedUpstream(file, stale, "v3.0.0"); err == nil || !strings.Contains(err.Error(), "changed since it was read") {
		t.Errorf("WriteAppliedUpstream() of a changed file = %v, want a refusal", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("dir holds %d entries, want 2 (no temporary files left)", len(entries))
	}
}
