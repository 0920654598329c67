package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchkit/patchkit/internal/gittest"
)

// The gate benchmark's module: gatePkgs packages of generated code, each of
// gateFuncs functions, all imported by the tested package ./target, so that
// compiling is most of a cold go test.
const (
	gatePkgs  = 36
	gateFuncs = 400
)

// gatePkg is generated package i: gateFuncs functions of some arithmetic, and
// Value, which patch 0001 changes in pkg00.
func gatePkg(i int, value int) string {
	var s strings.Builder
	fmt.Fprintf(&s, "package pkg%02d\n\nimport \"strconv\"\n\n// Value is what the gate's test checks.\nfunc Value() int { return %d }\n\n", i, value)
	for f := 0; f < gateFuncs; f++ {
		fmt.Fprintf(&s, "func F%d(a, b int) string {\n\tx := a*%d + b\n\tfor j := 0; j < %d; j++ {\n\t\tif x%%2 == 0 {\n\t\t\tx = x/2 + j\n\t\t} else {\n\t\t\tx = 3*x + 1 - j\n\t\t}\n\t}\n\tswitch {\n\tcase x > %d:\n\t\treturn \"big\" + strconv.Itoa(x)\n\tcase x < 0:\n\t\treturn \"neg\"\n\t}\n\treturn strconv.Itoa(x + %d)\n}\n\n", f, f+i, f%7+3, f*13, i)
	}
	return s.String()
}

// gateTarget is the tested package: it imports every generated package, and
// Name, which patch 0002 changes.
func gateTarget(name string) string {
	var s strings.Builder
	s.WriteString("package target\n\nimport (\n")
	for i := 0; i < gatePkgs; i++ {
		fmt.Fprintf(&s, "\t\"example.com/big/pkg%02d\"\n", i)
	}
	s.WriteString(")\n\n// Sum adds every package's Value.\nfunc Sum() int {\n\treturn 0")
	for i := 0; i < gatePkgs; i++ {
		fmt.Fprintf(&s, " +\n\t\tpkg%02d.Value()", i)
	}
	fmt.Fprintf(&s, "\n}\n\n// Name is the target's name.\nfunc Name() string { return %q }\n", name)
	return s.String()
}

const gateTest = `package target

import (
	"testing"

	"example.com/big/pkg00"
)

// TestPatches: each subtest is owned by the patch whose Test: header names it.
func TestPatches(t *testing.T) {
	t.Run("value", func(t *testing.T) {
		if pkg00.Value() != 2 {
			t.Errorf("pkg00.Value() = %d, want 2", pkg00.Value())
		}
	})
	t.Run("name", func(t *testing.T) {
		if Name() != "patched" {
			t.Errorf("Name() = %q, want patched", Name())
		}
	})
}
`

