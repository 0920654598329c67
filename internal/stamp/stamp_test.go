package stamp

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

var value = Value{Registry: "127.0.0.1:5000/org", Repository: "greeter", Tag: "v1.0.0", Digest: digest}

// specWith loads a spec whose stamp section is stamps, under root.
func specWith(t testing.TB, root, stamps string) *spec.Spec {
	t.Helper()
	y := "upstream: {url: file:///u, ref: v1}\npatches: p\nimage: {repository: greeter, tag: v1.0.0}\nstamp:\n" + stamps
	s, err := spec.LoadReader(strings.NewReader(y), root, "greeter")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// copyCase copies testdata/<name>.yaml into a temp root as values.yaml.
func copyCase(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "values.yaml"), b, 0o640); err != nil {
		t.Fatal(err)
	}
	return root
}

// goldenCases are the stamp shapes of testdata/<name>.yaml: TestGolden
// checks patchkit's output against <name>.golden, TestGoldenIsYq checks
// that mikefarah yq writes the same bytes.
var goldenCases = []struct {
	name   string
	stamps string
}{
	{"greeter", "  - {file: values.yaml, key: .image.tag, format: tag@digest}\n"},
	{"kubeovn", "  - {file: values.yaml, key: .global.images.kubeovn.tag}\n" +
		"  - {file: values.yaml, key: .global.images.vpcNatGateway.tag, format: ref}\n" +
		"  - {file: values.yaml, key: .networking.JOIN_CIDR, format: digest}\n"},
	{"split", "  - {file: values.yaml, key: .image, format: split}\n  - {file: values.yaml, key: .sidecar.image, format: split}\n"},
	{"flow", "  - {file: values.yaml, key: .controller.image.tag}\n  - {file: values.yaml, key: .controller.image.digest, format: digest}\n" +
		"  - {file: values.yaml, key: '.controller.args[0]', format: '--image={{.Reference}}'}\n"},
	{"paths", "  - {file: values.yaml, key: .kamaji.image.repository, format: '{{.Registry}}/kamaji'}\n" +
		"  - {file: values.yaml, key: .kamaji.image.tag, format: '{{.Tag}}'}\n" +
		"  - {file: values.yaml, key: '.kamaji.extraArgs[0]', format: '--migrate-image={{.Reference}}'}\n" +
		"  - {file: values.yaml, key: '.kamaji.\"x-y\"', format: digest}\n" +
		"  - {file: values.yaml, key: '.a[\"b.c\"]'}\n" +
		"  - {file: values.yaml, key: .a.number, format: '2'}\n" +
		"  - {file: values.yaml, key: .a.colon, format: 'tag: {{.Tag}}'}\n" +
		"  - {file: values.yaml, key: '.a.list[0].image', format: ref}\n" +
		"  - {file: values.yaml, key: '.a.list.[1].image', format: '{{.Repository}}'}\n" +
		"  - {file: values.yaml, key: '.a.list[2][1]', format: '{{.Digest}}'}\n"},
	{"crlf", "  - {file: values.yaml, key: .image.tag}\n  - {file: values.yaml, key: .image.empty, format: digest}\n"},
	{"empty", "  - {file: values.yaml, key: .image.tag}\n  - {file: values.yaml, key: .image.digest, format: digest}\n"},
	// cozystack's kubeovn Makefile: the registry address beside the
	// tag, a constant repository, several keys of one file.
	{"registry", "  - {file: values.yaml, key: .global.registry.address, format: '{{.Registry}}'}\n" +
		"  - {file: values.yaml, key: .global.images.kubeovn.repository, format: 'kubeovn'}\n" +
		"  - {file: values.yaml, key: .global.images.kubeovn.tag, format: '{{.Tag}}@{{.Digest}}'}\n" +
		"  - {file: values.yaml, key: .linstor.image.repository, format: '{{.Registry}}/piraeus-server'}\n" +
		"  - {file: values.yaml, key: '.\"kube-ovn\".image', format: '{{.Reference}}'}\n"},
}

