package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/image"
	"github.com/patchkit/patchkit/internal/image/imagetest"
)

// buildFiles and buildFileSize size the build benchmark as issue D sets it:
// a 50 MB file set, half incompressible (like binaries), half text.
const (
	buildFiles    = 50
	buildFileSize = 1 << 20
)

// setupBuild writes the file set under dir/files and returns its build.files.
func setupBuild(b *testing.B, dir string) []image.File {
	b.Helper()
	rng := rand.New(rand.NewSource(1))
	var files []image.File
	for i := 0; i < buildFiles; i++ {
		data := make([]byte, buildFileSize)
		if i%2 == 0 {
			rng.Read(data)
		} else {
			line := []byte(fmt.Sprintf("file %d: some generated text for the build benchmark, repeated\n", i))
			for j := range data {
				data[j] = line[j%len(line)]
			}
		}
		rel := fmt.Sprintf("files/f%02d.bin", i)
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
		files = append(files, image.File{From: rel, To: "/data/" + filepath.Base(rel)})
	}
	return files
}

// BenchmarkBuild builds the same 50 MB file set into an OCI layout:
//   - native: patchkit's native builder (one gzip layer on scratch);
//   - buildah: patchkit's buildah builder on "FROM scratch / COPY files/
//     /data/" (buildah build --isolation chroot with the vfs driver, buildah
//     push to a temporary layout), then the same layout publisher.
//
// Both end with the image in an OCI layout; the two ways alternate within
// each iteration, each reporting its own time.
func BenchmarkBuild(b *testing.B) {
	ctxDir := b.TempDir()
	files := setupBuild(b, ctxDir)
	dockerfile := filepath.Join(b.TempDir(), "Dockerfile")
	os.WriteFile(dockerfile, []byte("FROM scratch\nCOPY files/ /data/\n"), 0o644)
	bh := imagetest.NewBuildah(b)
	tmp := b.TempDir()
	native := image.NewNative(image.WithLayerDir(tmp))
	buildah := image.NewBuildah(image.WithBuildahStorage(bh.Root, bh.RunRoot), image.WithBuildahTempDir(tmp))
	req := image.Request{ContextDir: ctxDir, Dockerfile: dockerfile, Base: "scratch", Files: files, Created: time.Unix(1700000000, 0)}
	ctx := context.Background()
	way := func(bl image.Builder, layoutDir string) {
		res, err := bl.Build(ctx, req)
		if err != nil {
			b.Fatalf("%s: %v", bl.Name(), err)
		}
		defer res.Close()
		lay, _ := image.NewLayout(layoutDir)
		if _, err := lay.Publish(ctx, res, "bench"); err != nil {
			b.Fatalf("%s: %v", bl.Name(), err)
		}
	}
	// Check both ways before timing: each layout holds an image whose
	// layers carry the whole file set.
	for _, bl := range []image.Builder{native, buildah} {
		out := filepath.Join(tmp, "check-"+bl.Name())
		way(bl, out)
		img, err := image.ReadLayout(out, "bench")
		if err != nil {
			b.Fatal(err)
		}
		layers, _ := img.Layers()
		var size int64
		for _, l := range layers {
			rc, err := l.Uncompressed()
			if err != nil {
				b.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, rc)
			rc.Close()
			size += n
		}
		if size < buildFiles*buildFileSize {
			b.Fatalf("%s: the image's layers hold %d bytes, want at least %d", bl.Name(), size, buildFiles*buildFileSize)
		}
		os.RemoveAll(out)
	}
	var nativeTime, buildahTime time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		inTurn(i,
			func() {
				out := filepath.Join(tmp, fmt.Sprintf("native-%d", i))
				start := time.Now()
				way(native, out)
				nativeTime += time.Since(start)
				b.StopTimer()
				os.RemoveAll(out)
				b.StartTimer()
			},
			func() {
				out := filepath.Join(tmp, fmt.Sprintf("buildah-%d", i))
				start := time.Now()
				way(buildah, out)
				buildahTime += time.Since(start)
				b.StopTimer()
				os.RemoveAll(out)
				b.StartTimer()
			},
		)
	}
	n := float64(b.N)
	b.ReportMetric(float64(nativeTime.Milliseconds())/n, "native-ms/op")
	b.ReportMetric(float64(buildahTime.Milliseconds())/n, "buildah-ms/op")
	b.ReportMetric(float64(nativeTime)/float64(buildahTime), "native/buildah")
	mb := float64(buildFiles*buildFileSize) / (1 << 20)
	b.ReportMetric(mb*n/nativeTime.Seconds(), "native-MB/s")
	b.ReportMetric(mb*n/buildahTime.Seconds(), "buildah-MB/s")
}
