package stamp

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/spec"
)

// bigValues writes a values file of about size bytes: many image blocks
// with comments, the stamped key near the end.
func bigValues(tb testing.TB, size int) string {
	tb.Helper()
	var b strings.Builder
	b.WriteString("# generated values\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "component%d:\n  # the image of component %d\n  image:\n    repository: ghcr.io/org/component%d\n    tag: v1.%d.0  # pinned\n  resources: {limits: {cpu: 100m, memory: 128Mi}}\n  args: [\"--flag=%d\", '--other']\n\n", i, i, i, i, i)
	}
	b.WriteString("image:\n  tag: v0.9.0\n")
	root := tb.TempDir()
	if err := os.WriteFile(filepath.Join(root, "values.yaml"), []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return root
}

// bench6MB is the two benchmarks' 6 MB values file and a spec stamping two
// of its keys; the benchmark's clock and allocation count start after it.
func bench6MB(b *testing.B) (string, *spec.Spec) {
	b.Helper()
	root := bigValues(b, 6<<20)
	s := specWith(b, root, "  - {file: values.yaml, key: .image.tag}\n  - {file: values.yaml, key: .component7.image.tag, format: ref}\n")
	b.ReportAllocs()
	b.ResetTimer()
	return root, s
}

// BenchmarkStamp6MB stamps two keys of a 6 MB values file: Prepare, then
// Write (lock, re-read, edit again, write, fsync, rename).
func BenchmarkStamp6MB(b *testing.B) {
	root, s := bench6MB(b)
	for i := 0; i < b.N; i++ {
		p, err := Prepare(root, s, value)
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Write(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrepare6MB is the edit alone, without the write and fsync.
func BenchmarkPrepare6MB(b *testing.B) {
	root, s := bench6MB(b)
	for i := 0; i < b.N; i++ {
		if _, err := Prepare(root, s, value); err != nil {
			b.Fatal(err)
		}
	}
}
