package cmdutil

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/report"
)

// NewCommand finishes cmd the way every verb is built (gh's
// NewCmdX(f, runF)): its RunE first calls bind, which puts the arguments
// into opts and checks the flags (nil: nothing to do), then runF when a
// test gave one, else run.
func NewCommand[O any](cmd *cobra.Command, opts *O, runF, run func(context.Context, *O) error, bind func(cmd *cobra.Command, args []string) error) *cobra.Command {
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if bind != nil {
			if err := bind(cmd, args); err != nil {
				return err
			}
		}
		if runF != nil {
			return runF(cmd.Context(), opts)
		}
		return run(cmd.Context(), opts)
	}
	return cmd
}

// Staged adapts the run of a command that runs the stages into
// NewCommand's run: the output format and the Env are resolved first
// (Setup), and a bad -o, --root or --fetch-timeout ends the run before it.
func Staged[O any](f *Factory, run func(ctx context.Context, opts *O, format report.Format, env pipeline.Env) error) func(context.Context, *O) error {
	return func(ctx context.Context, opts *O) error {
		format, env, err := f.Setup()
		if err != nil {
			return err
		}
		return run(ctx, opts, format, env)
	}
}
