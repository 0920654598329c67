// Package cmdtest runs patchkit's command tree in-process for the tests of
// the command packages.
package cmdtest

import (
	"bytes"
	"context"
	"testing"

	"github.com/spf13/cobra"

	"github.com/patchkit/patchkit/internal/cmdutil"
)

// Run builds the command tree with newRoot (root.NewCmdRoot, or a tree with
// commands swapped in) on a Factory writing to buffers, runs it with args and
// returns the exit code main would return, stdout and stderr. An error that
// is not a finding ends stderr as main reports it: "patchkit: <error>".
func Run(tb testing.TB, newRoot func(*cmdutil.Factory) *cobra.Command, args ...string) (code int, stdout, stderr string) {
	tb.Helper()
	return run(newRoot, false, args)
}

// RunAll is Run, but a finding's error ends stderr too.
func RunAll(tb testing.TB, newRoot func(*cmdutil.Factory) *cobra.Command, args ...string) (code int, stdout, stderr string) {
	tb.Helper()
	return run(newRoot, true, args)
}

func run(newRoot func(*cmdutil.Factory) *cobra.Command, findings bool, args []string) (int, string, string) {
	var out, errOut bytes.Buffer
	f := &cmdutil.Factory{IO: cmdutil.Test(&out, &errOut)}
	cmd := newRoot(f)
	cmd.SetArgs(args)
	err := cmd.Execute()
	if err != nil && (findings || cmdutil.ExitCode(err) != cmdutil.ExitFindings) {
		errOut.WriteString("patchkit: " + err.Error() + "\n")
	}
	return cmdutil.ExitCode(err), out.String(), errOut.String()
}

// Exec runs one command, the one newCmd builds on f, with args, as the root
// runs its verbs (usage and errors silenced), writing to buffers: f.IO is
// replaced. It returns the exit code, stdout, stderr and the command's error.
func Exec(ctx context.Context, f *cmdutil.Factory, newCmd func(*cmdutil.Factory) *cobra.Command, args ...string) (code int, stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	f.IO = cmdutil.Test(&out, &errOut)
	cmd := newCmd(f)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err = cmd.ExecuteContext(ctx)
	return cmdutil.ExitCode(err), out.String(), errOut.String(), err
}
