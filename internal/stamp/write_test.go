package stamp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/diag"
)

const greeterStamp = "  - {file: values.yaml, key: .image.tag}\n"

func stampOnce(t *testing.T, root, stamps string) error {
	t.Helper()
	p, err := Prepare(root, specWith(t, root, stamps), value)
	if err != nil {
		return err
	}
	return p.Write()
}

// TestRefusals: a target stamp cannot edit byte for byte is refused with
// its reason and line, as bad input, and the file is left as it was.
func TestRefusals(t *testing.T) {
	tests := []struct {
		name, yaml, key, want string
		line                  int
	}{
		{"block scalar", "image:\n  tag: |\n    v1\n", ".image.tag", "is a block scalar", 2},
		{"folded scalar", "image:\n  tag: >-\n    v1\n", ".image.tag", "is a block scalar", 2},
		{"anchor", "image:\n  tag: &t v1\nother: *t\n", ".image.tag", "has an anchor (&t)", 2},
		{"tag", "image:\n  tag: !!str v1\n", ".image.tag", "has a tag (!!str)", 2},
		{"custom tag", "image:\n  tag: !ref v1\n", ".image.tag", "has a tag (!ref)", 2},
		{"alias", "base: &b v1\nimage:\n  tag: *b\n", ".image.tag", "an alias (*b)", 3},
		{"through an alias", "base: &b {tag: v1}\nimage: *b\n", ".image.tag", "an alias (*b)", 2},
		{"multi-line plain", "image:\n  tag: v1\n    continued\n", ".image.tag", "spans several lines", 2},
		{"multi-line quoted", "image:\n  tag: \"v1\n    continued\"\n", ".image.tag", "spans several lines", 2},
		{"merge key", "base: &b {tag: v1}\nimage:\n  <<: *b\n", ".image.tag", "merge key", 3},
		{"second document", "image:\n  tag: v1\n---\nimage:\n  tag: v2\n", ".image.tag", "a second YAML document", 3},
		{"duplicate key", "image:\n  tag: v1\n  tag: v2\n", ".image.tag", "appears twice", 3},
		{"tab indentation", "image:\n\ttag: v1\n", ".image.tag", "a tab in the indentation", 2},
		{"mapping for a scalar format", "image:\n  tag: v1\n", ".image", "must be a scalar", 2},
		{"index out of range", "args:\n  - a\n", ".args[3]", "out of range: .args has 1 items", 1},
		{"index into a mapping", "args:\n  a: b\n", ".args[0]", ".args is not a block sequence", 1},
		{"key into a sequence", "args:\n  - a\n", ".args.a", ".args is a sequence", 2},
		{"not found", "image:\n  tag: v1\n", ".image.tga", "key .image.tga not found", 1},
		{"bad YAML in the entry", "image:\n  tag: [v1\n", ".image.tag", "does not end", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, "values.yaml")
			os.WriteFile(path, []byte(tt.yaml), 0o644)
			err := stampOnce(t, root, "  - {file: values.yaml, key: '"+tt.key+"'}\n")
			var ie *diag.InputError
			if !diag.IsInput(err) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("stamp %s = %v, want an input error containing %q", tt.key, err, tt.want)
			}
			if errorsAs(err, &ie); ie.File != "values.yaml" || ie.Line != tt.line {
				t.Errorf("error at %s:%d, want values.yaml:%d (%v)", ie.File, ie.Line, tt.line, err)
			}
			if got, _ := os.ReadFile(path); string(got) != tt.yaml {
				t.Errorf("values.yaml changed to\n%s", got)
			}
		})
	}
}

func TestSplitIntoFlowMappingRefused(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "values.yaml"), []byte("c:\n  image: {repository: x, tag: v1}\n"), 0o644)
	err := stampOnce(t, root, "  - {file: values.yaml, key: .c.image, format: split}\n")
	if !diag.IsInput(err) || !strings.Contains(err.Error(), "values.yaml:2: .c.image is a flow mapping ({...}) without digest") {
		t.Errorf("split into a flow mapping = %v", err)
	}
}

func TestTextTarget(t *testing.T) {
	tests := []struct{ name, in, stamps, want string }{
		{"tag@digest", "v0.9.0\n", "  - {file: TAG}\n", "v1.0.0@" + digest + "\n"},
		{"crlf kept", "v0.9.0\r\n", "  - {file: TAG, format: digest}\n", digest + "\r\n"},
		{"no newline kept", "v0.9.0", "  - {file: TAG, format: '{{.Tag}}'}\n", "v1.0.0"},
		{"empty", "", "  - {file: TAG, format: ref}\n", value.Scalar(FormatRef) + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			os.WriteFile(filepath.Join(root, "TAG"), []byte(tt.in), 0o644)
			if err := stampOnce(t, root, tt.stamps); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(filepath.Join(root, "TAG")); string(got) != tt.want {
				t.Errorf("TAG = %q, want %q", got, tt.want)
			}
		})
	}
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "TAG"), []byte("v1\nv2\n"), 0o644)
	if err := stampOnce(t, root, "  - {file: TAG}\n"); !diag.IsInput(err) || !strings.Contains(err.Error(), "TAG:2: a text stamp target holds one line") {
		t.Errorf("two-line text target = %v", err)
	}
}

