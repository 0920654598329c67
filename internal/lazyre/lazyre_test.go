package lazyre

import (
	"regexp"
	"slices"
	"testing"
)

// A pattern is compiled on first use, not by New, and then answers as
// regexp.MustCompile's does.
func TestCompiledOnFirstUse(t *testing.T) {
	r := New(`^([a-z]+)-(\d+)$`)
	if r.re != nil {
		t.Fatal("New compiled the pattern")
	}
	want := regexp.MustCompile(r.String())
	for _, s := range []string{"abc-12", "abc", "ABC-1", "x-1-2"} {
		if got, w := r.FindStringSubmatch(s), want.FindStringSubmatch(s); !slices.Equal(got, w) {
			t.Errorf("FindStringSubmatch(%q) = %q, want %q", s, got, w)
		}
		if r.MatchString(s) != want.MatchString(s) {
			t.Errorf("MatchString(%q) differs", s)
		}
	}
	if r.re == nil || r.Regexp() != r.re {
		t.Error("the compiled pattern is not kept")
	}
}

// A bad pattern panics where it is first used, as regexp.MustCompile does
// at start; MustCompileAll reaches it first.
func TestMustCompileAllPanicsOnBadPattern(t *testing.T) {
	bad := New(`(`)
	defer func() {
		mu.Lock()
		all = slices.DeleteFunc(all, func(r *Regexp) bool { return r == bad })
		mu.Unlock()
		if recover() == nil {
			t.Error("MustCompileAll did not panic on a bad pattern")
		}
	}()
	MustCompileAll()
}
