package upstream

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"sort"
	"strings"
)

// redactedInfo replaces credentials in URLs shown to users.
const redactedInfo = "xxxxx"

// Redact returns rawURL with its credentials hidden, safe to print: for
// scheme URLs every userinfo becomes "xxxxx" (tokens are often passed as the
// user name), except an ssh user name, which is kept while its password is
// hidden. URLs without userinfo, scp-like addresses and paths come back as given.
func Redact(rawURL string) string {
	scheme, user, pass, hasInfo, rest := splitUserinfo(rawURL)
	if !hasInfo {
		return rawURL
	}
	if isSSH(scheme) {
		if pass == "" {
			return rawURL
		}
		return scheme + "://" + user + ":" + redactedInfo + "@" + rest
	}
	return scheme + "://" + redactedInfo + "@" + rest
}

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

func isSSH(scheme string) bool {
	switch strings.ToLower(scheme) {
	case "ssh", "git+ssh", "ssh+git":
		return true
	}
	return false
}

// secrets lists the strings of rawURL that must never be printed, longest
// first, in the forms they may take in messages (as given, escaped, unescaped).
func secrets(rawURL string) []string {
	scheme, user, pass, hasInfo, _ := splitUserinfo(rawURL)
	if !hasInfo {
		return nil
	}
	var raw []string
	if pass != "" {
		raw = append(raw, pass)
	}
	// A long user name of an http(s) URL is most likely a token.
	if !isSSH(scheme) && len(user) >= 8 {
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

// scrubString removes rawURL's credentials from msg.
func scrubString(rawURL, msg string) string {
	if red := Redact(rawURL); red != rawURL {
		msg = strings.ReplaceAll(msg, rawURL, red)
	}
	for _, s := range secrets(rawURL) {
		msg = strings.ReplaceAll(msg, s, redactedInfo)
	}
	return msg
}

// scrubbedError is an error whose message had credentials removed. It still
// unwraps to the original, so errors.Is and errors.As keep working.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// scrub returns err with rawURL's credentials removed from its message.
func scrub(rawURL string, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := scrubString(rawURL, msg)
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
