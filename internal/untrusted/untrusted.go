package untrusted

import (
	"encoding/base64"
	"regexp"
	"strings"
)

// Text is the one exit for untrusted text: it redacts every credential
// (Redact) and neutralises workflow commands (Neutralise). Every error
// message and everything a server or a subprocess says passes through it
// before it is printed, in every output format.
func Text(s string) string {
	return Neutralise(Redact(s))
}

// Error returns Text of err's message, "" for nil.
func Error(err error) string {
	if err == nil {
		return ""
	}
	return Text(err.Error())
}

var (
	// userinfo is the userinfo of a URL: scheme://user:pass@host.
	userinfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)([^/\s@"'\\]*(?:@[^/\s@"'\\]*)*)@`)
	// authHeader is an Authorization header, in a dump of headers or a
	// message that quotes one: the rest of the line is hidden, up to a
	// quote or a backslash (so that a JSON string holding it stays valid) or
	// an encoded line break (%0A, as in an annotation).
	authHeader = regexp.MustCompile(`(?i)\b((?:proxy-)?authorization["']?\s*[:=]\s*["']?)(?:[^\r\n"\\%]|%(?:[^0]|0[^aAdD]))+`)
	// basicCred is a bare "Basic <base64>", hidden when it decodes to user:password.
	basicCred = regexp.MustCompile(`(?i)\b(basic)(\s+)([A-Za-z0-9+/_-]{4,}={0,2})`)
	// bearerCred is a bare "Bearer <token>" or "token <token>".
	bearerCred = regexp.MustCompile(`(?i)\b(bearer|token)(\s+)([A-Za-z0-9._~+/-]{8,}=*)`)
	// queryCred is a credential in a query string or a key=value list.
	queryCred = regexp.MustCompile(`(?i)\b((?:access_|private_|refresh_|id_|auth_)?token|password|passwd|secret|client_secret|api_?key|sig|signature|x-amz-signature|x-amz-credential)=([^&\s#"',;\\]+)`)
	// forgeToken is a token whose shape says what it is: GitHub's ghp_,
	// gho_, ghu_, ghs_, ghr_ and github_pat_, GitLab's glpat-.
	forgeToken = regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{16,})`)
)

// Redact hides credentials in s: the secrets of the environment (SecretEnv
// and any variable named like a secret) and those registered with Add and
// AddURL, each raw, escaped and in base64, also inside longer base64 text and
// as base64 of user:secret; URL userinfo (an ssh user name without a password
// is kept); Authorization headers; bare Basic and Bearer credentials;
// token=, access_token=, password= and similar parameters; and tokens whose
// shape gives them away (ghp_, github_pat_, glpat-).
func Redact(s string) string {
	for _, f := range secretForms() {
		s = strings.ReplaceAll(s, f, Mask)
	}
	// Each pattern runs only where findClues, on the very text it would
	// run on, finds what it needs; a text none applies to comes back as it
	// was, without a copy.
	c := findClues(s)
	for _, p := range patterns {
		if !p.clue(c) {
			continue
		}
		if r := p.replace(s); r != s {
			s, c = r, findClues(r)
		}
	}
	return s
}

// patterns are Redact's credential patterns, in the order they run, each
// with the clue it cannot match without.
var patterns = []struct {
	clue    func(clues) bool
	replace func(string) string
}{
	{func(c clues) bool { return c.userinfo }, func(s string) string { return userinfo.ReplaceAllStringFunc(s, redactUserinfo) }},
	{func(c clues) bool { return c.auth }, func(s string) string { return authHeader.ReplaceAllString(s, "${1}"+Mask) }},
	{func(c clues) bool { return c.basic }, func(s string) string { return basicCred.ReplaceAllStringFunc(s, redactBasic) }},
	{func(c clues) bool { return c.bearer }, func(s string) string { return bearerCred.ReplaceAllStringFunc(s, redactBearer) }},
	{func(c clues) bool { return c.query }, func(s string) string { return queryCred.ReplaceAllString(s, "${1}="+Mask) }},
	{func(c clues) bool { return c.forge }, func(s string) string { return forgeToken.ReplaceAllString(s, Mask) }},
}

// URL returns rawURL with its userinfo hidden, as Redact hides it in text.
func URL(rawURL string) string {
	return userinfo.ReplaceAllStringFunc(rawURL, redactUserinfo)
}

func redactUserinfo(m string) string {
	sm := userinfo.FindStringSubmatch(m)
	scheme, info := sm[1], sm[2]
	if info == Mask {
		return m
	}
	if isSSH(strings.TrimSuffix(scheme, "://")) && !strings.Contains(info, ":") && !strings.Contains(info, "@") {
		return m // an ssh user name is no secret
	}
	return scheme + Mask + "@"
}

func redactBasic(m string) string {
	sm := basicCred.FindStringSubmatch(m)
	val := strings.TrimRight(sm[3], "=")
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(val); err == nil && strings.Contains(string(b), ":") {
			return sm[1] + sm[2] + Mask
		}
	}
	return m
}

func redactBearer(m string) string {
	sm := bearerCred.FindStringSubmatch(m)
	// A credential has a digit or punctuation; an English word does not.
	if strings.ContainsAny(sm[3], "0123456789._~+/-=") || strings.ToLower(sm[1]) == "bearer" && len(sm[3]) >= 20 {
		return sm[1] + sm[2] + Mask
	}
	return m
}
