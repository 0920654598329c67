package cmdutil

import (
	"fmt"

	"github.com/patchkit/patchkit/internal/chart"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/txn"
	"github.com/patchkit/patchkit/internal/untrusted"
)

// Runner is the pipeline.Runner of a per-image command on env: a unit that
// fails alone is said on stderr as it fails ("patchkit: NAME: message").
func (f *Factory) Runner(env pipeline.Env) pipeline.Runner {
	return pipeline.Runner{Env: env, Failed: func(name string, err error) {
		fmt.Fprintf(f.IO.ErrOut, "patchkit: %s: %s\n", name, untrusted.Error(err))
	}}
}

// Select splits the IMAGE arguments of a command that takes image and
// chart units into the chart units named and the images (chart.SplitArgs);
// without arguments, every chart unit and every image unit of d.
// --upstream-url needs exactly one IMAGE (Factory.ImagesIn).
func (f *Factory) Select(d *spec.Discovery, args []string) ([]*chart.Unit, []string, error) {
	charts, imageArgs, err := chart.SplitArgs(d, args)
	if err != nil {
		return nil, nil, err
	}
	var images []string
	if len(args) == 0 || len(imageArgs) > 0 {
		if images, err = f.ImagesIn(d, imageArgs); err != nil {
			return nil, nil, err
		}
	}
	return charts, images, nil
}

// SelectAlone is Select for a command whose units fail alone (verify,
// obsolete-check): without arguments, a chart spec entry or file that does
// not load is returned in bad (chart.SplitArgsAlone), for the command to
// report beside the other units, instead of ending the run.
func (f *Factory) SelectAlone(d *spec.Discovery, args []string) ([]*chart.Unit, []string, []chart.UnitError, error) {
	charts, imageArgs, bad, err := chart.SplitArgsAlone(d, args)
	if err != nil {
		return nil, nil, nil, err
	}
	var images []string
	if len(args) == 0 || len(imageArgs) > 0 {
		if images, err = f.ImagesIn(d, imageArgs); err != nil {
			return nil, nil, nil, err
		}
	}
	return charts, images, bad, nil
}

// Txn is the transaction options of a command's writes: a wait for the
// repository lock is said on stderr (LockNotice).
func (f *Factory) Txn() txn.Options {
	return txn.Options{Waiting: LockNotice(f.IO, f.LockTimeout), LockTimeout: f.LockTimeout}
}
