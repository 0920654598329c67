package upstream

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/patchkit/patchkit/internal/untrusted"
)

// Redact returns rawURL with its credentials hidden, safe to print:
// untrusted.URL, the one output filter's spelling (every userinfo of a
// scheme URL becomes "***", since tokens are often passed as the user name;
// an ssh user name without a password is kept). URLs without userinfo,
// scp-like addresses and paths come back as given.
func Redact(rawURL string) string { return untrusted.URL(rawURL) }

// splitUserinfo splits scheme://[user[:pass]@]rest. hasInfo is false when the
// URL has no scheme or no userinfo.
func splitUserinfo(rawURL string) (scheme, user, pass string, hasInfo bool, rest string) {
	i := strings.Index(rawURL, "://")
	if i < 0 {
		return "", "", "", false, rawURL
	}
	scheme, after := rawURL[:i], rawURL[i+3:]
	end := strings.IndexAny(after, "/?#")
	if end < 0 {
		end = len(after)
	}
	at := strings.LastIndex(after[:end], "@")
	if at < 0 {
		return scheme, "", "", false, after
	}
	info := after[:at]
	user, pass, _ = strings.Cut(info, ":")
	return scheme, user, pass, true, after[at+1:]
}

// scrubbedError is an error whose message had credentials removed. It still
// unwraps to the original, so errors.Is and errors.As keep working.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// scrub returns err with rawURL's credentials removed from its message
// (untrusted.HideURL).
func scrub(rawURL string, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := untrusted.HideURL(msg, rawURL)
	if clean == msg {
		return err
	}
	return &scrubbedError{msg: clean, err: err}
}

// withoutCredentials drops the whole userinfo of a scheme URL, so that a
// rotated token does not change the cache key.
func withoutCredentials(rawURL string) string {
	scheme, _, _, hasInfo, rest := splitUserinfo(rawURL)
	if !hasInfo {
		return rawURL
	}
	return scheme + "://" + rest
}

// maxKeyName bounds the readable part of a cache key.
const maxKeyName = 64

// cacheKey names the cache of rawURL: its host and path made file-name safe,
// then the first 12 hex digits of the sha256 of the URL without credentials.
func cacheKey(rawURL string) string {
	plain := withoutCredentials(rawURL)
	sum := sha256.Sum256([]byte(plain))
	return keyName(plain) + "-" + hex.EncodeToString(sum[:])[:12]
}

func keyName(plain string) string {
	s := plain
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	} else if colon := strings.Index(s, ":"); colon > 0 && !strings.Contains(s[:colon], "/") {
		// scp-like user@host:path
		s = s[:colon] + "/" + s[colon+1:]
		if at := strings.LastIndex(s[:colon], "@"); at >= 0 {
			s = s[at+1:]
		}
	}
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSuffix(strings.TrimRight(s, "/"), ".git")
	var b strings.Builder
	dash := false
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_'
		if ok {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	name := strings.Trim(b.String(), "-.")
	if len(name) > maxKeyName {
		name = strings.TrimLeft(name[len(name)-maxKeyName:], "-.")
	}
	if name == "" {
		name = "repo"
	}
	return name
}
