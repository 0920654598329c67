package untrusted

import (
	"encoding/base64"
	"strings"
	"testing"
)

const (
	tok  = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	user = "deploy-bot"
	pass = "s3cr3t-Passw0rd!"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestRedact(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "gho_envtokenvalue1234567890abcdef")
	t.Setenv("MY_SERVICE_API_KEY", "k3y-from-the-environment")
	t.Setenv("SOME_FLAG_SECRET", "true") // too short to be a secret
	t.Setenv("REGISTRY_USERNAME", "robot")
	t.Setenv("REGISTRY_PASSWORD", "reg-pass-9876")
	AddURL("https://" + user + ":" + strings.ReplaceAll(pass, "!", "%21") + "@git.example.com/up.git")
	tests := []struct {
		name, in string
		gone     []string // must not survive
		keep     []string // must survive
	}{
		{"url userinfo", "fetching https://alice:hunter2@example.com/a.git failed",
			[]string{"hunter2", "alice"}, []string{"https://***@example.com/a.git failed"}},
		{"url userinfo with @ in password", "https://bob:p@ss@example.com/x",
			[]string{"p@ss", "ss@example"}, []string{"https://***@example.com/x"}},
		{"token as url user", "https://x-access-token:" + tok + "@github.com/a/b",
			[]string{tok, "x-access-token:"}, []string{"@github.com/a/b"}},
		{"ssh user kept", "ssh://git@github.com/a/b.git", nil, []string{"ssh://git@github.com/a/b.git"}},
		{"ssh password hidden", "ssh://git:pw123456@host/a", []string{"pw123456"}, []string{"ssh://***@host/a"}},
		{"authorization basic", "> Authorization: Basic " + b64("alice:hunter2") + "\n> Accept: */*",
			[]string{b64("alice:hunter2")}, []string{"Authorization: ***", "Accept: */*"}},
		{"authorization bearer", "authorization: Bearer abc.def.ghi", []string{"abc.def.ghi"}, []string{"authorization: ***"}},
		{"authorization in an annotation", "x: Authorization: Basic eDp5%25%0Anext line", []string{"eDp5"}, []string{"Authorization: ***%0Anext line"}},
		{"proxy authorization json", `{"Proxy-Authorization":"Basic eDp5"}`, []string{"eDp5"}, nil},
		{"bare basic", "sent Basic " + b64("carol:pw") + " to the server", []string{b64("carol:pw")}, []string{"sent Basic *** to the server"}},
		{"basic word kept", "basic authentication required", nil, []string{"basic authentication required"}},
		{"bare bearer", "got Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc", []string{"eyJhbGci"}, []string{"Bearer ***"}},
		{"bearer realm kept", `WWW-Authenticate: Bearer realm="https://r.example/token"`, nil, []string{`Bearer realm="https://r.example/token"`}},
		{"token query", "GET /x?access_token=abc123&page=2 and ?token=zzz9", []string{"abc123", "zzz9"}, []string{"access_token=***&page=2", "token=***"}},
		{"password param", "password=letmein;", []string{"letmein"}, []string{"password=***;"}},
		{"github tokens by shape", "a " + tok + " b github_pat_11ABCDEFG0abcdefghijklmnopqrstuvwxyz c ghs_0123456789abcdefghij", []string{tok, "github_pat_11", "ghs_0123"}, []string{"a *** b *** c ***"}},
		{"gitlab token", "glpat-abcdefghij0123456789", []string{"glpat-abc"}, nil},
		{"env token raw", "token was gho_envtokenvalue1234567890abcdef.", []string{"gho_envtokenvalue"}, nil},
		{"env token base64 as x-access-token", "Basic=" + b64("x-access-token:gho_envtokenvalue1234567890abcdef"), []string{b64("x-access-token:gho_envtokenvalue1234567890abcdef")}, nil},
		{"env token inside longer base64", b64("prefix-gho_envtokenvalue1234567890abcdef-suffix"), []string{b64("prefix-gho_envtokenvalue1234567890abcdef-suffix")[12:40]}, nil},
		{"named env secret", "key k3y-from-the-environment used", []string{"k3y-from-the-environment"}, nil},
		{"short flag kept", "the answer is true", nil, []string{"the answer is true"}},
		{"registry password and pair", "reg-pass-9876 / " + b64("robot:reg-pass-9876"), []string{"reg-pass-9876", b64("robot:reg-pass-9876")}, nil},
		{"registered url password raw", "echo " + pass, []string{pass}, nil},
		{"registered url password escaped", "echo s3cr3t-Passw0rd%21", []string{"s3cr3t-Passw0rd"}, nil},
		{"registered pair base64 anywhere", "blob:" + b64(user+":"+pass) + ".", []string{b64(user + ":" + pass)}, nil},
		{"registered pair base64 url", base64.URLEncoding.EncodeToString([]byte(user + ":" + pass)), []string{base64.URLEncoding.EncodeToString([]byte(user + ":" + pass))}, nil},
		{"registered user long enough", "user deploy-bot logged in", []string{"deploy-bot"}, nil},
		{"plain text kept", "patch 0001-a.diff does not apply at line 3", nil, []string{"patch 0001-a.diff does not apply at line 3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact(tt.in)
			for _, g := range tt.gone {
				if strings.Contains(got, g) {
					t.Errorf("Redact(%q) = %q, still holds %q", tt.in, got, g)
				}
			}
			for _, k := range tt.keep {
				if !strings.Contains(got, k) {
					t.Errorf("Redact(%q) = %q, want it to hold %q", tt.in, got, k)
				}
			}
		})
	}
}

func TestNeutralise(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"command at start", "::error file=x::pwned", ": :error file=x::pwned"},
		{"after newline", "HTTP 401\n::set-output name=a::b\nok", "HTTP 401\n: :set-output name=a::b\nok"},
		{"after whitespace", "x\n  \t::warning::w", "x\n  \t: :warning::w"},
		{"after carriage return", "x\r::notice::n", "x\r: :notice::n"},
		{"encoded newline", "body%0A::error::x and %0d::add-mask::y", "body%0A: :error::x and %0d: :add-mask::y"},
		{"old form", "##[set-env name=A]b", "# #[set-env name=A]b"},
		{"inside a line kept", "std::string a::b", "std::string a::b"},
		{"terminal escape", "red \x1b[31mtext", "red \uFFFD[31mtext"},
		{"plain", "nothing here", "nothing here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Neutralise(tt.in); got != tt.want {
				t.Errorf("Neutralise(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestTextNoLineStartsWithCommand feeds an echoing server's body through
// Text and checks what a runner would see.
func TestTextNoLineStartsWithCommand(t *testing.T) {
	body := "Authorization: Basic " + b64("u:p4ssword") + "\n::error file=x::pwned\n  ::add-mask::m\r\n##[group]g"
	got := Text(body)
	for _, l := range strings.FieldsFunc(got, func(r rune) bool { return r == '\n' || r == '\r' }) {
		l = strings.TrimLeft(l, " \t")
		if strings.HasPrefix(l, "::") || strings.HasPrefix(l, "##[") {
			t.Errorf("Text() line %q is a workflow command", l)
		}
	}
	if strings.Contains(got, b64("u:p4ssword")) {
		t.Errorf("Text() = %q, still holds the credential", got)
	}
}
