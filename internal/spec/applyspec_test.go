package spec

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
)

const applyBase = "upstream: {url: file:///x, ref: v1}\npatches: ./patches\n"

func TestLoadApply(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "images/x/patches"), 0o755)
	os.WriteFile(filepath.Join(root, "images/x/patches/series"), []byte("a.patch\n"), 0o644)
	os.WriteFile(filepath.Join(root, "images/x/order"), []byte("a.patch\n"), 0o644)
	tests := []struct {
		name string
		yaml string
		want Apply
		// strip and directory the args give to the patches mapping
		strip     int
		directory string
		recount   bool
	}{
		{name: "default: git apply --whitespace=error of the glob", yaml: "",
			want: Apply{Tool: ToolGitApply, Order: OrderGlob, Whitespace: WhitespaceError}},
		{name: "git am as eks-distro runs it", yaml: "apply:\n  tool: git-am\n  args: [--committer-date-is-author-date]\n",
			want: Apply{Tool: ToolGitAm, Args: []string{"--committer-date-is-author-date"}, Order: OrderGlob, Whitespace: WhitespaceWarn}},
		{name: "git am --whitespace=error -p2 --keep-cr", yaml: "apply:\n  tool: git-am\n  args: [--whitespace=error, -p2, --keep-cr]\n",
			want:  Apply{Tool: ToolGitAm, Args: []string{"--whitespace=error", "-p2", "--keep-cr"}, Order: OrderGlob, Whitespace: WhitespaceError, KeepCR: true},
			strip: 2},
		{name: "git apply --whitespace=nowarn --directory --recount", yaml: "apply:\n  args: [--whitespace=nowarn, --directory=vendor/x, --recount, -p", // continued below
			want: Apply{Tool: ToolGitApply, Order: OrderGlob, Whitespace: WhitespaceNowarn}},
		{name: "patch -p1 -F 3", yaml: "apply:\n  tool: patch\n  args: [-p1, -F, \"3\", -N]\n",
			want:  Apply{Tool: ToolPatch, Args: []string{"-p1", "-F", "3", "-N"}, Order: OrderGlob, Whitespace: WhitespaceNowarn, Fuzz: 3},
			strip: 1},
		{name: "patch --strip=1 keeps the default fuzz", yaml: "apply:\n  tool: patch\n  args: [--strip=1]\n",
			want:  Apply{Tool: ToolPatch, Args: []string{"--strip=1"}, Order: OrderGlob, Whitespace: WhitespaceNowarn, Fuzz: DefaultFuzz},
			strip: 1},
		{name: "patch -l", yaml: "apply:\n  tool: patch\n  args: [-p1, -l]\n",
			want:  Apply{Tool: ToolPatch, Args: []string{"-p1", "-l"}, Order: OrderGlob, Whitespace: WhitespaceNowarn, Fuzz: DefaultFuzz, Loose: true},
			strip: 1},
		{name: "order series, default file in the patch directory", yaml: "apply:\n  order: series\n",
			want: Apply{Tool: ToolGitApply, Order: OrderSeries, Series: "images/x/patches/series", Whitespace: WhitespaceError}},
		{name: "order series, its own file", yaml: "apply:\n  order: series\n  series: ./order\n",
			want: Apply{Tool: ToolGitApply, Order: OrderSeries, Series: "images/x/order", Whitespace: WhitespaceError}},
	}
	tests[3].yaml = "apply:\n  args: [--whitespace=nowarn, --directory=vendor/x, --recount, -p3]\n"
	tests[3].want.Args = []string{"--whitespace=nowarn", "--directory=vendor/x", "--recount", "-p3"}
	tests[3].strip, tests[3].directory, tests[3].recount = 3, "vendor/x", true
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := LoadUnitReader(strings.NewReader(applyBase+tt.yaml), root, Unit{Name: "x", Dir: "images/x"})
			if err != nil {
				t.Fatalf("LoadUnitReader() error = %v", err)
			}
			a := s.Apply
			if a.Tool != tt.want.Tool || a.Order != tt.want.Order || a.Series != tt.want.Series || a.Whitespace != tt.want.Whitespace ||
				a.Fuzz != tt.want.Fuzz || a.KeepCR != tt.want.KeepCR || a.Loose != tt.want.Loose || !slices.Equal(a.Args, tt.want.Args) {
				t.Errorf("Apply = %+v, want %+v", a, tt.want)
			}
			if s.Series.Strip != tt.strip || s.Series.Directory != tt.directory || s.Series.Recount != tt.recount {
				t.Errorf("Series = %+v, want strip %d, directory %q, recount %v", s.Series, tt.strip, tt.directory, tt.recount)
			}
		})
	}
}

