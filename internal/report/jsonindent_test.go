package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchkit/patchkit/internal/untrusted"
)

// indentCases are compact JSON texts at the edges of indentWriter's states:
// empty and nested empty containers, escapes (a quote, a backslash before a
// quote, \u escapes), punctuation and brackets inside strings, scalars.
var indentCases = []string{
	`{}`, `[]`, `[[]]`, `{"a":{}}`, `{"a":[],"b":[{}]}`, `[{},[],{"x":[[]]}]`,
	`"x"`, `0`, `-1.5e+10`, `true`, `null`,
	`{"q":"a \"quoted\" {[,:]} text","b":"back\\\\slash\\\\","u":"\u003c\u2028é"}`,
	`{"k,:{":"]}","e":"\\\""}`,
	`[1,"two",{"three":3,"four":[4,4.5]},null,false]`,
}

// TestIndentWriterMatchesIndent: what indentWriter streams is byte for byte
// json.Indent's output (and so Encoder.SetIndent's, which Export used), for
// the edge cases and every JSON golden file of the tree, however the
// Encoder's write is cut.
func TestIndentWriterMatchesIndent(t *testing.T) {
	inputs := map[string][]byte{}
	for i, c := range indentCases {
		inputs[string(rune('a'+i))] = []byte(c)
	}
	golden, err := filepath.Glob(filepath.Join("..", "*", "testdata", "*", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range golden {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if json.Valid(data) { // some goldens of -o json are an error's text
			inputs[f] = data
		}
	}
	if n := len(inputs) - len(indentCases); n < 10 {
		t.Fatalf("found %d golden JSON files, want the report goldens", n)
	}
	for name, data := range inputs {
		var compact bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		compact.WriteByte('\n') // as Encoder.Encode ends
		for _, chunk := range []int{len(compact.Bytes()), 1, 2, 3, 7, 64} {
			if got, want := indentChunked(t, compact.Bytes(), chunk), indentStd(t, compact.Bytes()); got != want {
				t.Errorf("%s, writes of %d bytes:\ngot  %q\nwant %q", name, chunk, got, want)
			}
		}
	}
}

// FuzzIndentWriter: for any valid JSON, compacted as the Encoder writes it,
// indentWriter's output is json.Indent's.
func FuzzIndentWriter(f *testing.F) {
	for _, c := range indentCases {
		f.Add([]byte(c), 5)
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk int) {
		if !json.Valid(data) || chunk < 1 {
			return
		}
		var compact bytes.Buffer
		json.Compact(&compact, data)
		compact.WriteByte('\n')
		if got, want := indentChunked(t, compact.Bytes(), chunk), indentStd(t, compact.Bytes()); got != want {
			t.Errorf("writes of %d bytes:\ngot  %q\nwant %q", chunk, got, want)
		}
	})
}

func indentChunked(t *testing.T, src []byte, chunk int) string {
	t.Helper()
	var out bytes.Buffer
	iw := newIndentWriter(&out, "  ")
	for len(src) > 0 {
		n := min(chunk, len(src))
		if k, err := iw.Write(src[:n]); k != n || err != nil {
			t.Fatalf("Write() = %d, %v", k, err)
		}
		src = src[n:]
	}
	return out.String()
}

func indentStd(t *testing.T, src []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, src, "", "  "); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// bigResult is a result whose JSON runs past any buffer size.
type bigResult struct{ Lines []string }

func (bigResult) Command() string { return "test" }

// countingWriter counts the writes it is given.
type countingWriter struct {
	w      io.Writer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes++
	return c.w.Write(p)
}

// TestExportJSONOneWrite: -o json reaches its writer in one write, as
// Encoder.SetIndent's output did, so that untrusted's filter, which
// redacts each write on its own, sees a secret whole wherever it falls in
// a large report; and the bytes are the Encoder's.
func TestExportJSONOneWrite(t *testing.T) {
	token := "ghp_" + strings.Repeat("A1b2", 9)
	var r bigResult
	for i := range 5000 {
		r.Lines = append(r.Lines, fmt.Sprintf("line %04d of a long report", i))
	}
	r.Lines[2000] = "near 64 KiB: " + token // past the first 64 KiB of indented output
	var out bytes.Buffer
	cw := &countingWriter{w: untrusted.NewWriter(&out)}
	if err := Export(cw, JSON, r); err != nil {
		t.Fatal(err)
	}
	if cw.writes != 1 {
		t.Errorf("Export wrote %d times, want once", cw.writes)
	}
	if strings.Contains(out.String(), token) || !strings.Contains(out.String(), "near 64 KiB: ") {
		t.Errorf("the token is in the output, or the line is missing")
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := Export(&got, JSON, r); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("Export's JSON differs from Encoder.SetIndent's")
	}
	if out.Len() < 64<<10 {
		t.Fatalf("the report is %d bytes, want more than 64 KiB", out.Len())
	}
}
