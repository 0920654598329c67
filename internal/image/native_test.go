package image

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/patchkit/patchkit/internal/image/caps"
)

// tree writes files (path: content; a trailing * marks an executable) into a temp dir.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, "*") {
			p, mode = strings.TrimSuffix(p, "*"), 0o755
		}
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(full, mode)
	}
	return dir
}

func nativeRequest(dir string) Request {
	return Request{
		ContextDir: dir,
		Base:       "scratch",
		Files: []File{
			{From: "bin/greeter", To: "/usr/bin/greeter", Capabilities: []string{"cap_net_bind_service"}},
			{From: "README.md", To: "/usr/share/doc/greeter/README.md"},
			{From: "etc/conf", To: "/etc/greeter.conf", Mode: 0o600},
		},
		Created:     time.Unix(1700000000, 0),
		Annotations: map[string]string{AnnotationRevision: "abc"},
		Labels:      map[string]string{AnnotationSource: "https://example.com/greeter.git"},
	}
}

var greeterFiles = map[string]string{"bin/greeter*": "#!/bin/sh\necho hello\n", "README.md": "# greeter\n", "etc/conf": "x=1\n"}

func build(t *testing.T, b Builder, req Request) *Result {
	t.Helper()
	res, err := b.Build(context.Background(), req)
	if err != nil {
		t.Fatalf("Build() error = %v", err)
	}
	t.Cleanup(func() { res.Close() })
	return res
}

func TestNativeReproducible(t *testing.T) {
	dir := tree(t, greeterFiles)
	n := NewNative(WithLayerDir(t.TempDir()))
	a := build(t, n, nativeRequest(dir))
	b := build(t, n, nativeRequest(dir))
	if a.Digest != b.Digest {
		t.Fatalf("two builds of the same input: %s and %s, want one digest", a.Digest, b.Digest)
	}
	// The files' own mtimes do not matter; Created does, and so does content.
	os.Chtimes(filepath.Join(dir, "README.md"), time.Now(), time.Now())
	if c := build(t, n, nativeRequest(dir)); c.Digest != a.Digest {
		t.Errorf("touching a file changed the digest: %s, want %s", c.Digest, a.Digest)
	}
	later := nativeRequest(dir)
	later.Created = later.Created.Add(time.Hour)
	if c := build(t, n, later); c.Digest == a.Digest {
		t.Errorf("another Created gave the same digest %s", c.Digest)
	}
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# changed\n"), 0o644)
	if c := build(t, n, nativeRequest(dir)); c.Digest == a.Digest {
		t.Errorf("other content gave the same digest %s", c.Digest)
	}
}

func TestNativeImage(t *testing.T) {
	res := build(t, NewNative(WithPlatform(v1.Platform{OS: "linux", Architecture: "arm64"})), nativeRequest(tree(t, greeterFiles)))
	img := res.Image
	if d, _ := img.Digest(); d != res.Digest {
		t.Errorf("Result.Digest = %s, image digest %s", res.Digest, d)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != "application/vnd.oci.image.manifest.v1+json" || m.Annotations[AnnotationRevision] != "abc" || len(m.Layers) != 1 {
		t.Errorf("manifest = %+v, want OCI with the annotation and one layer", m)
	}
	cf, _ := img.ConfigFile()
	if cf.Architecture != "arm64" || cf.OS != "linux" || !cf.Created.Time.Equal(time.Unix(1700000000, 0)) || cf.Config.Labels[AnnotationSource] == "" {
		t.Errorf("config = %+v, want linux/arm64 created at 1700000000 with the label", cf)
	}

	layers, _ := img.Layers()
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	type got struct {
		mode int64
		typ  byte
		caps string
		body string
	}
	var names []string
	entries := map[string]got{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		names = append(names, h.Name)
		entries[h.Name] = got{h.Mode, h.Typeflag, h.PAXRecords[caps.PAXKey], string(body)}
		if !h.ModTime.Equal(time.Unix(1700000000, 0)) || h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s: mtime %v uid %d gid %d, want 1700000000 and root", h.Name, h.ModTime, h.Uid, h.Gid)
		}
	}
	want := []string{"etc/", "etc/greeter.conf", "usr/", "usr/bin/", "usr/bin/greeter", "usr/share/", "usr/share/doc/", "usr/share/doc/greeter/", "usr/share/doc/greeter/README.md"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("layer entries = %q, want %q", names, want)
	}
	capBytes, _ := caps.Xattr([]string{"cap_net_bind_service"})
	if e := entries["usr/bin/greeter"]; e.mode != 0o755 || e.caps != string(capBytes) || e.body != greeterFiles["bin/greeter*"] {
		t.Errorf("usr/bin/greeter = mode %o caps %x, want 0755 and %x", e.mode, e.caps, capBytes)
	}
	if e := entries["etc/greeter.conf"]; e.mode != 0o600 || e.caps != "" {
		t.Errorf("etc/greeter.conf = mode %o caps %q, want 0600 and none", e.mode, e.caps)
	}
	if e := entries["usr/share/doc/greeter/README.md"]; e.mode != 0o644 {
		t.Errorf("README.md mode = %o, want 0644", e.mode)
	}
	if e := entries["usr/bin/"]; e.typ != tar.TypeDir || e.mode != 0o755 {
		t.Errorf("usr/bin/ = type %c mode %o, want a 0755 directory", e.typ, e.mode)
	}
}

