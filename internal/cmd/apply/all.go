package apply

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/report"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/untrusted"
	"github.com/patchkit/patchkit/internal/upstream"
)

// runAll applies every unit of the repository (apply with no IMAGE), each to
// its default directory unless --check. A unit that cannot be applied (its
// spec does not load, its upstream cannot be fetched) is reported on its
// own, and the run exits with the worst status.
func runAll(ctx context.Context, opts *Options) error {
	f := opts.Factory
	format, env, err := f.Setup()
	if err != nil {
		return err
	}
	env.Shallow = true
	images, err := f.Images(env.Root, nil)
	if err != nil {
		return err
	}
	var results []report.Apply
	worst := cmdutil.ExitOK
	for _, name := range images {
		one := *opts
		one.Image = name
		target := outTarget{Dir: filepath.Join(env.Root, fmt.Sprintf(DefaultOut, name)), Root: env.Root, CacheDir: env.CacheDir}
		var out report.Apply
		err := func() error {
			if !opts.Check {
				if err := target.Check(); err != nil {
					return err
				}
			}
			return upstream.RetryRepaired(ctx, func() error {
				var err error
				out, err = applyImage(ctx, env, &one, target)
				return err
			})
		}()
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			code := cmdutil.ExitCode(err)
			worst = max(worst, code)
			fmt.Fprintf(f.IO.ErrOut, "patchkit: %s: %s\n", name, untrusted.Error(err))
			unit := ""
			if u, ferr := spec.Find(env.Root, name); ferr == nil {
				unit = u.Dir
			}
			results = append(results, report.Apply{Image: name, Unit: unit, Error: untrusted.Error(err), ExitCode: code})
			continue
		}
		if !out.OK {
			worst = max(worst, cmdutil.ExitFindings)
		}
		results = append(results, out)
	}
	if err := report.RenderApply(f.IO.Out, format, results, false); err != nil {
		return err
	}
	switch worst {
	case cmdutil.ExitOK:
		return nil
	case cmdutil.ExitFindings:
		return diag.ErrFindings
	}
	return diag.ErrReported
}
