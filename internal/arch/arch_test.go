package arch

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/patchkit/patchkit/"

// imports returns the internal packages that each package under internal/
// imports directly (tests excluded), keyed by their path below the module.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	err = filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, module) {
				out[rel] = append(out[rel], strings.TrimPrefix(imp, module))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 20 {
		t.Fatalf("read the imports of %d packages: the walk is broken", len(out))
	}
	return out
}

// closure is every internal package pkg depends on, itself excluded.
func closure(g map[string][]string, pkg string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		for _, q := range g[p] {
			if !seen[q] {
				seen[q] = true
				walk(q)
			}
		}
	}
	walk(pkg)
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func TestLayering(t *testing.T) {
	g := imports(t)
	for pkg, deps := range g {
		isCmd := strings.HasPrefix(pkg, "internal/cmd/")
		for _, d := range deps {
			switch {
			// A stage never reaches up into the commands.
			case !isCmd && (strings.HasPrefix(d, "internal/cmd/") || (d == "internal/cmdutil" && pkg != "internal/cmd")):
				t.Errorf("%s imports %s: stages must not import command packages", pkg, d)
			// Commands share logic through stage packages, never through
			// each other; only root wires them together.
			case isCmd && pkg != "internal/cmd/root" && strings.HasPrefix(d, "internal/cmd/"):
				t.Errorf("%s imports %s: one command must not import another (move the shared logic into a stage)", pkg, d)
			}
		}
	}
	// Leaves: packages every stage may use, which therefore use none of them.
	for _, leaf := range []string{"internal/untrusted", "internal/diag", "internal/httpretry"} {
		if deps := g[leaf]; len(deps) > 0 {
			t.Errorf("%s imports %v: it must stay a leaf", leaf, deps)
		}
	}
	// verify checks a series at its pin; carrying it to another ref
	// (upgrade) is a later step. The canonical text both compare is
	// refresh's.
	for _, d := range closure(g, "internal/verify") {
		if d == "internal/upgrade" {
			t.Errorf("internal/verify depends on %s: the canonical text is package refresh's", d)
		}
	}
	// The image stage builds and publishes: it needs no renderer and no
	// earlier stage's verdicts.
	for _, d := range closure(g, "internal/image") {
		switch d {
		case "internal/report", "internal/obsolete", "internal/verify", "internal/upgrade", "internal/pipeline", "internal/gate":
			t.Errorf("internal/image depends on %s", d)
		}
	}
}

// TestOneGitRunner checks that upstream is the only stage that starts the
// git CLI: every other stage asks the cache (upstream.Cache.Git), which owns
// git's environment and the reading of its failures as cache faults. It is
// also the only one that imports go-git (beyond its file-mode constants), so
// no stage reads the cache's objects around the verified reader (Commit,
// Log, Source) that turns damage into cache faults. The
// exceptions work on other repositories: gittest builds test upstreams,
// obsolete/corpus rebuilds the real-history corpus's reduced upstreams,
// propose commits to the downstream repository and status reads its history.
const goGit = "github.com/go-git/go-git/v5"

// goGitImport returns the go-git package an import line names, if any.
func goGitImport(line string) (string, bool) {
	i := strings.Index(line, `"`+goGit)
	if i < 0 {
		return "", false
	}
	rest := line[i+1:]
	j := strings.IndexByte(rest, '"')
	if j < 0 || (j > len(goGit) && rest[len(goGit)] != '/') {
		return "", false
	}
	return rest[:j], true
}

func TestOneGitRunner(t *testing.T) {
	allowed := map[string]bool{"internal/upstream": true, "internal/gittest": true, "internal/propose": true,
		"internal/obsolete/corpus": true, "internal/status": true}
	root, _ := filepath.Abs("../..")
	var found int
	filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		if allowed[filepath.ToSlash(rel)] {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		found++
		for i, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "exec.Command") && strings.Contains(line, `"git"`) {
				t.Errorf("%s:%d runs git itself: go through upstream.Cache.Git", path, i+1)
			}
			if imp, ok := goGitImport(line); ok && imp != goGit+"/plumbing/filemode" {
				t.Errorf("%s:%d imports %s: read the cache's objects and refs through upstream.Cache's checked methods", path, i+1, imp)
			}
		}
		return nil
	})
	if found < 50 {
		t.Fatalf("read %d files: the walk is broken", found)
	}
}

// TestCommandsHoldNoSequence checks that the command packages hold flags,
// options and rendering, not the sequences they run: no internal/cmd/*
// package (root wires the tree, and imports none of these either) imports
// the upstream cache, the applier, the patch parser, the go-module tools,
// the transactions or go-git. They reach those only through the runner
// (pipeline.Run: prepare, repair, per-unit failures) and the stage that
// owns their verb's sequence (release, upgrade.Run and upgrade.Refresh,
// forward.Submit, backport.Add, gate.Check, obsolete.Check, verify.Image).
// Before the runner, cmd/apply, cmd/gate, cmd/obsolete, cmd/verify and
// cmd/status imported upstream for RetryRepaired, cmd/backport applied the
// series itself, cmd/refresh and cmd/upgrade wrote through txn, and
// cmd/forward read the cache's HEAD with go-git.
//
// One exception: cmd/apply may import tree, whose OutPolicy (the --out
// policy: Check, Write) and owner record out.go names.
//
// Nor does a command start goroutines or import sync (sync/atomic,
// golang.org/x/sync): running units at once is sequence logic too, and its
// home is pipeline (pipeline.Prefetch lists obsolete-check's upstreams
// concurrently, with a bound). cmd/obsolete held that worker pool until it
// moved; no command has needed one since.
func TestCommandsHoldNoSequence(t *testing.T) {
	forbidden := []string{"internal/upstream", "internal/apply", "internal/series", "internal/gomod", "internal/txn", "internal/tree"}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := filepath.Glob(filepath.Join(root, "internal", "cmd", "*"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, dir := range dirs {
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			continue // not a package
		}
		checked++
		rel, _ := filepath.Rel(root, dir)
		rel = filepath.ToSlash(rel)
		for _, imp := range pkg.Imports {
			if imp == "sync" || strings.HasPrefix(imp, "sync/") || strings.HasPrefix(imp, "golang.org/x/sync") {
				t.Errorf("%s imports %s: running units concurrently is sequence logic; it belongs in pipeline", rel, imp)
			}
			if strings.HasPrefix(imp, "github.com/go-git/") {
				t.Errorf("%s imports %s: reading the cache is upstream's, through a stage", rel, imp)
			}
			for _, f := range forbidden {
				if imp != module+f || (rel == "internal/cmd/apply" && f == "internal/tree") {
					continue
				}
				t.Errorf("%s imports %s: sequence logic belongs in a stage (pipeline.Run, release, the verb's stage), not in a command", rel, f)
			}
		}
		fset := token.NewFileSet()
		for _, name := range pkg.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if g, ok := n.(*ast.GoStmt); ok {
					t.Errorf("%s starts a goroutine (%s): running units concurrently is sequence logic; it belongs in pipeline", rel, fset.Position(g.Pos()))
				}
				return true
			})
		}
	}
	if checked < 12 {
		t.Fatalf("read %d command packages: the glob is broken", checked)
	}
}
