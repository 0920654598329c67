package upstream

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
)

// CheckURL reports why raw is not an upstream URL that patchkit lists and
// fetches the way git does, or nil: an https://, http://, git://, ssh://
// (git+ssh://, ssh+git://) or file:// URL, an scp-like [user@]host:path, or
// a local path. It refuses what git would not run as a plain fetch: a
// remote helper's transport::address (ext:: runs a command; git itself
// refuses it unless protocol.allow says otherwise), another scheme (git
// hands it to a remote helper, which patchkit's listing has not got), an
// ssh host or path that would read as an option, an ssh URL without a path,
// and control characters.
func CheckURL(raw string) error {
	if strings.TrimSpace(raw) == "" {
		return errors.New("empty")
	}
	if strings.ContainsFunc(raw, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return errors.New("a control character in the URL")
	}
	if helper, ok := remoteHelper(raw); ok {
		return fmt.Errorf("%s:: is git's remote helper syntax (git-remote-%s); %s", helper, helper, reachable)
	}
	if i := strings.Index(raw, "://"); i >= 0 {
		switch raw[:i] {
		case "https", "http", "git", "file", "ssh", "git+ssh", "ssh+git":
		default:
			return fmt.Errorf("unsupported scheme %q; %s", raw[:i], reachable)
		}
	}
	if isSSH(raw) {
		if _, _, _, err := sshTarget(raw); err != nil {
			return err
		}
	}
	if _, err := transport.NewEndpoint(raw); err != nil {
		return err
	}
	return nil
}

// reachable says which upstream URLs CheckURL takes.
const reachable = "patchkit reaches an upstream by https://, http://, git://, ssh:// or file:// URL, scp-like [user@]host:path, or local path"

// remoteHelper reports whether git would hand raw to a remote helper by
// its transport::address syntax, and the helper's name: a scheme (a
// letter, then letters, digits, +, - and .) followed by "::", as git's
// transport_get reads it.
func remoteHelper(raw string) (string, bool) {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if letter || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			continue
		}
		if i > 0 && strings.HasPrefix(raw[i:], "::") {
			return raw[:i], true
		}
		return "", false
	}
	return "", false
}
