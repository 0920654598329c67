// Command gendocs writes the CLI reference, docs/cli/*.md, from the cobra
// command tree. `make docs` runs it; `make lint` fails when it is stale.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra/doc"

	"github.com/patchkit/patchkit/internal/cmd/root"
	"github.com/patchkit/patchkit/internal/cmdutil"
)

func main() {
	dir := "docs/cli"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	old, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	for _, f := range old {
		os.Remove(f)
	}
	cmd := root.NewCmdRoot(&cmdutil.Factory{IO: cmdutil.Test(io.Discard, io.Discard)})
	cmd.DisableAutoGenTag = true
	if err := doc.GenMarkdownTree(cmd, dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
