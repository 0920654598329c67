// Package gomodtest builds Go module proxies on disk for tests: GOPROXY=file://
// serving generated modules at several versions, and the environment that
// keeps the go command off the network.
package gomodtest

import (
	"archive/zip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// Module is one version of a generated module: a package named after the
// last element of its path (without a /vN suffix) that exports V, the
// version, and requires Require ("path@version" each).
type Module struct {
	Path    string
	Version string
	Require []string
}

// Proxy writes mods into a new directory laid out as a GOPROXY and returns it.
func Proxy(t testing.TB, mods ...Module) string {
	t.Helper()
	dir := t.TempDir()
	lists := map[string][]string{}
	for _, m := range mods {
		esc, err := module.EscapePath(m.Path)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := module.EscapeVersion(m.Version)
		if err != nil {
			t.Fatal(err)
		}
		vdir := filepath.Join(dir, filepath.FromSlash(esc), "@v")
		if err := os.MkdirAll(vdir, 0o755); err != nil {
			t.Fatal(err)
		}
		gomod := GoMod(m)
		write(t, filepath.Join(vdir, ev+".mod"), gomod)
		write(t, filepath.Join(vdir, ev+".info"), fmt.Sprintf(`{"Version":%q,"Time":"2024-01-01T00:00:00Z"}`, m.Version))
		zipModule(t, filepath.Join(vdir, ev+".zip"), m, gomod)
		lists[vdir] = append(lists[vdir], m.Version)
	}
	for vdir, vs := range lists {
		sort.Slice(vs, func(i, j int) bool { return semver.Compare(vs[i], vs[j]) < 0 })
		write(t, filepath.Join(vdir, "list"), strings.Join(vs, "\n")+"\n")
	}
	return dir
}

// GoMod is the go.mod of m.
func GoMod(m Module) string {
	var b strings.Builder
	fmt.Fprintf(&b, "module %s\n\ngo 1.21\n", m.Path)
	if len(m.Require) > 0 {
		b.WriteString("\nrequire (\n")
		for _, r := range m.Require {
			p, v, _ := strings.Cut(r, "@")
			fmt.Fprintf(&b, "\t%s %s\n", p, v)
		}
		b.WriteString(")\n")
	}
	return b.String()
}

// PackageName is the package name of a generated module.
func PackageName(path string) string {
	prefix, _, _ := module.SplitPathVersion(path)
	name := prefix[strings.LastIndexByte(prefix, '/')+1:]
	return strings.NewReplacer("-", "", ".", "").Replace(name)
}

func zipModule(t testing.TB, file string, m Module, gomod string) {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	name := PackageName(m.Path)
	var src strings.Builder
	fmt.Fprintf(&src, "package %s\n\n", name)
	var imports []string
	for _, r := range m.Require {
		p, _, _ := strings.Cut(r, "@")
		imports = append(imports, p)
	}
	if len(imports) > 0 {
		src.WriteString("import (\n")
		for _, p := range imports {
			fmt.Fprintf(&src, "\t%q\n", p)
		}
		src.WriteString(")\n\n")
	}
	fmt.Fprintf(&src, "// V is the module's version.\nconst V = %q\n", m.Version)
	if len(imports) > 0 {
		src.WriteString("\n// Deps are the versions of its requirements.\nvar Deps = []string{")
		for _, p := range imports {
			fmt.Fprintf(&src, "%s.V, ", PackageName(p))
		}
		src.WriteString("}\n")
	}
	for n, data := range map[string]string{"go.mod": gomod, name + ".go": src.String()} {
		w, err := zw.Create(m.Path + "@" + m.Version + "/" + n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func write(t testing.TB, file, data string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Env points the go command of this test (and of what it runs) at proxy
// alone: GOPROXY=file://proxy, no checksum database, a module cache of the
// test's own, no toolchain download, no workspace.
func Env(t *testing.T, proxy string) {
	t.Helper()
	t.Setenv("GOPROXY", "file://"+filepath.ToSlash(proxy))
	t.Setenv("GOSUMDB", "off")
	t.Setenv("GONOSUMDB", "*")
	t.Setenv("GONOSUMCHECK", "1")
	t.Setenv("GOPRIVATE", "")
	t.Setenv("GONOPROXY", "")
	t.Setenv("GOFLAGS", "-mod=mod -modcacherw")
	t.Setenv("GOMODCACHE", t.TempDir())
	t.Setenv("GOTOOLCHAIN", "local")
	t.Setenv("GOWORK", "off")
}

// MainGoMod is a main module's go.mod as `go mod tidy` formats it: the go
// directive, then one require block of reqs ("path version" each, sorted).
func MainGoMod(module, goVersion string, reqs ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "module %s\n\ngo %s\n", module, goVersion)
	if len(reqs) > 0 {
		rs := append([]string(nil), reqs...)
		sort.Strings(rs)
		b.WriteString("\nrequire (\n")
		for _, r := range rs {
			fmt.Fprintf(&b, "\t%s\n", r)
		}
		b.WriteString(")\n")
	}
	return b.String()
}

// Go runs the go command in dir with the test's environment plus env and
// returns its combined output, failing the test if it fails.
func Go(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
