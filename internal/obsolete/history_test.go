package obsolete

import (
	"sort"
	"strings"
	"testing"
)

func TestNotePaths(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{name: "plain", lines: []string{"diff --git a/x/y.go b/x/y.go", "--- a/x/y.go", "+++ b/x/y.go"}, want: "x/y.go"},
		{name: "space", lines: []string{"diff --git a/a b.txt b/a b.txt", "--- a/a b.txt\t", "+++ b/a b.txt\t"}, want: "a b.txt"},
		{name: "quoted", lines: []string{`diff --git "a/tab\t\303\251.txt" "b/tab\t\303\251.txt"`, `--- "a/tab\t\303\251.txt"`}, want: "tab\té.txt"},
		{name: "rename", lines: []string{"diff --git a/old.go b/new.go", "rename from old.go", "rename to new.go"}, want: "new.go old.go"},
		{name: "new file", lines: []string{"diff --git a/n.go b/n.go", "--- /dev/null", "+++ b/n.go"}, want: "n.go"},
		{name: "binary", lines: []string{"diff --git a/img.png b/img.png", "GIT binary patch"}, want: "img.png"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			paths := map[string]bool{}
			for _, l := range tt.lines {
				notePaths(paths, []byte(l+"\n"))
			}
			var got []string
			for p := range paths {
				got = append(got, p)
			}
			sort.Strings(got)
			if strings.Join(got, " ") != tt.want {
				t.Errorf("notePaths() = %q, want %q", got, tt.want)
			}
		})
	}
}
