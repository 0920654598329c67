package caps

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		want    int
		wantErr bool
	}{
		{"cap_net_bind_service", 10, false},
		{"CAP_NET_BIND_SERVICE", 10, false},
		{"NET_RAW", 13, false},
		{"cap_checkpoint_restore", 40, false},
		{"cap_flying", 0, true},
		{"", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.name)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("Parse(%q) = %d, %v; want %d, error %v", tt.name, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestXattrRoundTrip(t *testing.T) {
	in := []string{"cap_net_bind_service", "CAP_NET_ADMIN", "cap_bpf"}
	b, err := Xattr(in)
	if err != nil {
		t.Fatal(err)
	}
	got, eff, err := Decode(b)
	want := []string{"cap_bpf", "cap_net_admin", "cap_net_bind_service"}
	if err != nil || !eff || !reflect.DeepEqual(got, want) {
		t.Errorf("Decode(Xattr(%v)) = %v, %v, %v; want %v, true", in, got, eff, err, want)
	}
	if b, err := Xattr(nil); b != nil || err != nil {
		t.Errorf("Xattr(nil) = %v, %v; want nil, nil", b, err)
	}
	if _, err := Xattr([]string{"cap_nope"}); err == nil {
		t.Error("Xattr(cap_nope) error = nil, want an unknown capability")
	}
}

// TestXattrMatchesSetcap checks the bytes against what setcap(8) itself
// writes on this machine (libcap2-bin is installed with buildah).
func TestXattrMatchesSetcap(t *testing.T) {
	setcap, err := exec.LookPath("setcap")
	if err != nil {
		t.Fatalf("setcap not found: install libcap2-bin: %v", err)
	}
	tests := []struct {
		spec string
		caps []string
	}{
		{"cap_net_bind_service=ep", []string{"cap_net_bind_service"}},
		{"cap_net_admin,cap_net_raw=ep", []string{"cap_net_raw", "cap_net_admin"}},
		{"cap_bpf,cap_perfmon=ep", []string{"cap_bpf", "cap_perfmon"}},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "bin")
			if err := os.WriteFile(f, []byte("x"), 0o755); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(setcap, tt.spec, f).CombinedOutput(); err != nil {
				t.Fatalf("setcap %s: %v\n%s", tt.spec, err, out)
			}
			buf := make([]byte, 64)
			n, err := unix.Getxattr(f, XattrName, buf)
			if err != nil {
				t.Fatalf("getxattr: %v", err)
			}
			want := buf[:n]
			got, err := Xattr(tt.caps)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("Xattr(%v) = %x, %v; setcap wrote %x", tt.caps, got, err, want)
			}
		})
	}
}
