package untrusted

import (
	"io"
	"net/url"
	"sort"
	"strings"
)

// HideURL hides rawURL's credentials in s, for a caller that holds the URL
// a message may carry (an upstream's, with a token in its userinfo) before
// the message leaves it as an error or as progress: rawURL itself becomes
// URL(rawURL), and its password and a user name long enough to be a token
// (not an ssh user name), as given, escaped or unescaped, become Mask. It
// needs no registration (AddURL) and hides nothing else: what is printed
// still goes through Text.
func HideURL(s, rawURL string) string {
	if red := URL(rawURL); red != rawURL {
		s = strings.ReplaceAll(s, rawURL, red)
	}
	for _, f := range urlSecrets(rawURL) {
		s = strings.ReplaceAll(s, f, Mask)
	}
	return s
}

// urlSecrets lists the strings of rawURL's userinfo that must never be
// printed, longest first, in the forms a message may carry them.
func urlSecrets(rawURL string) []string {
	scheme, user, pass, ok := userinfoOf(rawURL)
	if !ok {
		return nil
	}
	var raw []string
	if pass != "" {
		raw = append(raw, pass)
	}
	// A long user name of an http(s) URL is most likely a token.
	if !isSSH(scheme) && len(user) >= minNamedSecret {
		raw = append(raw, user)
	}
	seen := map[string]bool{}
	var out []string
	for _, s := range raw {
		forms := []string{s, url.PathEscape(s), url.QueryEscape(s)}
		if u, err := url.PathUnescape(s); err == nil {
			forms = append(forms, u)
		}
		for _, f := range forms {
			if f != "" && !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// userinfoOf splits scheme://[user[:pass]@]host...: ok is false when the
// URL has no scheme or no userinfo.
func userinfoOf(rawURL string) (scheme, user, pass string, ok bool) {
	i := strings.Index(rawURL, "://")
	if i < 0 {
		return "", "", "", false
	}
	rest := rawURL[i+3:]
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		rest = rest[:end]
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return "", "", "", false
	}
	user, pass, _ = strings.Cut(rest[:at], ":")
	return rawURL[:i], user, pass, true
}

func isSSH(scheme string) bool {
	switch strings.ToLower(scheme) {
	case "ssh", "git+ssh", "ssh+git":
		return true
	}
	return false
}

// URLHider is a writer that passes on what it is given with the
// credentials of its URLs hidden (HideURL): git's progress, which may
// repeat the URL it fetches. Each Write is hidden on its own.
type URLHider struct {
	w    io.Writer
	urls []string
}

// NewURLHider returns a URLHider over w for urls.
func NewURLHider(w io.Writer, urls ...string) *URLHider {
	return &URLHider{w: w, urls: urls}
}

// Write implements io.Writer. It reports len(p) on success, whatever the
// length of the hidden text.
func (h *URLHider) Write(p []byte) (int, error) {
	s := string(p)
	for _, u := range h.urls {
		s = HideURL(s, u)
	}
	if _, err := io.WriteString(h.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}