func TestLoadApplyErrors(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		name, yaml string
		line       int
		key, msg   string
	}{
		{"unknown tool", "apply:\n  tool: quilt\n", 4, "apply.tool", `"quilt" is not one of git-apply, git-am, patch`},
		{"unknown key", "apply:\n  tools: git-am\n", 4, "apply.tools", "unknown key (known keys here: tool, args, order, series)"},
		{"unknown order", "apply:\n  order: mtime\n", 4, "apply.order", `"mtime" is not one of glob, series`},
		{"unknown git am flag", "apply:\n  tool: git-am\n  args: [--committer-date-is-author-date, --frobnicate]\n", 5, "apply.args[1]", "--frobnicate: not a flag patchkit models for git-am"},
		{"git am -3", "apply:\n  tool: git-am\n  args:\n    - -3\n", 6, "apply.args[0]", "patchkit cannot model a 3-way merge"},
		{"git apply --3way", "apply:\n  args: [--3way]\n", 4, "apply.args[0]", "patchkit cannot model a 3-way merge"},
		{"whitespace fix", "apply:\n  args: [--whitespace=fix]\n", 4, "apply.args[0]", "patchkit does not model it"},
		{"whitespace typo", "apply:\n  args: [--whitespace=eror]\n", 4, "apply.args[0]", "want --whitespace=error, error-all, warn or nowarn"},
		{"-p0", "apply:\n  tool: git-am\n  args: [-p0]\n", 5, "apply.args[0]", "-p0 is not supported"},
		{"patch without -p", "apply:\n  tool: patch\n", 4, "apply.tool", "patch without -p<n> keeps only each file's base name"},
		{"patch -R", "apply:\n  tool: patch\n  args: [-p1, -R]\n", 5, "apply.args[1]", "-R: not a flag patchkit models for patch"},
		{"patch bad fuzz", "apply:\n  tool: patch\n  args: [-p1, --fuzz=x]\n", 5, "apply.args[1]", "want a fuzz factor"},
		{"-p contradicts patches.strip", "upstream: {url: file:///x, ref: v1}\npatches: {dir: ./patches, strip: 2}\napply:\n  args: [-p1]\n", 4, "apply.args[0]", "-p1 contradicts patches.strip: 2 on line 2"},
		{"series without order series", "apply:\n  series: ./patches/series\n", 4, "apply.series", "is read only with order: series"},
		{"series file missing", "apply:\n  order: series\n", 4, "apply.order", "series file images/x/patches/series does not exist"},
		{"series file leaves the repository", "apply:\n  order: series\n  series: ../../../series\n", 5, "apply.series", "leaves the repository"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := applyBase + tt.yaml
			if strings.HasPrefix(tt.yaml, "upstream:") {
				doc = tt.yaml
			}
			_, err := LoadUnitReader(strings.NewReader(doc), root, Unit{Name: "x", Dir: "images/x"})
			var ie *diag.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("LoadUnitReader() error = %v, want bad input", err)
			}
			if ie.File != "images/x/patchkit.yaml" || ie.Line != tt.line || ie.Key != tt.key || !strings.Contains(ie.Msg, tt.msg) {
				t.Errorf("LoadUnitReader() = %s:%d key %s: %s, want line %d key %s containing %q", ie.File, ie.Line, ie.Key, ie.Msg, tt.line, tt.key, tt.msg)
			}
		})
	}
}
