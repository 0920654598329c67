package cmdutil

import (
	"github.com/spf13/cobra"

	"github.com/patchkit/patchkit/internal/txn"
)

// The global flags, one function per concern. root registers them on the
// patchkit command, so that every verb has them; the Factory holds their
// values and resolves them (Format, ResolveRoot, Env, Setup).

// AddOutputFlag registers -o/--output, the output format (Format).
func (f *Factory) AddOutputFlag(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVarP(&f.Output, "output", "o", "text", "output format: text, json, markdown or github (status also html)")
}

// AddRootFlag registers --root, the repository root (ResolveRoot), and
// --lock-timeout, the wait for its lock (Txn).
func (f *Factory) AddRootFlag(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&f.Root, "root", ".", "repository root holding images/ and patches/")
	cmd.PersistentFlags().DurationVar(&f.LockTimeout, "lock-timeout", txn.DefaultLockTimeout, "how long a writing command waits for the repository lock another process holds")
}

// AddUpstreamFlags registers the upstream cache's flags: --cache-dir,
// --upstream-url (one IMAGE only: Images), --offline and --fetch-timeout
// (Env).
func (f *Factory) AddUpstreamFlags(cmd *cobra.Command) {
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.CacheDir, "cache-dir", "", "upstream cache directory (default: the user's cache dir/patchkit)")
	pf.StringVar(&f.UpstreamURL, "upstream-url", "", "replace upstream.url of the spec (one IMAGE only)")
	pf.BoolVar(&f.Offline, "offline", false, "never touch the network; fail if the cache lacks a ref")
	pf.DurationVar(&f.FetchTimeout, "fetch-timeout", 0, "give up a git fetch that receives nothing for this long, connecting included, and an HTTP request (GitHub API, Helm repository, chart archive) whose answer is not complete within it (defaults: 60s, 30s, 2m; or PATCHKIT_FETCH_TIMEOUT)")
}
