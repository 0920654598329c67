package image

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"
)

// TestBuildahCommands checks the command lines through the runner seam; the
// real buildah runs in TestBuildahRegistry.
func TestBuildahCommands(t *testing.T) {
	img, _ := random.Image(64, 1)
	var calls [][]string
	fake := func(_ context.Context, _ []string, name string, args ...string) ([]byte, error) {
		calls = append(calls, args)
		switch {
		case slices.Contains(args, "build"):
			os.WriteFile(flag(args, "--iidfile"), []byte("sha256:feed\n"), 0o644)
		case slices.Contains(args, "push"):
			dir := strings.TrimPrefix(args[len(args)-1], "oci:")
			p, _ := layout.Write(dir, empty.Index)
			p.AppendImage(img)
		}
		return nil, nil
	}
	b := NewBuildah(withBuildahRunner(fake), WithBuildahStorage("/st/root", "/st/run"))
	res, err := b.Build(context.Background(), Request{
		ContextDir: "/src", Dockerfile: "/D", Created: time.Unix(1700000000, 0),
		Annotations: map[string]string{AnnotationRevision: "abc"}, Labels: map[string]string{"l": "v"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	global := []string{"--root", "/st/root", "--runroot", "/st/run", "--storage-driver", "vfs"}
	if len(calls) != 3 {
		t.Fatalf("buildah ran %d times, want build, push, rmi: %q", len(calls), calls)
	}
	for i, verb := range []string{"build", "push", "rmi"} {
		if !slices.Equal(calls[i][:6], global) || calls[i][6] != verb {
			t.Errorf("call %d = %q, want %q then %s", i, calls[i], global, verb)
		}
	}
	bld := calls[0]
	if flag(bld, "--isolation") != "chroot" || flag(bld, "--timestamp") != "1700000000" || flag(bld, "--file") != "/D" ||
		flag(bld, "--label") != "l=v" || bld[len(bld)-1] != "/src" || !slices.Contains(bld, "--identity-label=false") {
		t.Errorf("build args = %q", bld)
	}
	if !slices.Contains(calls[1], "feed") || !slices.Contains(calls[2], "feed") {
		t.Errorf("push %q and rmi %q should name the built image id", calls[1], calls[2])
	}
	m, _ := res.Image.Manifest()
	if m.Annotations[AnnotationRevision] != "abc" {
		t.Errorf("manifest annotations = %v, want the revision", m.Annotations)
	}
	if d, _ := res.Image.Digest(); d != res.Digest {
		t.Errorf("Result.Digest %s != image digest %s", res.Digest, d)
	}
}
