// Command patchkit carries patch series against pinned upstream releases and
// ships container images built from the patched source.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/patchkit/patchkit/internal/cmd/root"
	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/report"
)

func main() {
	os.Exit(run())
}

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	io := cmdutil.System()
	cmd := root.NewCmdRoot(&cmdutil.Factory{IO: io})
	err := cmd.ExecuteContext(ctx)
	if err != nil && !errors.Is(err, diag.ErrFindings) {
		fmt.Fprintln(io.ErrOut, "patchkit: "+report.Redact(err.Error()))
	}
	return cmdutil.ExitCode(err)
}
