package pipeline

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/gittest"
	"github.com/patchkit/patchkit/internal/spec"
)

// TestOpenRefusesAnUnreachableURL: an upstream URL that git would not
// fetch plainly (here a remote helper that runs a command, and an ssh host
// that reads as an option) is bad input naming where it was written: the
// spec's line, the Makefile's line it was read from, or --upstream-url.
// Nothing is run and nothing is written to the cache directory.
func TestOpenRefusesAnUnreachableURL(t *testing.T) {
	for _, tc := range []struct {
		name, spec, makefile, flag string
		file                       string
		line                       int
	}{
		{name: "spec", spec: "upstream:\n  url: \"ext::sh -c touch% /tmp/x\"\n  ref: v1\npatches: patches/img\n", file: "images/img/patchkit.yaml", line: 2},
		{name: "makefile", spec: "upstream:\n  ref: v1\n  url: {makefile-var: UPSTREAM, makefile: ./Makefile}\npatches: patches/img\n",
			makefile: "VERSION = 1\nUPSTREAM = ssh://-oProxyCommand=true/x\n", file: "images/img/Makefile", line: 2},
		{name: "flag", spec: "upstream:\n  url: https://example.invalid/x.git\n  ref: v1\npatches: patches/img\n", flag: "ext::sh -c true", file: "--upstream-url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			files := map[string]string{"images/img/patchkit.yaml": tc.spec, "patches/img/.keep": ""}
			if tc.makefile != "" {
				files["images/img/Makefile"] = tc.makefile
			}
			gittest.WriteFiles(t, root, files)
			s, err := spec.Load(root, "img")
			if err != nil {
				t.Fatalf("spec.Load: %v", err)
			}
			env := Env{Root: root, CacheDir: t.TempDir(), UpstreamURL: tc.flag}
			_, err = Open(context.Background(), env, s, "")
			var in *diag.InputError
			if !errors.As(err, &in) {
				t.Fatalf("Open = %v, want a *diag.InputError", err)
			}
			if in.File != tc.file || in.Line != tc.line {
				t.Errorf("Open's error names %s:%d, want %s:%d (%v)", in.File, in.Line, tc.file, tc.line, err)
			}
			if !strings.Contains(err.Error(), "remote helper") && !strings.Contains(err.Error(), "strange hostname") {
				t.Errorf("Open = %v, want it to say why", err)
			}
			if left, _ := os.ReadDir(env.CacheDir); len(left) != 0 {
				t.Errorf("the cache directory holds %d entries after a refused URL", len(left))
			}
		})
	}
}