func TestGolden(t *testing.T) {
	for _, tt := range goldenCases {
		t.Run(tt.name, func(t *testing.T) {
			root := copyCase(t, tt.name)
			p, err := Prepare(root, specWith(t, root, tt.stamps), value)
			if err != nil {
				t.Fatalf("Prepare() error = %v", err)
			}
			if err := p.Write(); err != nil {
				t.Fatalf("Write() error = %v", err)
			}
			got, _ := os.ReadFile(filepath.Join(root, "values.yaml"))
			golden := filepath.Join("testdata", tt.name+".golden")
			if *update {
				os.WriteFile(golden, got, 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("reading %s (run with -update): %v", golden, err)
			}
			if string(got) != string(want) {
				t.Errorf("stamped %s.yaml =\n%s\nwant (%s)\n%s", tt.name, got, golden, want)
			}
			if st, _ := os.Stat(filepath.Join(root, "values.yaml")); st.Mode().Perm() != 0o640 {
				t.Errorf("mode = %v, want 0640 kept", st.Mode().Perm())
			}
			if left, _ := filepath.Glob(filepath.Join(root, ".values.yaml.patchkit-*")); len(left) != 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

// TestGoldenKeepsTheRest: apart from the stamped lines, the files are byte
// for byte what they were.
func TestGoldenKeepsTheRest(t *testing.T) {
	for _, name := range []string{"greeter", "kubeovn", "split", "crlf", "empty", "flow", "paths"} {
		in, _ := os.ReadFile(filepath.Join("testdata", name+".yaml"))
		out, _ := os.ReadFile(filepath.Join("testdata", name+".golden"))
		kept := 0
		outLines := strings.Split(string(out), "\n")
		for _, l := range strings.Split(string(in), "\n") {
			for _, o := range outLines {
				if o == l {
					kept++
					break
				}
			}
		}
		changed := 0
		for _, o := range outLines {
			if strings.Contains(o, "sha256:") || strings.Contains(o, "v1.0.0") || strings.Contains(o, "127.0.0.1") || o == "  number: \"2\"" || o == "    image: greeter" {
				changed++
			}
		}
		if inLines := len(strings.Split(string(in), "\n")); kept < inLines-changed {
			t.Errorf("%s: %d of %d lines kept, want all but the %d stamped", name, kept, inLines, changed)
		}
	}
}

func TestValueFormats(t *testing.T) {
	tests := []struct {
		format, want string
		v            Value
	}{
		{FormatTagDigest, "v1.0.0@" + digest, value},
		{FormatDigest, digest, value},
		{FormatRef, "127.0.0.1:5000/org/greeter:v1.0.0@" + digest, value},
		{FormatRef, "greeter:v1.0.0@" + digest, Value{Repository: "greeter", Tag: "v1.0.0", Digest: digest}},
	}
	for _, tt := range tests {
		if got := tt.v.Scalar(tt.format); got != tt.want {
			t.Errorf("Scalar(%s) = %q, want %q", tt.format, got, tt.want)
		}
	}
}

func TestCheckDigest(t *testing.T) {
	for _, d := range []string{"", "sha256:abc", "sha512:" + strings.Repeat("a", 128), "SHA256:" + strings.Repeat("a", 64),
		"sha256:" + strings.Repeat("A", 64), "sha256:" + strings.Repeat("a", 64) + "\n", strings.Repeat("a", 64)} {
		if err := CheckDigest(d); !errors.Is(err, ErrBadDigest) {
			t.Errorf("CheckDigest(%q) = %v, want ErrBadDigest", d, err)
		}
	}
	if err := CheckDigest(digest); err != nil {
		t.Errorf("CheckDigest(%q) = %v", digest, err)
	}
}

func TestPrepareErrors(t *testing.T) {
	tests := []struct {
		name     string
		stamps   string
		v        Value
		wantFile string
		want     string
	}{
		{"bad digest", "  - {file: values.yaml, key: .image.tag}\n", Value{Tag: "v1", Digest: "sha256:nope"}, "--digest", "not a sha256 digest"},
		{"missing key", "  - {file: values.yaml, key: .image.tga}\n", value, "values.yaml", "key .image.tga not found"},
		{"missing parent", "  - {file: values.yaml, key: .images.greeter.tag}\n", value, "values.yaml", "key .images not found"},
		{"mapping for tag@digest", "  - {file: values.yaml, key: .image}\n", value, "values.yaml", "must be a scalar"},
		{"split on a scalar", "  - {file: values.yaml, key: .image.tag, format: split}\n", value, "values.yaml", "must be a mapping"},
		{"through a scalar", "  - {file: values.yaml, key: .image.tag.x}\n", value, "values.yaml", ".image.tag is not a mapping"},
		{"missing file", "  - {file: nope.yaml, key: .image.tag}\n", value, "images/greeter/patchkit.yaml", "stamp[0].file"},
		{"no tag", "  - {file: values.yaml, key: .image.tag}\n", Value{Digest: digest}, "images/greeter/patchkit.yaml", "image.tag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := copyCase(t, "greeter")
			_, err := Prepare(root, specWith(t, root, tt.stamps), tt.v)
			var ie *diag.InputError
			if !errors.As(err, &ie) || ie.File != tt.wantFile || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Prepare() error = %v, want an input error in %s containing %q", err, tt.wantFile, tt.want)
			}
		})
	}
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "values.yaml"), []byte("image: [\n"), 0o644)
	if _, err := Prepare(root, specWith(t, root, "  - {file: values.yaml, key: .image.tag}\n"), value); !diag.IsInput(err) {
		t.Errorf("Prepare(bad YAML) error = %v, want an input error", err)
	}
}

// TestAllOrNothing: when one target fails, no file is written.
func TestAllOrNothing(t *testing.T) {
	root := copyCase(t, "greeter")
	os.WriteFile(filepath.Join(root, "other.yaml"), []byte("chart:\n  image: x\n"), 0o644)
	before, _ := os.ReadFile(filepath.Join(root, "values.yaml"))
	s := specWith(t, root, "  - {file: values.yaml, key: .image.tag}\n  - {file: other.yaml, key: .chart.tag}\n")
	if _, err := Prepare(root, s, value); err == nil {
		t.Fatal("Prepare() error = nil, want .chart.tag not found")
	}
	after, _ := os.ReadFile(filepath.Join(root, "values.yaml"))
	if string(before) != string(after) {
		t.Errorf("values.yaml changed although a later target failed")
	}
}

func TestChanges(t *testing.T) {
	root := copyCase(t, "split")
	p, err := Prepare(root, specWith(t, root, "  - {file: values.yaml, key: .image, format: split}\n"), value)
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		{File: "values.yaml", Key: ".image.repository", Format: "split", Old: "ghcr.io/old/greeter", New: "127.0.0.1:5000/org/greeter"},
		{File: "values.yaml", Key: ".image.tag", Format: "split", Old: "v0.9.0", New: "v1.0.0"},
		{File: "values.yaml", Key: ".image.digest", Format: "split", Old: "", New: digest},
	}
	if len(p.Changes) != 3 {
		t.Fatalf("Changes = %+v", p.Changes)
	}
	for i := range want {
		if p.Changes[i] != want[i] {
			t.Errorf("Changes[%d] = %+v, want %+v", i, p.Changes[i], want[i])
		}
	}
}