func TestRegistryRequiredByTemplate(t *testing.T) {
	root := copyCase(t, "greeter")
	s := specWith(t, root, "  - {file: values.yaml, key: .image.tag, format: '{{.Registry}}/x'}\n")
	v := value
	v.Registry = ""
	if _, err := Prepare(root, s, v); !diag.IsInput(err) || !strings.Contains(err.Error(), "stamp[0].format: uses {{.Registry}} but no registry is set") {
		t.Errorf("Prepare() = %v", err)
	}
}

// TestSymlinkInRepo: a target that is a symlink inside the repository is
// stamped through: the link stays a link, its target gets the value.
func TestSymlinkInRepo(t *testing.T) {
	root := copyCase(t, "greeter")
	os.Mkdir(filepath.Join(root, "chart"), 0o755)
	os.Rename(filepath.Join(root, "values.yaml"), filepath.Join(root, "chart", "values.yaml"))
	os.Symlink("chart/values.yaml", filepath.Join(root, "values.yaml"))
	if err := stampOnce(t, root, greeterStamp); err != nil {
		t.Fatal(err)
	}
	if l, err := os.Readlink(filepath.Join(root, "values.yaml")); err != nil || l != "chart/values.yaml" {
		t.Errorf("values.yaml is no longer the symlink: %q, %v", l, err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "chart", "values.yaml")); !strings.Contains(string(b), "tag: v1.0.0@"+digest) {
		t.Errorf("the symlink's target was not stamped:\n%s", b)
	}
}

func TestSymlinkOutsideRefused(t *testing.T) {
	root := copyCase(t, "greeter")
	s := specWith(t, root, greeterStamp)
	outside := filepath.Join(t.TempDir(), "values.yaml")
	os.Rename(filepath.Join(root, "values.yaml"), outside)
	before, _ := os.ReadFile(outside)
	os.Symlink(outside, filepath.Join(root, "values.yaml"))
	_, err := Prepare(root, s, value)
	if !diag.IsInput(err) || !strings.Contains(err.Error(), "outside the repository") {
		t.Errorf("Prepare(symlink out) = %v, want bad input", err)
	}
	if after, _ := os.ReadFile(outside); string(after) != string(before) {
		t.Error("the file outside the repository changed")
	}
}

func TestHardLinkRefused(t *testing.T) {
	root := copyCase(t, "greeter")
	os.Link(filepath.Join(root, "values.yaml"), filepath.Join(root, "copy.yaml"))
	before, _ := os.ReadFile(filepath.Join(root, "values.yaml"))
	err := stampOnce(t, root, greeterStamp)
	if !diag.IsInput(err) || !strings.Contains(err.Error(), "values.yaml: has 2 hard links") {
		t.Errorf("stamp of a hard-linked file = %v, want refused", err)
	}
	for _, n := range []string{"values.yaml", "copy.yaml"} {
		if after, _ := os.ReadFile(filepath.Join(root, n)); string(after) != string(before) {
			t.Errorf("%s changed", n)
		}
	}
}

// TestOwnerAndModeKept runs as root (the CI and this machine do) and
// stamps a file owned by another user with unusual mode bits.
func TestOwnerAndModeKept(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root to give the file to another user")
	}
	root := copyCase(t, "greeter")
	path := filepath.Join(root, "values.yaml")
	if err := os.Chown(path, 1234, 4321); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o604|os.ModeSetgid)
	if err := stampOnce(t, root, greeterStamp); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	sys := st.Sys().(*syscall.Stat_t)
	if sys.Uid != 1234 || sys.Gid != 4321 || st.Mode()&(os.ModePerm|os.ModeSetgid) != 0o604|os.ModeSetgid {
		t.Errorf("after stamp: owner %d:%d mode %v, want 1234:4321 %v", sys.Uid, sys.Gid, st.Mode(), 0o604|os.ModeSetgid)
	}
}

// TestStaleTempRemoved: a temporary file a killed run left beside the
// target is removed by the next run; the target is stamped.
func TestStaleTempRemoved(t *testing.T) {
	root := copyCase(t, "greeter")
	stale := filepath.Join(root, ".values.yaml.patchkit-12345")
	os.WriteFile(stale, []byte("image:\n  tag: half"), 0o600)
	old := time.Now().Add(-time.Minute)
	os.Chtimes(stale, old, old)
	other := filepath.Join(root, ".other.yaml.patchkit-1")
	os.WriteFile(other, nil, 0o600)
	if err := stampOnce(t, root, greeterStamp); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary file still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another file's temporary file was removed: %v", err)
	}
}

// TestWriteRedoesTheEdit: a change made to the file between Prepare and
// Write (another stamp of another key) is kept: Write re-reads under the lock.
func TestWriteRedoesTheEdit(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "values.yaml")
	os.WriteFile(path, []byte("a:\n  tag: old\nb:\n  tag: old\n"), 0o644)
	pa, err := Prepare(root, specWith(t, root, "  - {file: values.yaml, key: .a.tag}\n"), value)
	if err != nil {
		t.Fatal(err)
	}
	if err := stampOnce(t, root, "  - {file: values.yaml, key: .b.tag, format: digest}\n"); err != nil {
		t.Fatal(err)
	}
	if err := pa.Write(); err != nil {
		t.Fatal(err)
	}
	want := "a:\n  tag: v1.0.0@" + digest + "\nb:\n  tag: " + digest + "\n"
	if got, _ := os.ReadFile(path); string(got) != want {
		t.Errorf("values.yaml =\n%s\nwant\n%s", got, want)
	}
}

func errorsAs(err error, target **diag.InputError) bool { return errors.As(err, target) }
