package cmdutil

import (
	"context"

	"github.com/spf13/cobra"
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
