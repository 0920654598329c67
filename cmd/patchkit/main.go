// Command patchkit carries patch series against pinned upstream releases and
// ships container images built from the patched source.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/patchkit/patchkit/internal/cmd/root"
	"github.com/patchkit/patchkit/internal/cmdutil"
)

func main() {
	os.Exit(run())
}

// run executes the command line; cmdutil.Finish prints an error (through
// untrusted.Text, on stderr and in the output format on stdout) and maps it
// to the exit code.
func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f := &cmdutil.Factory{IO: cmdutil.System()}
	err := root.NewCmdRoot(f).ExecuteContext(ctx)
	return cmdutil.Finish(f, os.Args[1:], err)
}
