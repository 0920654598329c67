package upstream

import (
	"strings"
	"testing"
)

// TestCheckURLTakesWhatPatchkitReaches: the URL forms patchkit lists and
// fetches (docs/spec.md) pass.
func TestCheckURLTakesWhatPatchkitReaches(t *testing.T) {
	for _, u := range []string{
		"https://github.com/kubeovn/kube-ovn",
		"https://user:token@git.example.com:8443/group/repo.git",
		"http://127.0.0.1:8080/up.git",
		"git://git.example.com/up.git",
		"git://127.0.0.1:9418/up.git",
		"file:///srv/git/up.git",
		"/srv/git/up.git",
		"ssh://git@github.com/kubeovn/kube-ovn.git",
		"ssh://git@[::1]:2222/up.git",
		"git+ssh://host/up.git",
		"ssh+git://host/up.git",
		"git@github.com:kubeovn/kube-ovn.git",
		"host:~/up.git",
		"ssh://host/-up.git", // the path is /-up.git: no option
	} {
		if err := CheckURL(u); err != nil {
			t.Errorf("CheckURL(%q) = %v, want nil", u, err)
		}
	}
}

// TestCheckURLRefusesWhatGitWouldNotFetch: a remote helper's
// transport::address, another scheme, an ssh host or path that reads as
// an option, an ssh URL without a path and a control character are
// refused. Where git refuses without connecting anywhere, git ls-remote is
// the oracle: it must fail too, and for the ssh forms with the same words.
func TestCheckURLRefusesWhatGitWouldNotFetch(t *testing.T) {
	for _, tc := range []struct {
		url, want string
		git       bool // git ls-remote refuses it without connecting
	}{
		{url: "ext::sh -c touch% /tmp/x", want: "ext:: is git's remote helper syntax", git: true},
		// git would read and write the descriptor: no oracle here.
		{url: "fd::3", want: "fd:: is git's remote helper syntax"},
		{url: "foo+bar.v2::https://example.com/x", want: "foo+bar.v2:: is git's remote helper syntax", git: true},
		{url: "ssh://-oProxyCommand=true/x", want: "strange hostname '-oProxyCommand=true' blocked", git: true},
		{url: "host:-oProxyCommand=true", want: "strange pathname '-oProxyCommand=true' blocked", git: true},
		{url: "ssh://host", want: "no path specified", git: true},
		{url: "rsync://host/x", want: `unsupported scheme "rsync"`, git: true},
		{url: "ftp://host/x.git", want: `unsupported scheme "ftp"`},
		{url: "HTTPS://host/x.git", want: `unsupported scheme "HTTPS"`},
		{url: "https://host/x\n.git", want: "control character"},
		{url: " ", want: "empty"},
	} {
		err := CheckURL(tc.url)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckURL(%q) = %v, want it to say %q", tc.url, err, tc.want)
		}
		if !tc.git {
			continue
		}
		_, stderr, gitErr := gitLsRemote(tc.url)
		if gitErr == nil {
			t.Errorf("git ls-remote %q succeeded; CheckURL refuses it", tc.url)
		}
		if strings.HasPrefix(tc.want, "strange") || strings.HasPrefix(tc.want, "no path") {
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("git ls-remote %q says %q; CheckURL says %q", tc.url, stderr, tc.want)
			}
		}
	}
}
