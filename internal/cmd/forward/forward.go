// Package forward is the `patchkit forward` command.
package forward

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/patchkit/patchkit/internal/cmdutil"
	"github.com/patchkit/patchkit/internal/diag"
	forwardstage "github.com/patchkit/patchkit/internal/forward"
	"github.com/patchkit/patchkit/internal/pipeline"
	"github.com/patchkit/patchkit/internal/report"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
)

// Options are the flags and dependencies of `patchkit forward`.
type Options struct {
	Factory *cmdutil.Factory
	// Patch is the patch file, relative to the repository root.
	Patch string
	// To is the upstream ref to carry it to (--to), default the upstream's
	// default branch (HEAD).
	To string
	// Out is the directory written (--out).
	Out string
	// Author is "Name <email>" (--author), default the header's Author.
	Author string
	// PR is the pull request URL to record as Forwarded: (--pr).
	PR string
	// WithTest adds the injected test files to the commit (--with-test).
	WithTest bool
}

// NewCmdForward returns the forward command. runF replaces the run function
// in tests.
func NewCmdForward(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "forward PATCH [--to REF] [--out DIR] [--author 'NAME <EMAIL>'] [--with-test] | forward PATCH --pr URL",
		Short: "Prepare the upstream pull request of an original change, and record it",
		Long: `Carry an original change (a patch whose Origin names no upstream commit or
PR) from the pin to the upstream's default branch (--to another ref), as
upgrade carries a patch: it applies there and is rendered at the new line
numbers, or a three-way merge rebases it, or it conflicts (exit 1, nothing
written). Then write into --out (default _output/forward under the root):

  NNNN-<subject>.patch   git format-patch output of the change on that
                         branch, authored by the Author: header (or --author),
                         dated SOURCE_DATE_EPOCH when set
  NNNN-<subject>.pr.md   the pull request body: Description, Bug, and the
                         regression test (Test:, and where the spec injects it)

--with-test adds the unit's injected test files (test.inject) to the commit
at their places in the tree, so the regression test goes upstream too.

The patches before PATCH in the series are applied at the pin first, so the
three-way merge starts from the state PATCH was written against.

Once the pull request is open, record it: forward PATCH --pr URL sets the
patch's Forwarded: header to URL, and patchkit status follows its state from
then on.

Exit codes: 0 written (or recorded); 1 the change conflicts on the branch;
2 bad input (a backport, no author, a PATCH in no unit's series).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Patch = args[0]
			if opts.PR != "" && (opts.To != "" || opts.Out != "" || opts.Author != "" || opts.WithTest) {
				return &cmdutil.UsageError{Err: errors.New("--pr records the URL only: it takes no --to, --out, --author or --with-test")}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return run(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.To, "to", "", "the upstream ref to carry the change to (default: the upstream's default branch)")
	cmd.Flags().StringVar(&opts.Out, "out", "", "the directory to write the format-patch file and the PR body into (default _output/forward)")
	cmd.Flags().StringVar(&opts.Author, "author", "", "the author of the commit, 'Name <email>' (default: the patch's Author: header)")
	cmd.Flags().BoolVar(&opts.WithTest, "with-test", false, "add the unit's injected test files (test.inject) to the commit, at their places in the tree")
	cmd.Flags().StringVar(&opts.PR, "pr", "", "record this pull request URL as the patch's Forwarded: header")
	return cmd
}

func run(ctx context.Context, opts *Options) error {
	f := opts.Factory
	format, env, err := f.Setup()
	if err != nil {
		return err
	}
	s, rel, err := unitOf(env.Root, opts.Patch)
	if err != nil {
		return err
	}
	if opts.PR != "" {
		return record(f, format, env.Root, s, rel, opts.PR)
	}
	im, err := pipeline.Prepare(ctx, env, s.Dir, "")
	if err != nil {
		return err
	}
	defer im.Close()
	index := -1
	for i, p := range im.Patches {
		if p.Path == rel {
			index = i
		}
	}
	if index < 0 {
		return &diag.InputError{File: rel, Msg: fmt.Sprintf("not a patch of the series of %s", s.Dir)}
	}
	to := opts.To
	if to == "" {
		to = "HEAD"
	}
	if err := im.Cache.Fetch(ctx); err != nil {
		return err
	}
	if err := im.Cache.Ensure(ctx, to); err != nil {
		return fmt.Errorf("--to %s: %w", to, err)
	}
	toCommit, err := im.Cache.Resolve(to)
	if err != nil {
		return fmt.Errorf("--to %s: %w", to, err)
	}
	if to == "HEAD" {
		// Name the default branch.
		if b := im.Cache.DefaultBranch(); b != "" {
			to = b
		}
	}
	date, err := sourceDate()
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	res, err := forwardstage.Prepare(ctx, forwardstage.Input{Cache: im.Cache, Spec: im.Spec, PinCommit: im.Commit,
		Patches: im.Patches, Index: index, To: to, ToCommit: toCommit, Author: opts.Author, Date: date,
		WithTest: opts.WithTest, Root: env.Root})
	if err != nil {
		return im.Cache.AsFault(err)
	}
	out := report.Forward{Result: res}
	if res.Mail == nil {
		if err := report.RenderForward(f.IO.Out, format, out); err != nil {
			return err
		}
		return diag.ErrFindings
	}
	dir := opts.Out
	if dir == "" {
		dir = filepath.Join(env.Root, "_output", "forward")
	}
	body := strings.TrimSuffix(res.Name, ".patch") + ".pr.md"
	for _, w := range []struct {
		name string
		data []byte
	}{{res.Name, res.Mail}, {body, []byte(res.Body)}} {
		file := filepath.Join(dir, w.name)
		if err := writeAtomic(file, w.data); err != nil {
			// Leave no half a submission: take back what this run wrote.
			for _, done := range out.Files {
				os.Remove(done)
			}
			return err
		}
		out.Files = append(out.Files, file)
	}
	return report.RenderForward(f.IO.Out, format, out)
}

// record sets Forwarded: url in the patch file.
func record(f *cmdutil.Factory, format report.Format, root string, s *spec.Spec, rel, url string) error {
	file := filepath.Join(root, filepath.FromSlash(rel))
	raw, err := os.ReadFile(file)
	if err != nil {
		return &diag.InputError{File: rel, Msg: "cannot read the patch", Err: err}
	}
	p, err := series.Parse(rel, raw, pipeline.SeriesOptions(s)...)
	if err != nil {
		return err
	}
	if p.IsReference() {
		return &diag.InputError{File: rel, Msg: "a reference to an upstream commit: there is nothing to forward"}
	}
	data, changed, err := forwardstage.SetForwarded(p, url)
	if err != nil {
		return err
	}
	if changed {
		if err := writeAtomic(file, data); err != nil {
			return err
		}
	}
	return report.RenderForward(f.IO.Out, format, report.Forward{Result: &forwardstage.Result{Patch: rel}, Forwarded: url, Changed: changed})
}

// unitOf finds the unit whose series holds patch (a path relative to the
// root, or an absolute path inside it).
func unitOf(root, patch string) (*spec.Spec, string, error) {
	rel := patch
	if filepath.IsAbs(patch) {
		r, err := filepath.Rel(root, patch)
		if err != nil || strings.HasPrefix(r, "..") {
			return nil, "", &cmdutil.UsageError{Err: fmt.Errorf("PATCH %s is outside the repository %s", patch, root)}
		}
		rel = r
	}
	rel = path.Clean(filepath.ToSlash(rel))
	dirs, err := spec.List(root)
	if err != nil {
		return nil, "", err
	}
	for _, d := range dirs {
		s, err := spec.Load(root, d)
		if err != nil {
			return nil, "", err
		}
		if path.Dir(rel) == path.Clean(s.Patches) {
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
				return nil, "", &diag.InputError{File: rel, Msg: "no such patch file", Err: err}
			}
			return s, rel, nil
		}
	}
	return nil, "", &diag.InputError{File: rel, Msg: "not in the patch directory of any unit"}
}

// sourceDate is SOURCE_DATE_EPOCH when set, else zero (now).
func sourceDate() (time.Time, error) {
	v := os.Getenv("SOURCE_DATE_EPOCH")
	if v == "" {
		return time.Time{}, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: want seconds since 1970", v)
	}
	return time.Unix(n, 0).UTC(), nil
}

// writeAtomic writes data to file through a temporary sibling renamed over
// it, creating the directory.
func writeAtomic(file string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if st, err := os.Stat(file); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}
