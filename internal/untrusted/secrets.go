package untrusted

import (
	"encoding/base64"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Mask replaces every credential in output.
const Mask = "***"

// SecretEnv lists the environment variables whose values never appear in
// output, whatever their length beyond minSecret. Any other variable whose
// name says it holds a secret (secretName) is hidden too when its value is
// long enough not to be an ordinary word.
var SecretEnv = []string{
	"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN",
	"ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
	"REGISTRY_PASSWORD", "REGISTRY_TOKEN", "DOCKER_PASSWORD", "DOCKER_AUTH_CONFIG",
}

// userEnv pairs a user-name variable with the secret variables it is sent
// with as basic auth, so that base64 of "user:secret" is hidden as well.
var userEnv = map[string][]string{
	"REGISTRY_USERNAME": {"REGISTRY_PASSWORD", "REGISTRY_TOKEN"},
	"REGISTRY_USER":     {"REGISTRY_PASSWORD", "REGISTRY_TOKEN"},
	"DOCKER_USERNAME":   {"DOCKER_PASSWORD"},
	"GITHUB_ACTOR":      {"GITHUB_TOKEN", "GH_TOKEN"},
}

// tokenUsers are the user names GitHub and other forges pair with a token in
// basic auth.
var tokenUsers = []string{"x-access-token", "x-oauth-basic", "oauth2", "token", "git"}

var secretName = regexp.MustCompile(`(?i)(TOKEN|PASSWORD|PASSWD|SECRET|API_?KEY|CREDENTIAL)`)

const (
	// minSecret is the shortest value of a SecretEnv variable that is hidden.
	minSecret = 4
	// minNamedSecret is the shortest value hidden for other variables whose
	// name says secret: shorter ones are flags such as "true".
	minNamedSecret = 8
	// minFragment is the shortest base64 fragment hidden: shorter ones would
	// match ordinary words.
	minFragment = 8
)

// known holds the secrets this process was told about (Add, AddURL), beside
// the ones read from the environment on every call.
var known struct {
	sync.Mutex
	secrets []string
	pairs   [][2]string
}

// Add registers secrets that must never be printed: a registry password read
// from a file, a token from a credential helper.
func Add(secrets ...string) {
	known.Lock()
	defer known.Unlock()
	for _, s := range secrets {
		if len(s) >= minSecret {
			known.secrets = append(known.secrets, s)
		}
	}
}

// AddPair registers a user name and the secret sent with it as basic auth,
// so that base64 of "user:secret" is hidden as well as the secret.
func AddPair(user, secret string) {
	Add(secret)
	if secret == "" {
		return
	}
	known.Lock()
	defer known.Unlock()
	known.pairs = append(known.pairs, [2]string{user, secret})
}

// AddURL registers the credentials in rawURL's userinfo: the password, the
// user name when it is long enough to be a token (tokens are often passed as
// the user), and the pair.
func AddURL(rawURL string) {
	i := strings.Index(rawURL, "://")
	if i < 0 {
		return
	}
	rest := rawURL[i+3:]
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		rest = rest[:end]
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return
	}
	user, pass, hasPass := strings.Cut(rest[:at], ":")
	for _, s := range []*string{&user, &pass} {
		if u, err := url.PathUnescape(*s); err == nil {
			*s = u
		}
	}
	if hasPass {
		AddPair(user, pass)
	}
	if len(user) >= minNamedSecret {
		Add(user)
	}
}

// secretForms returns every string that must be hidden, longest first: each
// secret as given, URL- and JSON-escaped, its base64 (with the fragments that
// show when it sits inside a longer base64 text), and base64 of each
// user:secret pair.
func secretForms() []string {
	secrets, pairs := collect()
	seen := map[string]bool{}
	var out []string
	add := func(s string, min int) {
		if len(s) >= min && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, s := range secrets {
		add(s, minSecret)
		add(url.PathEscape(s), minSecret)
		add(url.QueryEscape(s), minSecret)
		add(strings.Trim(strconv.Quote(s), `"`), minSecret)
		for _, b := range base64Forms([]byte(s)) {
			add(b, minFragment)
		}
	}
	for _, p := range pairs {
		for _, b := range base64Forms([]byte(p[0] + ":" + p[1])) {
			add(b, minFragment)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// collect gathers the registered secrets and those of the environment.
func collect() (secrets []string, pairs [][2]string) {
	known.Lock()
	secrets = append(secrets, known.secrets...)
	pairs = append(pairs, known.pairs...)
	known.Unlock()
	listed := map[string]bool{}
	for _, name := range SecretEnv {
		listed[name] = true
		if v := os.Getenv(name); len(v) >= minSecret {
			secrets = append(secrets, v)
			for _, u := range tokenUsers {
				pairs = append(pairs, [2]string{u, v})
			}
		}
	}
	for _, kv := range os.Environ() {
		name, v, _ := strings.Cut(kv, "=")
		if !listed[name] && secretName.MatchString(name) && len(v) >= minNamedSecret {
			secrets = append(secrets, v)
		}
	}
	for userVar, secretVars := range userEnv {
		user := os.Getenv(userVar)
		if user == "" {
			continue
		}
		for _, sv := range secretVars {
			if v := os.Getenv(sv); len(v) >= minSecret {
				pairs = append(pairs, [2]string{user, v})
			}
		}
	}
	return secrets, pairs
}

// base64Forms returns b in standard and URL base64, padded and not, and for
// each of the three alignments b can have inside a longer encoded text, the
// run of characters that only b's bytes decide.
func base64Forms(b []byte) []string {
	var out []string
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		out = append(out, enc.EncodeToString(b), enc.WithPadding(base64.NoPadding).EncodeToString(b))
		for off := 0; off < 3; off++ {
			buf := append(make([]byte, off), b...)
			s := enc.WithPadding(base64.NoPadding).EncodeToString(buf)
			start := 0
			if off > 0 {
				start = 4 // the first group mixes in bytes before b
			}
			end := len(buf) / 3 * 4 // a last partial group mixes in bytes after b
			if end > start {
				out = append(out, s[start:end])
			}
		}
	}
	return out
}