// setupGate generates the upstream module (tagged v1.0.0), the two-patch
// series with its Test: headers and the injected test, and a checkout of
// the patched tree with the test in place for the plain go test.
func setupGate(b *testing.B) (root, patched string) {
	b.Helper()
	files := map[string]string{"go.mod": "module example.com/big\n\ngo 1.22\n", "target/target.go": gateTarget("plain")}
	for i := 0; i < gatePkgs; i++ {
		files[fmt.Sprintf("pkg%02d/pkg.go", i)] = gatePkg(i, 1)
	}
	var stream bytes.Buffer
	commitStream(&stream, 1, 0, "v1.0.0", files, 1700000000)
	up := fastImport(b, stream.Bytes())
	root = b.TempDir()
	writeSpec(b, root, "big", "file://"+up, "v1.0.0", "v*")
	spec := filepath.Join(root, "images", "big", "patchkit.yaml")
	f, err := os.OpenFile(spec, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Fprint(f, "test:\n  inject:\n    - from: patches/big/tests/patches_test.go\n      to: target/patches_test.go\n  package: ./target\n  run: '^TestPatches$'\n")
	f.Close()
	pdir := filepath.Join(root, "patches", "big")
	os.MkdirAll(filepath.Join(pdir, "tests"), 0o755)
	os.WriteFile(filepath.Join(pdir, "tests", "patches_test.go"), []byte(gateTest), 0o644)

	patched = filepath.Join(b.TempDir(), "tree")
	if out, err := exec.Command("git", "-c", "advice.detachedHead=false", "clone", "-q", "--branch", "v1.0.0", up, patched).CombinedOutput(); err != nil {
		b.Fatalf("clone: %v %s", err, out)
	}
	writeTestedPatches(b, patched, pdir, []testedEdit{
		{"pkg00/pkg.go", gatePkg(0, 2), "0001-value.diff", "TestPatches/value"},
		{"target/target.go", gateTarget("patched"), "0002-name.diff", "TestPatches/name"},
	})
	os.WriteFile(filepath.Join(patched, "target", "patches_test.go"), []byte(gateTest), 0o644)
	return root, patched
}

// goEnv is the environment of both sides: a private build cache, no
// network, no toolchain switch.
func goEnv(gocache string) []string {
	return gittest.Env("GOCACHE="+gocache, "GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS=")
}

// runEnv is run with env; it fails the benchmark on a non-zero exit.
func runEnv(b *testing.B, dir string, env []string, name string, args ...string) (time.Duration, int64) {
	b.Helper()
	cmd, rss := measured(name, args...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return time.Since(start), rss()
}

// BenchmarkGate compares patchkit gate (series + pin + one run per dropped
// patch: 4 go test runs for the 2-patch series) with one go test -trimpath
// of the same package on the patched tree, on a generated module of 36
// packages (14,400 generated functions) that the tested package imports:
//   - cold: an empty build cache, once, before the timed loop;
//   - warm: per iteration, with the build cache the earlier runs filled. The
//     figure to read is gate-per-run / go-test: what each of the gate's runs
//     costs beside one plain go test.
func BenchmarkGate(b *testing.B) {
	root, patched := setupGate(b)
	work := b.TempDir()
	cache := filepath.Join(work, "upstream-cache")
	gocache := filepath.Join(work, "gocache")
	env := goEnv(gocache)
	gate := []string{"--root", root, "--cache-dir", cache, "gate", "big"}
	goTest := []string{"test", "-count=1", "-trimpath", "-run", "^TestPatches$", "./target"}

	coldGo, _ := runEnv(b, patched, env, "go", goTest...)
	os.RemoveAll(gocache)
	runEnv(b, root, env, patchkitBin, "--root", root, "--cache-dir", cache, "apply", "big", "--check") // fill the upstream cache
	coldGate, _ := runEnv(b, root, env, patchkitBin, gate...)

	const runs = 4 // series, pin, and one per dropped patch
	var goRuns, gateRuns []time.Duration
	var goRSS, gateRSS int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d, r := runEnv(b, patched, env, "go", goTest...)
		goRuns, goRSS = append(goRuns, d), max(goRSS, r)
		d, r = runEnv(b, root, env, patchkitBin, gate...)
		gateRuns, gateRSS = append(gateRuns, d), max(gateRSS, r)
	}
	b.StopTimer()
	// After the loop: ResetTimer clears the metrics reported before it.
	b.ReportMetric(float64(coldGo.Milliseconds()), "cold-go-test-ms")
	b.ReportMetric(float64(coldGate.Milliseconds()), "cold-gate-ms")
	spread(b, "go-test", goRuns)
	spread(b, "gate", gateRuns)
	med := func(ds []time.Duration) float64 { return float64(sortedCopy(ds)[len(ds)/2]) }
	b.ReportMetric(med(gateRuns)/runs/med(goRuns), "gate-per-run/go-test")
	b.ReportMetric(float64(goRSS), "go-test-maxRSS-KiB")
	b.ReportMetric(float64(gateRSS), "gate-maxRSS-KiB")
}
