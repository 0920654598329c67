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

// Txn is the transaction options of a command's writes: a wait for the
// repository lock is said on stderr (LockNotice).
func (f *Factory) Txn() txn.Options {
	return txn.Options{Waiting: LockNotice(f.IO, f.LockTimeout), LockTimeout: f.LockTimeout}
}
