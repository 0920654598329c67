package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Registry pushes images to a registry repository, retrying transient
// errors (a 5xx or 429 answer, a refused or reset connection, a timeout)
// with exponential backoff. A retried push resends only the blobs the
// registry still lacks.
type Registry struct {
	repo     name.Repository
	auth     authn.Authenticator
	keychain authn.Keychain
	attempts int
	backoff  time.Duration
	extra    []remote.Option
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

// WithRetry makes at most attempts tries of a push, waiting first, then
// twice as long before each next try. The default is 5 attempts from 1s
// (1+2+4+8 seconds of waiting at most).
func WithRetry(attempts int, first time.Duration) RegistryOption {
	return func(r *Registry) { r.attempts, r.backoff = attempts, first }
}

// WithRemoteOptions adds go-containerregistry options (a transport, a user agent).
func WithRemoteOptions(opts ...remote.Option) RegistryOption {
	return func(r *Registry) { r.extra = append(r.extra, opts...) }
}

// NewRegistry returns a publisher to repository (registry/path, e.g.
// ghcr.io/cozystack/cozystack/kubeovn). Loopback and private registries
// (localhost, 127.0.0.1, 10.x) are spoken to over plain HTTP.
func NewRegistry(repository string, opts ...RegistryOption) (*Registry, error) {
	repo, err := name.NewRepository(repository)
	if err != nil {
		return nil, fmt.Errorf("parsing repository %q: %w", repository, err)
	}
	r := &Registry{repo: repo, keychain: authn.DefaultKeychain, attempts: 5, backoff: time.Second}
	for _, o := range opts {
		o(r)
	}
	if r.attempts < 1 {
		r.attempts = 1
	}
	return r, nil
}

// Repository is the repository pushed to.
func (r *Registry) Repository() string { return r.repo.String() }

func (r *Registry) options(ctx context.Context) []remote.Option {
	opts := []remote.Option{
		remote.WithContext(ctx),
		// The retries are ours, of the whole push; go-containerregistry's
		// own would multiply them.
		remote.WithRetryBackoff(remote.Backoff{Steps: 1, Duration: time.Millisecond}),
	}
	if r.auth != nil {
		opts = append(opts, remote.WithAuth(r.auth))
	} else if r.keychain != nil {
		opts = append(opts, remote.WithAuthFromKeychain(r.keychain))
	}
	return append(opts, r.extra...)
}

// Publish implements Publisher: it pushes res.Image as repository:tag. An
// image the builder already pushed there is only checked.
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
		err := r.retry(ctx, ref, func() error {
			d, err := remote.Head(ref, r.options(ctx)...)
			if err == nil && d.Digest != res.Digest {
				return fmt.Errorf("%s is %s, the builder reported %s", ref, d.Digest, res.Digest)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		return pub, nil
	}
	if err := r.retry(ctx, ref, func() error { return remote.Write(ref, res.Image, r.options(ctx)...) }); err != nil {
		return nil, err
	}
	return pub, nil
}

// retry runs push until it succeeds, fails for good, or runs out of attempts.
func (r *Registry) retry(ctx context.Context, ref name.Reference, push func() error) error {
	wait := r.backoff
	var err error
	for attempt := 1; ; attempt++ {
		err = push()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("pushing %s: interrupted: %w", ref, ctx.Err())
		}
		if !Transient(err) {
			return fmt.Errorf("pushing %s: %w", ref, err)
		}
		if attempt >= r.attempts {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("pushing %s: interrupted: %w", ref, ctx.Err())
		case <-t.C:
		}
		wait *= 2
	}
	hint := ""
	if errors.Is(err, syscall.ECONNREFUSED) {
		hint = " (is the registry running, and is the address right?)"
	}
	return fmt.Errorf("pushing %s: gave up after %d attempts%s: %w", ref, r.attempts, hint, err)
}

// Transient reports whether a registry error may go away on its own: a 5xx
// or 429 answer, a refused or reset connection, a timeout, a cut stream.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
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
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
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