func TestNativeBaseLayout(t *testing.T) {
	base, err := random.Image(256, 2)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendImage(base); err != nil {
		t.Fatal(err)
	}
	req := nativeRequest(tree(t, greeterFiles))
	req.Base = "oci:" + dir
	res := build(t, NewNative(), req)
	layers, _ := res.Image.Layers()
	baseLayers, _ := base.Layers()
	if len(layers) != 3 {
		t.Fatalf("image has %d layers, want the base's 2 and ours", len(layers))
	}
	for i := range baseLayers {
		a, _ := layers[i].Digest()
		b, _ := baseLayers[i].Digest()
		if a != b {
			t.Errorf("layer %d = %s, want the base's %s", i, a, b)
		}
	}
	// random.Image is a docker schema 2 image: our layer must say so too.
	mt, _ := layers[2].MediaType()
	if mt != "application/vnd.docker.image.rootfs.diff.tar.gzip" {
		t.Errorf("our layer's media type = %s, want the docker one to match the base", mt)
	}
}

func TestNativeErrors(t *testing.T) {
	dir := tree(t, greeterFiles)
	outside := tree(t, map[string]string{"secret": "s"})
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "escape"))
	os.Symlink("README.md", filepath.Join(dir, "inside"))
	tests := []struct {
		name  string
		files []File
		base  string
		want  string
	}{
		{"missing", []File{{From: "nope", To: "/nope"}}, "scratch", "opening nope"},
		{"directory", []File{{From: "bin", To: "/bin"}}, "scratch", "not a regular file"},
		{"symlink out of the tree", []File{{From: "escape", To: "/x"}}, "scratch", "escape"},
		{"dotdot", []File{{From: "../x", To: "/x"}}, "scratch", "not a path inside the tree"},
		{"file and dir", []File{{From: "README.md", To: "/a"}, {From: "README.md", To: "/a/b"}}, "scratch", "is a file and a directory"},
		{"no files", nil, "scratch", "no files"},
		{"bad layout", []File{{From: "README.md", To: "/a"}}, "oci:" + t.TempDir(), "base OCI layout"},
		{"bad capability", []File{{From: "README.md", To: "/a", Capabilities: []string{"cap_x"}}}, "scratch", "unknown capability"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := Request{ContextDir: dir, Base: tt.base, Files: tt.files}
			_, err := NewNative().Build(context.Background(), req)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Build() error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	// A symlink inside the tree is followed.
	layers := t.TempDir()
	res, err := NewNative(WithLayerDir(layers)).Build(context.Background(), Request{ContextDir: dir, Files: []File{{From: "inside", To: "/x"}}})
	if err != nil {
		t.Fatalf("Build(symlink inside the tree) error = %v", err)
	}
	if err := res.Close(); err != nil {
		t.Errorf("Close() error = %v", err)
	}
	if left, _ := os.ReadDir(layers); len(left) != 0 {
		t.Errorf("Close() left %d files", len(left))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tmp := t.TempDir()
	if _, err := NewNative(WithLayerDir(tmp)).Build(ctx, nativeRequest(dir)); !errors.Is(err, context.Canceled) {
		t.Errorf("Build(cancelled) error = %v, want context.Canceled", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("a cancelled build left %d files behind", len(left))
	}
}
