// Package pipeline wires the stages for one image: spec, upstream, series and
// apply. Commands call it; it passes typed results from stage to stage.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/patchkit/patchkit/internal/apply"
	"github.com/patchkit/patchkit/internal/backport"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/untrusted"
	"github.com/patchkit/patchkit/internal/upstream"
)

// Env is what every stage needs from the command line.
type Env struct {
	Root        string    // absolute repository root
	CacheDir    string    // upstream cache directory
	UpstreamURL string    // replaces upstream.url when set
	Offline     bool      // never touch the network
	Progress    io.Writer // fetch progress, io.Discard when not a terminal
	// Shallow: the command reads only the trees of the pin and --ref, not
	// their history, so a cache it clones fetches them at depth 1
	// (upstream.WithShallow).
	Shallow bool
	// Units, when set, finds units by name from its one tree walk, shared
	// by every unit of the run (a monorepo is walked once, not per unit).
	Units *spec.Discovery
	// FetchTimeout bounds how long a fetch may receive nothing, connecting
	// included (upstream.WithTimeouts); 0 is the default.
	FetchTimeout time.Duration
	// Step, when set, is told of each step of the unit's run as it starts
	// ("upstream URL at REF"): a command sets it per unit, for its
	// progress on a terminal (cmdutil.UnitProgress). Use At.
	Step func(step string)
	// prepared, when set, is told of each unit prepare opens the cache of
	// (a test seam: it counts the opens of a run).
	prepared func(name string)
}

// Image is an image unit prepared for applying: its spec, its upstream cache,
// the resolved ref and its parsed series.
type Image struct {
	Name    string // the unit as the command named it (Prepare's name)
	Spec    *spec.Spec
	URL     string // the upstream URL in use (--upstream-url or upstream.url)
	Cache   *upstream.Cache
	Ref     string // the ref applied to (the pin, or --ref)
	Commit  string // Ref resolved
	Patches []*series.Patch
}

// Close releases the upstream cache.
func (im *Image) Close() error {
	if im.Cache == nil {
		return nil
	}
	return im.Cache.Close()
}

// Prepare runs the stages before apply, in order:
//
//  1. spec: load and validate images/<name>/patchkit.yaml;
//  2. series: parse every patch (bad input fails here, before any network);
//  3. upstream: open the cache, fetching only what is missing;
//  4. resolve ref (empty means the pin) to a commit;
//  5. references: fill in each reference file with the diff of its upstream
//     commit, checked against its Patch-Id (see Materialize).
func Prepare(ctx context.Context, env Env, name, ref string) (*Image, error) {
	return prepare(ctx, env, name, ref, false)
}

// prepareEmptyOK is Prepare for a unit whose patch directory may not exist
// yet: its series is then empty (Runner.EmptySeries).
func prepareEmptyOK(ctx context.Context, env Env, name, ref string) (*Image, error) {
	return prepare(ctx, env, name, ref, true)
}

func prepare(ctx context.Context, env Env, name, ref string, emptyOK bool) (*Image, error) {
	s, err := env.load(name)
	if err != nil {
		return nil, err
	}
	var patches []*series.Patch
	dir := filepath.Join(env.Root, filepath.FromSlash(s.Patches))
	if _, serr := os.Stat(dir); serr == nil || !emptyOK {
		if patches, err = series.Load(dir, s.Patches, SeriesOptions(s)...); err != nil {
			return nil, err
		}
	}
	if env.prepared != nil {
		env.prepared(name)
	}
	im, err := Open(ctx, env, s, ref)
	if err != nil {
		return nil, err
	}
	im.Name, im.Patches = name, patches
	for i, p := range im.Patches {
		if im.Patches[i], err = im.Materialize(ctx, p); err != nil {
			im.Close()
			return nil, err
		}
	}
	return im, nil
}

// SeriesOptions are the series options the spec gives: strip level,
// directory and recount (spec.Series, also from apply.args), how the tool
// reads a file (git am reads mails) and the order (apply.order: a quilt
// series file or the glob).
func SeriesOptions(s *spec.Spec) []series.Option {
	o := series.Options{
		Strip:     s.Series.Strip,
		Directory: s.Series.Directory,
		Recount:   s.Series.Recount,
		Mail:      s.Apply.Mail(),
		KeepCR:    s.Apply.KeepCR,
	}
	if f := s.SeriesFile(); f != "" {
		rel, err := filepath.Rel(filepath.FromSlash(s.Patches), filepath.FromSlash(f))
		if err != nil {
			rel = f
		}
		o.SeriesFile, o.SeriesShown = filepath.ToSlash(rel), f
	}
	return []series.Option{series.WithOptions(o)}
}

// ApplyOptions are the apply options of the tool the spec's recipe runs
// (apply.tool and apply.args): its whitespace rule, and GNU patch's fuzz.
// Every command that applies the series as the build does uses them.
func ApplyOptions(s *spec.Spec) []apply.Option {
	return apply.ForTool(s.Apply.Whitespace, s.Apply.Fuzz, s.Apply.Loose)
}

