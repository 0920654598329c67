package buildfile

import (
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/gittest"
)

// TestReadMakeTree: includes are read where they stand (paths relative to
// the Makefile's directory, variables expanded), ?= keeps an earlier value,
// a later plain assignment wins, != is no value, and the recipe of a target
// runs its prerequisites' recipes first, a pattern rule's with $* set.
func TestReadMakeTree(t *testing.T) {
	root := t.TempDir()
	gittest.WriteFiles(t, root, map[string]string{
		"pkg/x/Makefile": "NAME = x\nVERSION ?= 1.0.0 # pin\nCOMMON := ../../common\n" +
			"include $(COMMON)/rules.mk missing.mk $(UNSET)/y.mk\n" +
			"VERSION ?= 9.9.9\nSHELLY != date\n\n.PHONY: update\n" +
			"update: prep\n\t# a comment\n\thelm pull $(NAME) --version $(VERSION) \\\n\t  --untar\n",
		"common/rules.mk": "NAME = common\nprep: fetch-$(NAME)\n\techo prep\nfetch-%:\n\tcurl $*\n",
	})
	m, err := ReadMakeTree(root, "pkg/x/Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"pkg/x/Makefile", "common/rules.mk"}; !reflect.DeepEqual(m.Files, want) {
		t.Errorf("Files = %q, want %q", m.Files, want)
	}
	if m.Dir != "pkg/x" {
		t.Errorf("Dir = %q, want pkg/x", m.Dir)
	}
	for name, want := range map[string]string{"NAME": "common", "VERSION": "1.0.0"} {
		if got := m.Vars[name]; got != want {
			t.Errorf("Vars[%s] = %q, want %q", name, got, want)
		}
	}
	if at := m.VarAt["VERSION"]; at.File != "pkg/x/Makefile" || at.N != 2 {
		t.Errorf("VarAt[VERSION] = %s:%d, want pkg/x/Makefile:2", at.File, at.N)
	}
	if at := m.VarAt["NAME"]; at.File != "common/rules.mk" || at.N != 1 {
		t.Errorf("VarAt[NAME] = %s:%d, want common/rules.mk:1", at.File, at.N)
	}
	if _, ok := m.Vars["SHELLY"]; ok {
		t.Errorf("Vars[SHELLY] set by !=; want no value")
	}
	if _, ok := m.Rules[".PHONY"]; ok {
		t.Errorf("Rules holds .PHONY")
	}
	var got []string
	for _, l := range m.Recipe("update") {
		got = append(got, l.File+":"+strconv.Itoa(l.N)+": "+strings.Join(strings.Fields(m.Expand(l.Text)), " "))
	}
	want := []string{
		"common/rules.mk:5: curl common",
		"common/rules.mk:3: echo prep",
		"pkg/x/Makefile:11: helm pull common --version 1.0.0 --untar",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Recipe(update) =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if r, stem := m.Rule("fetch-abc"); r == nil || stem != "abc" {
		t.Errorf("Rule(fetch-abc) = %v, %q; want the pattern rule, abc", r, stem)
	}
	if r, _ := m.Rule("fetch-"); r != nil {
		t.Errorf("Rule(fetch-) = %v; want nil (an empty stem)", r)
	}
}

func TestReadMakeTreeMissing(t *testing.T) {
	if _, err := ReadMakeTree(t.TempDir(), "Makefile"); !os.IsNotExist(err) {
		t.Errorf("ReadMakeTree(missing) err = %v, want not exist", err)
	}
}

func TestVarRefs(t *testing.T) {
	s := "https://x/$(NAME)-${VERSION}.tgz $(shell date) $$HOME"
	if got, want := VarRefs(s), []string{"NAME", "VERSION"}; !reflect.DeepEqual(got, want) {
		t.Errorf("VarRefs(%q) = %q, want %q", s, got, want)
	}
	if got, want := ReplaceVarRefs(s, "{v}"), "https://x/{v}-{v}.tgz $(shell date) $$HOME"; got != want {
		t.Errorf("ReplaceVarRefs = %q, want %q", got, want)
	}
}

// TestReplaceValue: the one line that gives name the value old changes,
// keeping its prefix, quotes, comment and line ending; none or two are
// errors naming the lines.
func TestReplaceValue(t *testing.T) {
	for _, tt := range []struct {
		name, key, in, want, err string
		line                     int
	}{
		{"make ?=", "VERSION", "A = 1\nVERSION ?= 1.0.0 # pin\r\n", "A = 1\nVERSION ?= 1.1.0 # pin\r\n", "", 2},
		{"export :=", "VERSION", "export VERSION := 1.0.0\n", "export VERSION := 1.1.0\n", "", 1},
		{"yaml quoted", "version", "name: x\nversion: \"1.0.0\"\n", "name: x\nversion: \"1.1.0\"\n", "", 2},
		{"other value", "VERSION", "VERSION = 1.0.1\n", "", "no line sets VERSION to 1.0.0", 0},
		{"two lines", "VERSION", "VERSION = 1.0.0\nVERSION = 1.0.0\n", "", "VERSION is set to 1.0.0 on lines 1 and 2: move it by hand", 0},
	} {
		got, line, err := ReplaceValue([]byte(tt.in), tt.key, "1.0.0", "1.1.0")
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if string(got) != tt.want || line != tt.line || msg != tt.err {
			t.Errorf("%s: ReplaceValue = %q, %d, %q; want %q, %d, %q", tt.name, got, line, msg, tt.want, tt.line, tt.err)
		}
	}
}
