package untrusted

import (
	"bytes"
	"strings"
	"testing"
)

// TestHideURL: the credentials of the one URL given leave a message in
// every form a message carries them, and nothing else changes; an ssh user
// name is no secret.
func TestHideURL(t *testing.T) {
	const secret = "s3cr3t/Passw0rd!"
	up := "https://x-access-token:" + strings.NewReplacer("/", "%2F", "!", "%21").Replace(secret) + "@git.example.com/up.git"
	tests := []struct{ name, url, in, want string }{
		{"the url itself", up, "fetching " + up + " failed", "fetching https://***@git.example.com/up.git failed"},
		{"the password unescaped", up, "auth " + secret + " refused", "auth *** refused"},
		{"the password as given", up, "auth s3cr3t%2FPassw0rd%21 refused", "auth *** refused"},
		{"the password query-escaped", up, "p=s3cr3t%2FPassw0rd%21&x", "p=***&x"},
		{"a long user name hidden", up, "x-access-token said no", "*** said no"},
		{"a short user name kept", "https://bot:pw-123456@h/r", "bot said no", "bot said no"},
		{"a token as user name", "http://ghp_0123456789abcdef@127.0.0.1:8/r", "user ghp_0123456789abcdef unknown", "user *** unknown"},
		{"an ssh user name kept", "ssh://deployer-bot@host/r", "cloning ssh://deployer-bot@host/r as deployer-bot", "cloning ssh://deployer-bot@host/r as deployer-bot"},
		{"an ssh password hidden", "ssh://git:pw-123456@host/r", "cloning ssh://git:pw-123456@host/r (pw-123456)", "cloning ssh://***@host/r (***)"},
		{"no userinfo", "https://host/a@b", "https://host/a@b and https://host/x", "https://host/a@b and https://host/x"},
		{"scp-like", "git@github.com:a/b.git", "git@github.com:a/b.git", "git@github.com:a/b.git"},
	}
	for _, tt := range tests {
		if got := HideURL(tt.in, tt.url); got != tt.want {
			t.Errorf("%s: HideURL(%q, %q) = %q, want %q", tt.name, tt.in, tt.url, got, tt.want)
		}
	}
}

// TestURLHider: what passes through the writer has the credentials of each
// of its URLs hidden, and the writer reports the length it was given.
func TestURLHider(t *testing.T) {
	var out bytes.Buffer
	w := NewURLHider(&out, "https://one:first-secret@a.example/r", "https://two:second-secret@b.example/r")
	in := "From https://one:first-secret@a.example/r\nmirror second-secret\n"
	n, err := w.Write([]byte(in))
	if err != nil || n != len(in) {
		t.Fatalf("Write() = %d, %v; want %d, nil", n, err, len(in))
	}
	if want := "From https://***@a.example/r\nmirror ***\n"; out.String() != want {
		t.Errorf("wrote %q, want %q", out.String(), want)
	}
}
