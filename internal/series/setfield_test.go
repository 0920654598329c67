package series

import (
	"strings"
	"testing"
)

func TestSetField(t *testing.T) {
	const diff = "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n"
	const url = "https://github.com/o/r/pull/7"
	tests := []struct {
		name, in, want string
		changed        bool
	}{
		{"replace", "Subject: s\nForwarded: no\nBug: x\n\n" + diff, "Subject: s\nForwarded: " + url + "\nBug: x\n\n" + diff, true},
		{"replace continued", "Subject: s\nforwarded: no\n but later\nBug: x\n\n" + diff, "Subject: s\nforwarded: " + url + "\nBug: x\n\n" + diff, true},
		{"add after the last field", "Subject: s\nOrigin: vendor\n\nfree text\n\n" + diff, "Subject: s\nOrigin: vendor\nForwarded: " + url + "\n\nfree text\n\n" + diff, true},
		{"crlf", "Subject: s\r\nForwarded: no\r\n\r\n" + diff, "Subject: s\r\nForwarded: " + url + "\r\n\r\n" + diff, true},
		{"no header", diff, "Forwarded: " + url + "\n" + diff, true},
		{"no header, crlf", strings.ReplaceAll(diff, "\n", "\r\n"), "Forwarded: " + url + "\r\n" + strings.ReplaceAll(diff, "\n", "\r\n"), true},
		{"same", "Subject: s\nForwarded: " + url + "\n\n" + diff, "Subject: s\nForwarded: " + url + "\n\n" + diff, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse("p.diff", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			out, changed, err := SetField(p, "Forwarded", url)
			if err != nil {
				t.Fatalf("SetField() error %v", err)
			}
			if string(out) != tt.want || changed != tt.changed {
				t.Errorf("SetField() = %q, %v, want %q, %v", out, changed, tt.want, tt.changed)
			}
			np, err := Parse("p.diff", out)
			if err != nil || np.Header.Forwarded != url {
				t.Errorf("reparsed Forwarded = %q (%v), want %q", np.Header.Forwarded, err, url)
			}
		})
	}
	p, _ := Parse("p.diff", []byte(diff))
	for _, bad := range []string{"", "a\nb"} {
		if _, _, err := SetField(p, "Forwarded", bad); err == nil || !strings.Contains(err.Error(), "p.diff") {
			t.Errorf("SetField(%q) error = %v, want one naming the file", bad, err)
		}
	}
}
