// Package stamp is the `patchkit stamp` command.
package stamp

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/release"
	"github.com/patchkit/patchkit/internal/report"
	"github.com/patchkit/patchkit/internal/spec"
	stampstage "github.com/patchkit/patchkit/internal/stamp"
)

// Options are the flags and dependencies of `patchkit stamp`.
type Options struct {
	Factory  *cmdutil.Factory
	Image    string
	Digest   string
	Registry string
	Tag      string
	// Getenv reads REGISTRY and IMAGE_TAG; os.Getenv by default.
	Getenv func(string) string
}

// NewCmdStamp returns the stamp command. runF replaces the run function in tests.
func NewCmdStamp(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f, Getenv: os.Getenv}
	cmd := &cobra.Command{
		Use:   "stamp IMAGE --digest sha256:...",
		Short: "Write an image digest into the spec's stamp targets",
		Long: `Write the digest into each stamp target of the image's spec. A YAML
target's key is a yq path (.global.images.x.tag, .args[0], .a["b.c"]); its
value is a format (tag@digest, digest, ref = registry/repository:tag@digest,
split = a mapping's repository, tag and digest) or a value template
(--image={{.Reference}}, {{.Registry}}/kamaji). A text target (no key) is a
file holding just the value.

Only the stamped values' bytes change, written as yq -i '.key = strenv(V)'
writes them; a target that cannot be edited that way (block scalar, tag,
anchor, alias, a flow mapping missing split keys) is refused with its file
and line (exit 2). stamp holds the repository lock (another patchkit
command that writes the repository is waited for; SIGINT or SIGTERM while
waiting writes nothing) while each file is re-read, edited and replaced,
all files as one transaction (mode and owner kept; symlinks in the
repository are written through); every target is checked before any file
is written. The stamp record goes beside the stamped file, or, for a file
inside a Helm chart, into the directory holding the chart.

The registry is --registry, else $REGISTRY; the tag is --tag, else
$IMAGE_TAG, else image.tag. A digest that is not sha256:<64 hex digits> is
refused (exit 2). Needs no network.`,
		Args: cobra.ExactArgs(1),
	}
	cmdutil.NewCommand(cmd, opts, runF, run, func(_ *cobra.Command, args []string) error {
		opts.Image = args[0]
		return nil
	})
	fl := cmd.Flags()
	fl.StringVar(&opts.Digest, "digest", "", "the image digest, sha256:<64 hex digits> (required)")
	fl.StringVar(&opts.Registry, "registry", "", "registry for the ref and split formats (default: $REGISTRY)")
	fl.StringVar(&opts.Tag, "tag", "", "image tag (default: $IMAGE_TAG, else image.tag)")
	cmd.MarkFlagRequired("digest")
	return cmd
}

func run(ctx context.Context, opts *Options) error {
	f := opts.Factory
	format, err := f.Format()
	if err != nil {
		return err
	}
	if err := stampstage.CheckDigest(opts.Digest); err != nil {
		return &diag.InputError{File: "--digest", Msg: "bad digest", Err: err}
	}
	root, err := f.ResolveRoot()
	if err != nil {
		return err
	}
	s, err := spec.Load(root, opts.Image)
	if err != nil {
		return err
	}
	target, err := release.ResolveTarget(s, opts.Registry, opts.Tag, opts.Getenv)
	if err != nil {
		return err
	}
	// The record names the series in the repository now: the digest was given.
	idents, err := pipeline.Idents(root, s)
	if err != nil {
		return err
	}
	v := target.Value(opts.Digest)
	v.Series = idents
	plan, err := stampstage.Prepare(root, s, v)
	if err != nil {
		return err
	}
	plan.Waiting = cmdutil.LockNotice(f.IO, f.LockTimeout)
	plan.LockTimeout = f.LockTimeout
	if err := plan.WriteContext(ctx); err != nil {
		return err
	}
	out := report.Stamp{Image: opts.Image, Digest: opts.Digest, Reference: target.Reference(opts.Digest), Stamped: plan.Changes}
	return report.RenderStamp(f.IO.Out, format, []report.Stamp{out}, true)
}
