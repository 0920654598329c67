package untrusted

import (
	"strings"
	"testing"
	"unsafe"
)

// redactAll is Redact without findClues: every pattern runs on every text,
// as Redact did before it had a fast path. Redact must give the same text.
func redactAll(s string) string {
	for _, f := range secretForms() {
		s = strings.ReplaceAll(s, f, Mask)
	}
	for _, p := range patterns {
		s = p.replace(s)
	}
	return s
}

// fastPathCases are texts at the edges of findClues: credentials at the
// start and the end, every case and the two non-ASCII letters the patterns
// fold, userinfo whose '@' comes after a stop or a second "://", and
// registered secrets whose removal makes new userinfo.
var fastPathCases = []struct{ name, in string }{
	{"empty", ""},
	{"plain", "patch 0001-a.diff applies at v1.2.3\n"},
	{"token at start", tok + " was used"},
	{"token at end", "used " + tok},
	{"token is the text", tok},
	{"forge prefix too short", "ghp_abc and glpat-x and github_pat_"},
	{"gho at end", "x gho_0123456789abcdefXYZ"},
	{"userinfo at start", "https://a:b@host/x"},
	{"userinfo at end", "see https://a:b@"},
	{"scheme only at end", "see https://"},
	{"at after a slash", "https://host/path@v2 and ftp://x"},
	{"at after a second scheme", "a://b/c://d@e"},
	{"scheme in a run", "x://y://z://w@h/"},
	{"stop is the next scheme's slash", "://A://@0"},
	{"at after whitespace", "https://host @me"},
	{"at after a quote", `"https://host"@x`},
	{"at after a backslash", `https://host\@x`},
	{"at after a form feed", "https://host\f@x"},
	{"upper-case auth", "AUTHORIZATION: secret-value"},
	{"mixed-case auth in json", `{"AuThOrIzAtIoN":"Bearer abcdefghij0123"}`},
	{"auth at end", "proxy-authorization"},
	{"basic upper", "BASIC " + b64("u:p")},
	{"basic at end", "BaSiC"},
	{"bearer upper", "BEARER abcdefghijklmnopqrstuvwxyz0123"},
	{"token word", "the TOKEN 12345678abcd is here"},
	{"query upper", "PASSWORD=abc&API_KEY=def&ApiKey=g&X-AMZ-CREDENTIAL=h&Sig=i"},
	{"query without equals", "password: abc"},
	{"equals without name", "a=b c=d"},
	{"query name at end", "x=1 client_secret"},
	{"kelvin sign token", "to\u212aen abcdefgh1234"},
	{"kelvin sign query", "api\u212aey=zzz"},
	{"long s basic", "ba\u017fic " + b64("u:p")},
	{"long s secret query", "\u017fecret=zzz"},
	{"long s at end", "x \u017f"},
	{"truncated kelvin sign", "to\xe2\x84"},
	{"invalid utf-8", "https://a\xff:b@h token \xc5"},
	{"registered secret with a slash inside userinfo", "https://ab" + "s3cr3t/Passw0rd" + "cd@host/x"},
	{"escaped secret", "echo s3cr3t-Passw0rd%21 and " + `"s3cr3t-Passw0rd!"`},
	{"secret at start and end", pass + " middle " + pass},
	{"annotation", "::error file=x::Authorization: Basic eDp5%0Anext"},
	{"everything", "https://u:p@h Authorization: x\nBasic " + b64("a:b") + " Bearer abcdefgh123 token=x " + tok},
}

func TestRedactFastPathAgrees(t *testing.T) {
	Add("s3cr3t/Passw0rd")
	AddURL("https://" + user + ":" + strings.ReplaceAll(pass, "!", "%21") + "@git.example.com/up.git")
	filler := strings.Repeat(`{"ref": "v1.2.3", "hunk": "@@ -8,7 +8,7 @@ text"}`+"\n", 50)
	for _, tt := range fastPathCases {
		for _, in := range []string{tt.in, filler + tt.in, tt.in + filler, filler + tt.in + filler} {
			if got, want := Redact(in), redactAll(in); got != want {
				t.Errorf("%s: Redact(%q) = %q, want %q (every pattern run)", tt.name, in, got, want)
			}
		}
	}
}

// TestRedactCleanTextIsNotCopied: a text without a clue comes back as the
// same string, not a copy.
func TestRedactCleanTextIsNotCopied(t *testing.T) {
	in := strings.Repeat(`{"ref": "v1.2.3", "url": "file:///up", "email": "a@example.com", "hunk": "@@ -8,7 +8,7 @@"}`+"\n", 200)
	got := Redact(in)
	if got != in {
		t.Fatalf("Redact() changed a clean text: %q", got)
	}
	if unsafe.StringData(got) != unsafe.StringData(in) {
		t.Errorf("Redact() copied a clean text of %d bytes", len(in))
	}
}

func TestFindClues(t *testing.T) {
	tests := []struct {
		name, in string
		want     clues
	}{
		{"none", `{"url": "file:///up", "a": "b@c"}`, clues{}},
		{"userinfo", "x https://u@h", clues{userinfo: true}},
		{"at past a slash", "https://h/u@h", clues{}},
		{"at past a second scheme's slash", "a://b/c://d@e", clues{userinfo: true}},
		{"stop is the next scheme's slash", "://A://@0", clues{userinfo: true}},
		{"auth", "AUTHORIZATION", clues{auth: true}},
		{"basic and bearer", "Basic Bearer", clues{basic: true, bearer: true}},
		{"token without equals", "token", clues{bearer: true}},
		{"token with equals", "token=", clues{bearer: true, query: true}},
		{"sig with equals", "=SIG", clues{query: true}},
		{"forge", "ghs_", clues{forge: true}},
		{"forge is case-sensitive", "GHS_ GITHUB_PAT_ GLPAT-", clues{}},
		{"kelvin sign", "\u212a=", clues{auth: true, basic: true, bearer: true, query: true}},
		{"long s", "\u017f", clues{auth: true, basic: true, bearer: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := findClues(tt.in); got != tt.want {
				t.Errorf("findClues(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzRedactFastPath checks that findClues never rules out a pattern that
// would have changed the text.
func FuzzRedactFastPath(f *testing.F) {
	for _, tt := range fastPathCases {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if got, want := Redact(in), redactAll(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q (every pattern run)", in, got, want)
		}
	})
}