// Open runs Prepare's stages 3 and 4 for a spec already loaded: it opens the
// upstream cache and resolves ref (empty means the pin). The Image has no
// Patches; callers that load the series themselves (verify reports every bad
// patch file instead of stopping at the first) set them.
func Open(ctx context.Context, env Env, s *spec.Spec, ref string) (*Image, error) {
	url, err := env.url(s)
	if err != nil {
		return nil, err
	}
	at := ref
	if at == "" {
		at = s.Upstream.Ref
	}
	env.At(fmt.Sprintf("upstream %s at %s", upstream.Redact(url), at))
	cache, err := upstream.Open(ctx, env.CacheDir, url,
		upstream.WithOffline(env.Offline),
		upstream.WithProgress(env.Progress),
		upstream.WithShallow(env.Shallow),
		upstream.WithTimeouts(min(env.FetchTimeout, upstream.DefaultConnectTimeout), env.FetchTimeout),
		upstream.WithBranches(s.Upstream.Branches...))
	if err != nil {
		return nil, err
	}
	im := &Image{Spec: s, URL: url, Cache: cache, Ref: ref}
	if im.Ref == "" {
		im.Ref = s.Upstream.Ref
	}
	if err := cache.Ensure(ctx, im.Ref); err != nil {
		cache.Close()
		return nil, refError(s, ref, err)
	}
	im.Commit, err = cache.Resolve(im.Ref)
	if err != nil {
		cache.Close()
		return nil, refError(s, ref, fmt.Errorf("resolving %s: %w", im.Ref, err))
	}
	return im, nil
}

// At tells env.Step, when set, that the unit's run is now at step.
func (env Env) At(step string) {
	if env.Step != nil {
		env.Step(step)
	}
}

// Materialize returns p, or, for a reference file (series.Patch.IsReference),
// the patch it stands for: its header and the diff of its upstream commit
// (backport.Show, which runs the git CLI on the cache), fetched by id when the
// cache lacks it. It is a *diag.InputError naming the file and line when
// upstream does not have the commit, and when the commit's patch-id is no
// longer the file's Patch-Id.
func (im *Image) Materialize(ctx context.Context, p *series.Patch) (*series.Patch, error) {
	if !p.IsReference() {
		return p, nil
	}
	ref := p.Reference
	if err := im.Cache.Ensure(ctx, ref.Commit); err != nil {
		if errors.Is(err, upstream.ErrRefNotFound) {
			return nil, &diag.InputError{File: p.Path, Line: ref.Line, Msg: fmt.Sprintf("upstream %s does not have commit %s", im.Cache.URL(), ref.Commit), Err: err}
		}
		return nil, fmt.Errorf("%s:%d: %w", p.Path, ref.Line, err)
	}
	if im.Cache.Boundary(ref.Commit) {
		// Its diff needs its parent, which a partial cache may lack.
		if err := im.Cache.Deepen(ctx); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", p.Path, ref.Line, err)
		}
	}
	diff, err := backport.Show(ctx, im.Cache, ref.Commit)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %w", p.Path, ref.Line, err)
	}
	return series.Materialize(p, diff)
}

// url is the upstream URL a unit uses: --upstream-url, else the spec's
// upstream.url. Its credentials never reach output, in any encoding, from
// now on (untrusted.AddURL). One that patchkit does not reach as git would
// (upstream.CheckURL) is bad input: a *diag.InputError naming the flag, or
// the spec's file and line (or the Makefile's or Dockerfile's line the URL
// was read from).
func (env Env) url(s *spec.Spec) (string, error) {
	url, file, line, key := s.Upstream.URL, s.File, s.Line("upstream.url"), "upstream.url"
	if src := s.Upstream.URLFrom; src != nil {
		file, line, key = src.File, src.Line, ""
	}
	if env.UpstreamURL != "" {
		url, file, line, key = env.UpstreamURL, "--upstream-url", 0, ""
	}
	untrusted.AddURL(url)
	if err := upstream.CheckURL(url); err != nil {
		return "", &diag.InputError{File: file, Line: line, Key: key, Msg: "upstream " + upstream.Redact(url), Err: err}
	}
	return url, nil
}

// refError makes a pin that upstream does not have bad input naming the spec's
// upstream.ref; a --ref the user typed is a bad invocation, also exit 2.
func refError(s *spec.Spec, flagRef string, err error) error {
	if !errors.Is(err, upstream.ErrRefNotFound) && !errors.Is(err, upstream.ErrAbbreviatedID) && !errors.Is(err, upstream.ErrNotCommit) {
		return err
	}
	if flagRef != "" {
		return &diag.InputError{File: "--ref", Msg: "bad ref", Err: err}
	}
	msg := "pin not found upstream"
	switch {
	case errors.Is(err, upstream.ErrAbbreviatedID):
		msg = "ambiguous pin"
	case errors.Is(err, upstream.ErrNotCommit):
		msg = "the pin is no commit"
	}
	return &diag.InputError{File: s.File, Line: s.Line("upstream.ref"), Key: "upstream.ref", Msg: msg, Err: err}
}

// Apply applies the series to the resolved ref in memory. Nothing is written.
// An upstream tree that could not be read (a damaged cache) is an error, never
// a verdict on a patch: res.Err comes back as err. So is a hostile patch
// (apply.Result.Hostile: bad input, exit 2), never a mere finding.
func (im *Image) Apply() (*apply.Result, *upstream.Snapshot, error) {
	src, err := im.Cache.Source(im.Commit)
	if err != nil {
		return nil, nil, err
	}
	res := apply.Series(src, im.Patches, ApplyOptions(im.Spec)...)
	if res.Err != nil {
		return nil, nil, res.Err
	}
	if err := res.Hostile(); err != nil {
		return nil, nil, err
	}
	return res, src, nil
}

// Idents names the series of s as it is in the repository now
// (series.Idents), without opening its upstream: what `patchkit stamp`
// records beside the digest it was given.
func Idents(root string, s *spec.Spec) ([]series.Ident, error) {
	patches, err := series.Load(filepath.Join(root, filepath.FromSlash(s.Patches)), s.Patches, SeriesOptions(s)...)
	if err != nil {
		return nil, err
	}
	return series.Idents(patches), nil
}
