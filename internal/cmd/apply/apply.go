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
	"github.com/patchkit/patchkit/internal/untrusted"
)

// Options are the flags and dependencies of `patchkit apply`.
type Options struct {
	Factory *cmdutil.Factory
	Image   string
	Check   bool
	Out     string
	Ref     string
	// Force replaces a tree patchkit wrote to --out earlier.
	Force bool
}

// DefaultOut is where the patched tree goes without --out, under the root.
const DefaultOut = "_output/%s/src"

// NewCmdApply returns the apply command. runF replaces the run function in tests.
func NewCmdApply(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "apply [IMAGE] [--check] [--out DIR [--force]] [--ref REF]",
		Short: "Apply an image's patch series to its pinned upstream",
		Long: `Apply every patch of the image's series, in byte-wise name order, to the
pinned upstream ref (or --ref), as one 'git apply --whitespace=error' of the
glob would. Nothing is written unless the whole series applies; the patched
tree is then written atomically to --out (default _output/IMAGE/src).
--check writes nothing.

Without IMAGE, every unit of the repository is applied, each to its default
directory (or checked, with --check), and one unit that cannot be (its
upstream cannot be fetched) is reported on its own: the run exits with the
worst status.

The tree is exactly the patched upstream: a hidden ` + "`" + MarkerFile + "`" + ` file
beside it (NAME is the directory's name) records that patchkit wrote it. --out
replaces only a new or empty directory, or one patchkit wrote (with --force,
since it may have been edited since; the default directory needs no
--force). It never replaces a directory that holds the repository root or the
cache directory, nor one inside .git or the cache.`,
		Args: cobra.MaximumNArgs(1),
	}
	cmdutil.NewCommand(cmd, opts, runF, cmdutil.Staged(f, run), func(cmd *cobra.Command, args []string) error {
		if len(args) == 1 {
			opts.Image = args[0]
		} else if cmd.Flags().Changed("out") {
			return &cmdutil.UsageError{Err: errors.New("--out names the tree of one image: name the IMAGE")}
		}
		if opts.Check && cmd.Flags().Changed("out") {
			return &cmdutil.UsageError{Err: errors.New("--check and --out exclude each other")}
		}
		if opts.Force && !cmd.Flags().Changed("out") {
			return &cmdutil.UsageError{Err: errors.New("--force needs --out")}
		}
		return nil
	})
	cmd.Flags().BoolVar(&opts.Check, "check", false, "only check that the series applies; write nothing")
	cmd.Flags().StringVar(&opts.Out, "out", "", "directory to write the patched tree to (replaced atomically)")
	cmd.Flags().StringVar(&opts.Ref, "ref", "", "apply to this upstream ref instead of the pin")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace the tree patchkit wrote to --out earlier")
	return cmd
}

// run applies the image named, or every unit of the repository (apply
// with no IMAGE), each to its directory unless --check. Without IMAGE, a
// unit that cannot be applied (its spec does not load, its upstream cannot
// be fetched) is reported on its own, and the run exits with the worst
// status. A damaged cache is never a verdict on a patch: online it is
// repaired and the series applied again; offline it is exit 2.
func run(ctx context.Context, opts *Options, format report.Format, env pipeline.Env) error {
	f := opts.Factory
	env.Shallow = true // only the trees of the pin and --ref, not their history
	r := f.Runner(env)
	r.Ref, r.Repair = opts.Ref, true
	names := []string{opts.Image}
	if opts.Image == "" {
		var err error
		if names, err = f.Images(env.Root, nil); err != nil {
			return err
		}
		r.Alone = true
	}
	units, err := pipeline.Each(ctx, r, names, func(ctx context.Context, name string) (report.Apply, error) {
		target := outTarget{Dir: opts.Out, Root: env.Root, CacheDir: env.CacheDir, Explicit: opts.Out != "", Force: opts.Force}
		if target.Dir == "" {
			target.Dir = filepath.Join(env.Root, fmt.Sprintf(DefaultOut, name))
		}
		if !opts.Check {
			if err := target.Check(); err != nil {
				return report.Apply{}, err
			}
		}
		return pipeline.With(ctx, r, name, func(_ context.Context, im *pipeline.Image) (report.Apply, error) {
			return applyImage(im, opts.Check, target)
		})
	})
	if err != nil {
		return err
	}
	results := make([]report.Apply, 0, len(units))
	worst := pipeline.Worst(units)
	for _, u := range units {
		if u.Err != nil {
			results = append(results, report.Apply{Image: u.Name, Unit: u.Dir, Error: untrusted.Error(u.Err), ExitCode: cmdutil.ExitCode(u.Err)})
			continue
		}
		if !u.Result.OK {
			worst = max(worst, cmdutil.ExitFindings)
		}
		results = append(results, u.Result)
	}
	if err := report.RenderApply(f.IO.Out, format, results, opts.Image != ""); err != nil {
		return err
	}
	return diag.Exit(worst)
}

// applyImage applies the series and, unless check, writes the tree. It
// prints nothing.
func applyImage(im *pipeline.Image, check bool, target outTarget) (report.Apply, error) {
	res, src, err := im.Apply()
	if err != nil {
		return report.Apply{}, err
	}
	out := report.Apply{
		Image:    im.Name,
		Unit:     im.Spec.Dir,
		Upstream: report.UpstreamRef{URL: im.URL, Ref: im.Ref, Commit: im.Commit},
		OK:       res.OK,
		Patches:  res.Patches,
	}
	if res.OK && !check {
		if err := target.Write(src, res.Changes); err != nil {
			return report.Apply{}, fmt.Errorf("writing patched tree: %w", err)
		}
		out.Out = target.Dir
	}
	return out, nil
}
