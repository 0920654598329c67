package buildfile

import (
	"math"
	"reflect"
	"testing"
)

// TestRecipe: the recipe of one target, continuations joined, comments and
// blank lines inside it kept out, ended by the next rule; an assignment
// `build := x` is no rule of build.
func TestRecipe(t *testing.T) {
	mk := "build := not a rule\n" +
		"all: build\n\techo all\n" +
		"build: deps\n\tmake image IMAGE=a\n\n# a comment\n\tmake -C \\\n\t\timages/b \\\n\t\timage\n" +
		"other:\n\tmake image IMAGE=c\n" +
		"x y build:\n\tlast\\\n"
	got := Recipe([]byte(mk), "build")
	want := []Line{{5, "make image IMAGE=a"}, {8, "make -C  images/b image"}, {14, "last"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Recipe() = %+v, want %+v", got, want)
	}
	if got := Recipe([]byte(mk), "none"); got != nil {
		t.Errorf("Recipe(none) = %+v, want nothing", got)
	}
}

// TestRuleAfter: the recipe holding a line ends at the next logical line
// that is no recipe line; comments, blank lines and continuations do not end
// it.
func TestRuleAfter(t *testing.T) {
	mk := "A = 1\nimage:\n\tdocker build . \\\n  --tag x\n\n# note\n\tyq -i x\nB = 2 \\\n  3\nnext:\n\tcmd\n"
	m := ParseMakefile([]byte(mk), "Makefile")
	for n, want := range map[int]int{1: 2, 3: 8, 4: 8, 7: 8, 8: 10, 10: math.MaxInt} {
		if got := m.RuleAfter(n); got != want {
			t.Errorf("RuleAfter(%d) = %d, want %d", n, got, want)
		}
	}
}

// TestLines: every logical line, comments and blank lines kept (a comment
// ends a continuation as any line does), "\r" dropped, continuations joined.
func TestLines(t *testing.T) {
	got := Lines([]byte("# c\n\nA = x \\\n# in\n  y\r\n\tcmd\n"))
	want := []Line{{1, "# c"}, {2, ""}, {3, "A = x  # in"}, {5, "  y"}, {6, "\tcmd"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Lines() = %+v, want %+v", got, want)
	}
}

// TestWords: a recipe line splits at blanks outside quotes and $(...), the
// quotes kept; Unquote drops a pair around a whole word.
func TestWords(t *testing.T) {
	in := `TAG=$(IMAGE_TAG)@$$(yq e '."a b"' f.json -o json) yq -i '.x = strenv(TAG)' "my file"  it's`
	want := []string{`TAG=$(IMAGE_TAG)@$$(yq e '."a b"' f.json -o json)`, "yq", "-i", `'.x = strenv(TAG)'`, `"my file"`, "it's"}
	if got := Words(in); !reflect.DeepEqual(got, want) {
		t.Errorf("Words() = %q, want %q", got, want)
	}
	for in, want := range map[string]string{`"a b"`: "a b", `'a'`: "a", `"a'`: `"a'`, `"`: `"`, "a": "a"} {
		if got := Unquote(in); got != want {
			t.Errorf("Unquote(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMakeRef: $(NAME) and ${NAME} at the start of a value, nothing else.
func TestMakeRef(t *testing.T) {
	tests := []struct {
		in, name, rest string
		ok             bool
	}{
		{"$(REGISTRY)/x", "REGISTRY", "/x", true},
		{"${TAG}", "TAG", "", true},
		{"$(shell date)", "", "", false},
		{"$(1X)", "", "", false},
		{"$X", "", "", false},
		{"$(A}", "", "", false},
	}
	for _, tt := range tests {
		name, rest, ok := MakeRef(tt.in)
		if name != tt.name || rest != tt.rest || ok != tt.ok {
			t.Errorf("MakeRef(%q) = %q, %q, %v; want %q, %q, %v", tt.in, name, rest, ok, tt.name, tt.rest, tt.ok)
		}
	}
	for s, want := range map[string]bool{"A_1": true, "_x": true, "": false, "1A": false, "a-b": false} {
		if IsName(s) != want {
			t.Errorf("IsName(%q) = %v, want %v", s, !want, want)
		}
	}
}
