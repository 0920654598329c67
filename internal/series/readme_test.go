package series

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReadme(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "p")
	os.MkdirAll(dir, 0o755)
	text := "# patches\n\n- `0001-a.diff`: fix a; backport of\n  https://example.com/o/r/commit/0123456789abcdef0123456789abcdef01234567\n- `0002-b.diff`: ours.\n\nSee also 0003-c.diff,\nwhich is local.\n"
	os.WriteFile(filepath.Join(dir, "README.md"), []byte(text), 0o644)
	got := Readme(root, "p", []string{"0001-a.diff", "0002-b.diff", "0003-c.diff", "0004-d.diff"})
	want := map[string][3]int{"0001-a.diff": {3, 4, 2}, "0002-b.diff": {5, 5, 1}, "0003-c.diff": {7, 8, 2}}
	if len(got) != len(want) {
		t.Fatalf("Readme() = %+v", got)
	}
	for name, w := range want {
		p := got[name]
		if p.File != "p/README.md" || p.First != w[0] || p.Last != w[1] || len(p.Lines) != w[2] {
			t.Errorf("Readme()[%s] = %+v, want lines %d-%d", name, p, w[0], w[1])
		}
	}
	if got["0001-a.diff"].Where != "p/README.md:3" {
		t.Errorf("Where = %q", got["0001-a.diff"].Where)
	}
	out := DropFromReadme([]byte(text), []Provenance{got["0001-a.diff"]})
	if want := "# patches\n\n- `0002-b.diff`: ours.\n\nSee also 0003-c.diff,\nwhich is local.\n"; string(out) != want {
		t.Errorf("DropFromReadme() = %q, want %q", out, want)
	}
	out = DropFromReadme([]byte(text), []Provenance{got["0001-a.diff"], got["0002-b.diff"]})
	if want := "# patches\n\nSee also 0003-c.diff,\nwhich is local.\n"; string(out) != want {
		t.Errorf("DropFromReadme(both) = %q, want %q", out, want)
	}
}
