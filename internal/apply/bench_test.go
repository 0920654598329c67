package apply

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/tree"
)

// replaceDiff writes a file diff of path that replaces the given 1-based
// lines of content (sorted, at least 7 apart) by "changed N", with three
// lines of context.
func replaceDiff(b *strings.Builder, path string, lines []string, change []int, tag string) {
	fmt.Fprintf(b, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n", path, path, path, path)
	for _, n := range change {
		start, end := max(1, n-3), min(len(lines), n+3)
		fmt.Fprintf(b, "@@ -%d,%d +%d,%d @@\n", start, end-start+1, start, end-start+1)
		for i := start; i <= end; i++ {
			if i == n {
				fmt.Fprintf(b, "-%s+%s %d\n", lines[i-1], tag, n)
			} else {
				fmt.Fprintf(b, " %s", lines[i-1])
			}
		}
	}
}

// benchSeries is a 5,000-file upstream and a 20-patch series, each patch
// changing 5 files in 4 places.
func benchSeries(tb testing.TB) (tree.Map, []*series.Patch) {
	base := tree.Map{}
	content := num(1, 200)
	lines := strings.SplitAfter(content, "\n")
	lines = lines[:len(lines)-1]
	for i := range 5000 {
		base[fmt.Sprintf("pkg/d%d/f%d.go", i%50, i)] = &tree.File{Mode: tree.Regular, Data: []byte(content)}
	}
	var patches []*series.Patch
	for p := range 20 {
		var b strings.Builder
		fmt.Fprintf(&b, "Subject: patch %d\n\n", p)
		for f := range 5 {
			i := p*5 + f
			replaceDiff(&b, fmt.Sprintf("pkg/d%d/f%d.go", i%50, i), lines, []int{20, 60, 120, 180}, fmt.Sprintf("p%d", p))
		}
		patches = append(patches, parsePatchForTest(tb, fmt.Sprintf("%04d.patch", p+1), []byte(b.String())))
	}
	return base, patches
}

func BenchmarkSeries(b *testing.B) {
	base, patches := benchSeries(b)
	b.ResetTimer()
	for b.Loop() {
		if res := Series(base, patches); !res.OK {
			b.Fatalf("Series() failed: %+v", res.Patches)
		}
	}
}

// TestLargeFileManyHunks applies a patch with 5,000 hunks to a 100,000-line
// file: linear work per hunk would make this take minutes.
func TestLargeFileManyHunks(t *testing.T) {
	content := num(1, 100000)
	lines := strings.SplitAfter(content, "\n")
	lines = lines[:len(lines)-1]
	var change []int
	for n := 10; n <= 99990; n += 20 {
		change = append(change, n)
	}
	var b strings.Builder
	replaceDiff(&b, "big.txt", lines, change, "changed")
	p := parsePatchForTest(t, "big.patch", []byte(b.String()))
	// Shift everything by one line so every hunk needs the offset search.
	base := tree.Map{"big.txt": {Mode: tree.Regular, Data: []byte("top\n" + content)}}
	start := time.Now()
	res := Series(base, []*series.Patch{p})
	if !res.OK {
		t.Fatalf("Series() failed: %+v", res.Patches[0].Errors[:1])
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Series() took %v for %d hunks", d, len(change))
	}
	got := string(res.Changes["big.txt"].Data)
	if !strings.Contains(got, "\nchanged 50\n") || strings.Contains(got, "\nline 50\n") || !strings.HasPrefix(got, "top\nline 1\n") {
		t.Errorf("big.txt not patched as expected")
	}
	if n := len(res.Patches[0].Hunks); n != len(change) || res.Patches[0].Hunks[0].Offset != 1 {
		t.Errorf("hunks = %d, first offset %d; want %d, 1", n, res.Patches[0].Hunks[0].Offset, len(change))
	}
}
