package untrusted

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestWriterKeepsJSONValid writes a JSON document whose strings hold an
// echoed request and requires valid JSON without the credential.
func TestWriterKeepsJSONValid(t *testing.T) {
	cred := b64("alice:hunter2-hunter2")
	msg := "HTTP 401\nAuthorization: Basic " + cred + "\nX-Token: token=abc123\"q\\z\n::error::x"
	doc, err := json.MarshalIndent(map[string]any{"error": msg, "url": "https://alice:hunter2-hunter2@h/x", "list": []string{"a://b\\\"c@d", "Bearer zz9zz9zz9zz9"}}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := NewWriter(&out)
	if n, err := w.Write(doc); err != nil || n != len(doc) {
		t.Fatalf("Write() = %d, %v; want %d, nil", n, err, len(doc))
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("Writer broke the JSON: %v\n%s", err, out.String())
	}
	for _, s := range []string{cred, "hunter2", "abc123", "zz9zz9"} {
		if strings.Contains(out.String(), s) {
			t.Errorf("output holds %q:\n%s", s, out.String())
		}
	}
}

// TestWriterLineStarts follows line starts across writes, and lets commands
// through only when allowed.
func TestWriterLineStarts(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	for _, s := range []string{"::a\n", "  ", "::b", " x::c\n", "\t", "", "##[d]\n"} {
		w.Write([]byte(s))
	}
	if want := ": :a\n  : :b x::c\n\t# #[d]\n"; out.String() != want {
		t.Errorf("neutralised = %q, want %q", out.String(), want)
	}
	out.Reset()
	w.AllowCommands(true)
	w.Write([]byte("::notice::ok\n"))
	if out.String() != "::notice::ok\n" || w.Written() == 0 {
		t.Errorf("allowed = %q (written %d), want the command kept", out.String(), w.Written())
	}
}
