package upgrade

import (
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/tree"
)

// TestMoveGoVersion: a go place (a whole GOLANG_VERSION) is raised to the
// go directive of the new ref's go.mod when it is below it, in its own
// precision, and left as it is when it builds it or there is no go.mod; a
// whole file that spells the pin moves with the pin.
func TestMoveGoVersion(t *testing.T) {
	const unit = "projects/o/r/1-30"
	tests := []struct {
		name, golang, gomod, want string
	}{
		{"below: raised to the release line", "1.23\n", "module x\n\ngo 1.24.0\n", "1.24\n"},
		{"below, a release: raised to it", "1.24.1", "module x\n\ngo 1.24.4\n", "1.24.4"},
		{"the same line", "1.24\n", "module x\n\ngo 1.24.6\n", "1.24\n"},
		{"above", "1.25\n", "module x\n\ngo 1.24.0\n", "1.25\n"},
		{"no go directive", "1.23\n", "module x\n", "1.23\n"},
		{"no go.mod", "1.23\n", "", "1.23\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			gittest.WriteFiles(t, root, map[string]string{
				unit + "/patchkit.yaml": "upstream:\n  url: https://example.com/r\n  ref: {file: ./GIT_TAG}\n  versions:\n" +
					"    - {file: ./GOLANG_VERSION, whole-file: true}\n    - {file: ./VERSION, whole-file: true, spelling: bare}\npatches: ./patches\n",
				unit + "/GIT_TAG":              "v1.2.3\n",
				unit + "/GOLANG_VERSION":       tt.golang,
				unit + "/VERSION":              "1.2.3\n",
				unit + "/patches/0001-x.patch": "",
			})
			s, err := spec.Load(root, unit)
			if err != nil {
				t.Fatal(err)
			}
			file, data, err := PinFor(root, s).Move("v1.3.0")
			if err != nil || file != unit+"/GIT_TAG" || string(data) != "v1.3.0\n" {
				t.Fatalf("Move() = %s %q, %v; want %s/GIT_TAG \"v1.3.0\\n\"", file, data, err, unit)
			}
			newTree := tree.Map{}
			if tt.gomod != "" {
				newTree["go.mod"] = &tree.File{Mode: 0o100644, Data: []byte(tt.gomod)}
			}
			writes, err := moveVersions(root, s, "v1.3.0", newTree, []Write{{Path: file, Data: data}})
			if err != nil {
				t.Fatalf("moveVersions() error = %v", err)
			}
			got := map[string]string{}
			for _, w := range writes {
				got[w.Path] = string(w.Data)
			}
			if got[unit+"/VERSION"] != "1.3.0\n" {
				t.Errorf("VERSION = %q, want \"1.3.0\\n\"", got[unit+"/VERSION"])
			}
			g, written := got[unit+"/GOLANG_VERSION"]
			if tt.want == tt.golang && written {
				t.Errorf("GOLANG_VERSION written (%q), want it left as it is", g)
			}
			if tt.want != tt.golang && g != tt.want {
				t.Errorf("GOLANG_VERSION = %q, want %q", g, tt.want)
			}
		})
	}
}
