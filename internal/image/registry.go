package image

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/patchkit/patchkit/internal/httpretry"
)

// Registry pushes images to a registry repository and reads each back
// before it counts as published.
//
// Every request has a connect and a response-header timeout, and one that
// failed transiently (a 408, 429, 5xx answer; a refused, reset or cut
// connection; a timeout) is retried with exponential backoff, honouring a
// Retry-After up to MaxBackoff. A push that still fails transiently is
// retried as a whole, resending only the blobs the registry lacks; the
// whole, readback included, is bounded by the push timeout.
type Registry struct {
	repo        name.Repository
	auth        authn.Authenticator
	keychain    authn.Keychain
	attempts    int
	backoff     time.Duration
	reqTimeout  time.Duration
	pushTimeout time.Duration
	sleep       sleeper
	transport   http.RoundTripper
	extra       []remote.Option
}

var _ Publisher = (*Registry)(nil)

// RegistryOption configures NewRegistry.
type RegistryOption func(*Registry)

// WithAuth authenticates with auth. It replaces the default keychain.
func WithAuth(auth authn.Authenticator) RegistryOption {
	return func(r *Registry) { r.auth, r.keychain = auth, nil }
}

// WithKeychain finds credentials in kc. The default is authn.DefaultKeychain:
// the docker and podman config files.
func WithKeychain(kc authn.Keychain) RegistryOption {
	return func(r *Registry) { r.keychain, r.auth = kc, nil }
}

// WithRetry makes at most attempts tries of each request, and of the whole
// push, waiting first, then twice as long before each next try, up to
// MaxBackoff. The default is DefaultAttempts from DefaultBackoff.
func WithRetry(attempts int, first time.Duration) RegistryOption {
	return func(r *Registry) { r.attempts, r.backoff = attempts, first }
}

// WithTimeouts sets the request timeout (connecting, and waiting for an
// answer's headers) and the push timeout (the whole push with its retries
// and the readback). Zero keeps a default: DefaultRequestTimeout,
// DefaultPushTimeout.
func WithTimeouts(request, push time.Duration) RegistryOption {
	return func(r *Registry) {
		if request > 0 {
			r.reqTimeout = request
		}
		if push > 0 {
			r.pushTimeout = push
		}
	}
}

// WithRemoteOptions adds go-containerregistry options (a user agent).
func WithRemoteOptions(opts ...remote.Option) RegistryOption {
	return func(r *Registry) { r.extra = append(r.extra, opts...) }
}

// withSleep replaces the waits between retries: the tests record them.
func withSleep(s sleeper) RegistryOption {
	return func(r *Registry) { r.sleep = s }
}

// NewRegistry returns a publisher to repository (registry/path, e.g.
// ghcr.io/cozystack/cozystack/kubeovn). Loopback and private registries
// (localhost, 127.0.0.1, 10.x) are spoken to over plain HTTP.
func NewRegistry(repository string, opts ...RegistryOption) (*Registry, error) {
	repo, err := name.NewRepository(repository)
	if err != nil {
		return nil, fmt.Errorf("parsing repository %q: %w", repository, err)
	}
	r := &Registry{
		repo: repo, keychain: authn.DefaultKeychain, attempts: DefaultAttempts, backoff: DefaultBackoff,
		reqTimeout: DefaultRequestTimeout, pushTimeout: DefaultPushTimeout, sleep: httpretry.Sleep,
	}
	for _, o := range opts {
		o(r)
	}
	if r.attempts < 1 {
		r.attempts = 1
	}
	if r.backoff <= 0 {
		r.backoff = DefaultBackoff
	}
	r.transport = &retryTransport{
		inner: httpTransport(r.reqTimeout, r.reqTimeout), attempts: r.attempts,
		first: r.backoff, limit: MaxBackoff, sleep: r.sleep,
	}
	return r, nil
}

// Repository is the repository pushed to.
func (r *Registry) Repository() string { return r.repo.String() }

func (r *Registry) options(ctx context.Context) []remote.Option {
	opts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithTransport(r.transport),
		// Our transport retries each request; go-containerregistry retries
		// a blob upload or manifest PUT as a whole only where that left it
		// to them (stepRetry), and never a status on its own.
		// Its waits do not end with ctx: keep them short.
		remote.WithRetryBackoff(remote.Backoff{Duration: min(r.backoff, time.Second), Factor: 2, Steps: r.attempts, Cap: MaxBackoff}),
		remote.WithRetryPredicate(stepRetry),
		remote.WithRetryStatusCodes(),
	}
	if r.auth != nil {
		opts = append(opts, remote.WithAuth(r.auth))
	} else if r.keychain != nil {
		opts = append(opts, remote.WithAuthFromKeychain(r.keychain))
	}
	return append(opts, r.extra...)
}

