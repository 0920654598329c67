package stamp

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// yq returns mikefarah yq v4, the oracle of the stamp bytes: $PATCHKIT_YQ,
// else bin/tools/yq of the repository, which hack/install-deps.sh
// installs. A missing or wrong yq fails the test: it does not skip.
func yq(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("PATCHKIT_YQ")
	if bin == "" {
		dir, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				break
			}
			if filepath.Dir(dir) == dir {
				t.Fatal("no go.mod above the test's directory: cannot find bin/tools/yq")
			}
			dir = filepath.Dir(dir)
		}
		bin = filepath.Join(dir, "bin", "tools", "yq")
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "mikefarah") || !strings.Contains(string(out), "version v4.") {
		t.Fatalf("the stamp tests compare with mikefarah yq v4 at %s (%v: %s): run hack/install-deps.sh, or set PATCHKIT_YQ", bin, err, out)
	}
	return bin
}

// yqStamp runs `V=<new> yq -i '<key> = strenv(V)' file` for each change, in order.
func yqStamp(t *testing.T, bin, file string, changes []Change) {
	t.Helper()
	for _, c := range changes {
		cmd := exec.Command(bin, "-i", c.Key+" = strenv(V)", file)
		cmd.Env = append(os.Environ(), "V="+c.New)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("yq -i '%s = strenv(V)': %v\n%s", c.Key, err, out)
		}
	}
}

// yqLayout runs yq's own layout over file (`yq -i expr`): one space before
// a comment, blank lines dropped, sequences indented, LF line endings.
// Scalars keep their style, so two files that differ only in layout read
// the same after it.
func yqLayout(t *testing.T, bin, file, expr string) []byte {
	t.Helper()
	if out, err := exec.Command(bin, "-i", expr, file).CombinedOutput(); err != nil {
		t.Fatalf("yq -i %s: %v\n%s", expr, err, out)
	}
	b, _ := os.ReadFile(file)
	return bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
}

// TestGoldenIsYq: for every golden case, the real yq, given the same
// input and the values patchkit stamps (`yq -i '.key = strenv(V)'`, one
// per value, in order), writes what patchkit wrote: the same values with
// the same quoting and comments. yq also re-flows the layout of the whole
// file, which patchkit keeps byte for byte (its point: a one-line diff), so
// both are compared after yq's layout. A split target's added key goes
// beside the mapping's repository and tag, where yq appends it at the
// mapping's end: compared with sorted keys.
func TestGoldenIsYq(t *testing.T) {
	bin := yq(t)
	for _, tt := range goldenCases {
		t.Run(tt.name, func(t *testing.T) {
			root := copyCase(t, tt.name)
			p, err := Prepare(root, specWith(t, root, tt.stamps), value)
			if err != nil {
				t.Fatalf("Prepare() error = %v", err)
			}
			file := filepath.Join(root, "values.yaml")
			yqStamp(t, bin, file, p.Changes)
			golden := filepath.Join(root, "golden.yaml")
			want, err := os.ReadFile(filepath.Join("testdata", tt.name+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(golden, want, 0o644)
			layout := "."
			if strings.Contains(tt.stamps, "split") {
				layout = "sort_keys(..)"
			}
			byYq, byPatchkit := yqLayout(t, bin, file, layout), yqLayout(t, bin, golden, layout)
			if !bytes.Equal(byYq, byPatchkit) {
				t.Errorf("after yq's layout, yq's stamp of %s.yaml is\n%s\nand patchkit's golden\n%s", tt.name, byYq, byPatchkit)
			}
		})
	}
}

// TestTextTargetIsEcho: a text target is written as a Makefile's
// `echo "$TAG" > TAG` writes it.
func TestTextTargetIsEcho(t *testing.T) {
	root := t.TempDir()
	tag := filepath.Join(root, "TAG")
	os.WriteFile(tag, []byte("v0.9.0\n"), 0o644)
	if err := stampOnce(t, root, "  - {file: TAG, format: '{{.Tag}}@{{.Digest}}'}\n"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(tag)
	cmd := exec.Command("sh", "-c", `echo "$V" > "$F"`)
	want := filepath.Join(root, "TAG.echo")
	cmd.Env = append(os.Environ(), "V="+value.Tag+"@"+value.Digest, "F="+want)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("echo: %v\n%s", err, out)
	}
	if w, _ := os.ReadFile(want); !bytes.Equal(got, w) {
		t.Errorf("TAG = %q, echo writes %q", got, w)
	}
}
