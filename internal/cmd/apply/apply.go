// Package apply is the `patchkit apply` command.
package apply

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/report"
	"github.com/patchkit/patchkit/internal/tree"
)

// Options are the flags and dependencies of `patchkit apply`.
type Options struct {
	Factory *cmdutil.Factory
	Image   string
	Check   bool
	Out     string
	Ref     string
}

// DefaultOut is where the patched tree goes without --out, under the root.
const DefaultOut = "_output/%s/src"

// NewCmdApply returns the apply command. runF replaces the run function in tests.
func NewCmdApply(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "apply IMAGE [--check] [--out DIR] [--ref REF]",
		Short: "Apply an image's patch series to its pinned upstream",
		Long: `Apply every patch of the image's series, in byte-wise name order, to the
pinned upstream ref (or --ref), as one 'git apply --whitespace=error' of the
glob would. Nothing is written unless the whole series applies; the patched
tree is then written atomically to --out (default _output/IMAGE/src).
--check writes nothing.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Image = args[0]
			if opts.Check && cmd.Flags().Changed("out") {
				return &cmdutil.UsageError{Err: errors.New("--check and --out exclude each other")}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return run(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Check, "check", false, "only check that the series applies; write nothing")
	cmd.Flags().StringVar(&opts.Out, "out", "", "directory to write the patched tree to (replaced atomically)")
	cmd.Flags().StringVar(&opts.Ref, "ref", "", "apply to this upstream ref instead of the pin")
	return cmd
}

func run(ctx context.Context, opts *Options) error {
	f := opts.Factory
	format, env, err := f.Setup()
	if err != nil {
		return err
	}
	root := env.Root
	im, err := pipeline.Prepare(ctx, env, opts.Image, opts.Ref)
	if err != nil {
		return err
	}
	defer im.Close()
	res, src, err := im.Apply()
	if err != nil {
		return err
	}
	if err := res.Hostile(); err != nil {
		return err
	}
	out := report.Apply{
		Image:    opts.Image,
		Unit:     im.Spec.Dir,
		Upstream: report.UpstreamRef{URL: im.URL, Ref: im.Ref, Commit: im.Commit},
		OK:       res.OK,
		Patches:  res.Patches,
	}
	if res.OK && !opts.Check {
		dir := opts.Out
		if dir == "" {
			dir = filepath.Join(root, fmt.Sprintf(DefaultOut, opts.Image))
		}
		if err := tree.WriteAtomic(dir, src, res.Changes); err != nil {
			return fmt.Errorf("writing patched tree: %w", err)
		}
		out.Out = dir
	}
	if err := report.RenderApply(f.IO.Out, format, []report.Apply{out}, true); err != nil {
		return err
	}
	if !res.OK {
		return diag.ErrFindings
	}
	return nil
}