// Publish implements Publisher: it pushes res.Image as repository:tag (an
// image the builder already pushed there is not pushed again), then reads
// the manifest back by digest and checks the tag names it. Only then is it
// published: a registry that acknowledged a manifest it does not serve, or
// serves other bytes, fails the publish.
func (r *Registry) Publish(ctx context.Context, res *Result, tag string) (*Published, error) {
	ref, err := name.NewTag(r.repo.String() + ":" + tag)
	if err != nil {
		return nil, fmt.Errorf("tag %q: %w", tag, err)
	}
	pub := &Published{Repository: r.repo.String(), Tag: tag, Digest: res.Digest, Reference: ref.String() + "@" + res.Digest.String()}
	if res.Image == nil {
		if pushed, err := name.NewTag(res.Pushed); err != nil || pushed.Name() != ref.Name() {
			return nil, fmt.Errorf("the %s builder pushed to %q, not %s", res.Builder, res.Pushed, ref)
		}
	}
	pctx, cancel := context.WithTimeout(ctx, r.pushTimeout)
	defer cancel()
	err = r.retry(pctx, func() error {
		if res.Image != nil {
			if err := remote.Write(ref, res.Image, r.options(pctx)...); err != nil {
				return err
			}
		}
		return r.readBack(pctx, ref, res.Digest)
	})
	if err != nil {
		if ctx.Err() == nil && pctx.Err() != nil {
			return nil, fmt.Errorf("pushing %s: no success within the push timeout (%s): %w", ref, r.pushTimeout, err)
		}
		return nil, fmt.Errorf("pushing %s: %w", ref, err)
	}
	return pub, nil
}

// ErrReadBack is a registry that does not serve what it acknowledged.
var ErrReadBack = errors.New("the registry does not serve the pushed image")

// readBack GETs the manifest by digest, checks the bytes hash to want, and
// checks the tag resolves to want.
func (r *Registry) readBack(ctx context.Context, ref name.Tag, want v1.Hash) error {
	desc, err := remote.Get(ref.Context().Digest(want.String()), r.options(ctx)...)
	if err != nil {
		if Transient(err) || ctx.Err() != nil {
			return fmt.Errorf("reading back %s@%s: %w", ref.Context(), want, err)
		}
		return fmt.Errorf("%w: reading back %s@%s: %w", ErrReadBack, ref.Context(), want, err)
	}
	got, _, err := v1.SHA256(bytes.NewReader(desc.Manifest))
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("%w: %s@%s serves a manifest whose digest is %s", ErrReadBack, ref.Context(), want, got)
	}
	d, err := remote.Head(ref, r.options(ctx)...)
	if err != nil {
		return fmt.Errorf("reading back %s: %w", ref, err)
	}
	if d.Digest != want {
		return fmt.Errorf("%w: %s names %s, not the pushed %s", ErrReadBack, ref, d.Digest, want)
	}
	return nil
}

// retry runs push until it succeeds, fails for good, or runs out of
// attempts, waiting as retryTransport does between tries.
func (r *Registry) retry(ctx context.Context, push func() error) error {
	var err error
	for attempt := 1; ; attempt++ {
		err = push()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted: %w", err)
		}
		if !Transient(err) && !uploadLost(err) {
			return err
		}
		if attempt >= r.attempts {
			break
		}
		if serr := r.sleep(ctx, backoff(r.backoff, MaxBackoff, attempt)); serr != nil {
			return fmt.Errorf("%w, then interrupted: %w", err, serr)
		}
	}
	hint := ""
	if errors.Is(err, syscall.ECONNREFUSED) {
		hint = " (is the registry running, and is the address right?)"
	}
	return fmt.Errorf("gave up after %d attempts%s: %w", r.attempts, hint, err)
}

// Transient reports whether a registry error may go away on its own: a 5xx
// or 429 answer, a refused or reset connection, a timeout, a cut stream.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	var te *transport.Error
	if errors.As(err, &te) {
		switch te.StatusCode {
		case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
			http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return te.Temporary()
	}
	return transientNet(err)
}

// uploadLost reports whether err is the registry forgetting or refusing a
// blob upload session: what a retried request whose first answer was lost
// (a PATCH sent twice, a PUT of an upload already committed) leads to. A
// new push starts new sessions and skips the blobs already there.
func uploadLost(err error) bool {
	var te *transport.Error
	if !errors.As(err, &te) {
		return false
	}
	for _, d := range te.Errors {
		switch d.Code {
		case transport.BlobUploadUnknownErrorCode, transport.BlobUploadInvalidErrorCode, transport.DigestInvalidErrorCode:
			return true
		}
	}
	return false
}

// Fetch returns the digest the registry holds for ref: what a stamp must match.
func Fetch(ctx context.Context, ref string, opts ...remote.Option) (v1.Hash, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return v1.Hash{}, err
	}
	d, err := remote.Head(r, append([]remote.Option{remote.WithContext(ctx)}, opts...)...)
	if err != nil {
		return v1.Hash{}, err
	}
	return d.Digest, nil
}
