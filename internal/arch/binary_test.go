package arch

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinaryKeepsMethodElimination links the patchkit binary and fails when
// a function that looks methods up by name through reflection
// (reflect.Value.Method or MethodByName with a computed argument: text/ and
// html/template's Execute, for one) is reachable from main. Once one is,
// the linker keeps every exported method of every type in the binary: the
// status page's html/template made patchkit 30 MB instead of 21 MB and
// raised every command's peak memory by about 3 MiB, since the package
// initialisers then touch pages spread over a larger binary
// (docs/benchmarks.md, "the process floor"). The linker's dependency dump
// marks such functions <ReflectMethod>. Tests may use templates; the
// commands write html by hand (internal/untrusted's HTMLPage and HTMLHref).
func TestBinaryKeepsMethodElimination(t *testing.T) {
	cmd := exec.Command("go", "build", "-ldflags=-dumpdep", "-o", filepath.Join(t.TempDir(), "patchkit"), "./cmd/patchkit")
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	edges := 0
	var found []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, " -> ") {
			continue
		}
		edges++
		if strings.Contains(line, "<ReflectMethod>") {
			found = append(found, line)
		}
	}
	if edges < 10000 {
		t.Fatalf("the linker's dependency dump has %d edges: the dump is broken", edges)
	}
	if len(found) > 0 {
		t.Errorf("%d reflection-by-method-name edges reachable from main, which keep every exported method in the binary (write the output without reflection by method name); the first:\n%s",
			len(found), strings.Join(found[:min(len(found), 5)], "\n"))
	}
}
