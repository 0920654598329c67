package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// rewrites are the calls that rewrite text: an escaper or a neutraliser is
// made of them. Only internal/untrusted, the one output filter, may use
// them on what report prints.
var rewrites = map[string]bool{
	"strings.Replace": true, "strings.ReplaceAll": true, "strings.NewReplacer": true, "strings.Map": true,
	"bytes.Replace": true, "bytes.ReplaceAll": true, "bytes.Map": true,
	"html.EscapeString": true,
}

// parseDir parses the non-test Go files of internal/<rel>.
func parseDir(t *testing.T, rel string) map[string]*ast.File {
	t.Helper()
	dir := filepath.Join("..", rel)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string]*ast.File{}
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		out[rel+"/"+n] = f
	}
	if len(out) == 0 {
		t.Fatalf("no Go file in internal/%s: the walk is broken", rel)
	}
	return out
}

// TestOneOutputFilter: the renderers escape and neutralise nothing
// themselves. Each escape of an output format (a workflow command's
// message, a markdown cell, a link target, a code fence) is a function of
// internal/untrusted, which redacts first; report only calls them. A
// renderer that grows its own replacer, regular expression or zero-width
// space trick again fails here.
func TestOneOutputFilter(t *testing.T) {
	for name, f := range parseDir(t, "report") {
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "regexp" || p == "html" {
				t.Errorf("%s imports %s: escaping belongs to internal/untrusted", name, p)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && rewrites[id.Name+"."+n.Sel.Name] {
					t.Errorf("%s calls %s.%s: an escaper or neutraliser belongs to internal/untrusted", name, id.Name, n.Sel.Name)
				}
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); err == nil && strings.ContainsRune(s, '\u200b') {
					t.Errorf("%s writes a zero-width space %s: neutralising belongs to internal/untrusted", name, n.Value)
				}
			}
			return true
		})
	}
}

// filterEscape is a zero-width space or ESC spelled as a regular
// expression spells it, in a raw string.
var filterEscape = regexp.MustCompile(`(?i)\\(x1b|033|u001b|x\{1b\}|u200b|x\{200b\})`)

// TestNoFilterOutsideUntrusted: no package but internal/untrusted holds the
// makings of a neutraliser of server text: a zero-width space (breaking
// "::", "@" or "://") or a terminal escape (ESC, to strip what a server
// sent). git's sideband lines go through untrusted.Sideband.
func TestNoFilterOutsideUntrusted(t *testing.T) {
	eachSource(t, func(fset *token.FileSet, rel string, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok {
				if s, err := strconv.Unquote(lit.Value); err == nil && (strings.ContainsAny(s, "\u200b\x1b") || filterEscape.MatchString(s)) {
					t.Errorf("internal/%s: %s is the making of an output filter: it belongs to internal/untrusted", filepath.ToSlash(rel), lit.Value)
				}
			}
			return true
		})
	})
}

// maskSpelling is what a credential masker writes in place of a secret:
// "***" (untrusted.Mask), "xxxxx", "[REDACTED]" and the like.
var maskSpelling = regexp.MustCompile(`^(\*{3,}|[xX]{4,}|[\[<(]?(?i:redacted|masked)[\]>)]?)$`)

// TestOneMasker: internal/untrusted is the only credential masker. No
// other package spells a mask (a string that stands for a hidden secret)
// or writes untrusted.Mask itself: one that must hide a URL's credentials
// before its error leaves it calls untrusted.HideURL, untrusted.URL or
// untrusted.Hide. upstream had a masker of its own (Redact, scrubString,
// scrubWriter) that wrote "xxxxx" where the rest of patchkit writes "***".
func TestOneMasker(t *testing.T) {
	eachSource(t, func(fset *token.FileSet, rel string, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && maskSpelling.MatchString(s) {
					t.Errorf("internal/%s:%d: %s spells a credential mask: hiding secrets belongs to internal/untrusted", filepath.ToSlash(rel), fset.Position(n.Pos()).Line, n.Value)
				}
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && id.Name == "untrusted" && n.Sel.Name == "Mask" {
					t.Errorf("internal/%s:%d writes untrusted.Mask itself: call untrusted's HideURL, URL or Hide", filepath.ToSlash(rel), fset.Position(n.Pos()).Line)
				}
			}
			return true
		})
	})
}

// eachSource calls check on every non-test Go file under internal/ but
// internal/untrusted and testdata, with its path relative to internal/,
// and fails when the walk reads too few files to mean anything.
func eachSource(t *testing.T, check func(fset *token.FileSet, rel string, f *ast.File)) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := 0
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "untrusted") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(root, path)
		check(fset, rel, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d Go files under internal/: the walk is broken", files)
	}
}
