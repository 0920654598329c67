package series

import (
	"bytes"
	"fmt"
	"strings"
)

// SetField returns p's bytes with its header field key set to value (one
// line), and whether that changed anything. An existing field (with its
// continuation lines) is replaced in place, keeping the key as written; a
// new field goes after the last header field, or, when the header has none,
// just before the first diff line. Every other byte stays as it was; the
// line ending follows the neighbouring line. The result is parsed again to
// check that the diff is unchanged and the field says value.
func SetField(p *Patch, key, value string) ([]byte, bool, error) {
	if value == "" || strings.ContainsAny(value, "\r\n") || key == "" || strings.ContainsAny(key, ": \t\r\n") {
		return nil, false, fmt.Errorf("%s: invalid header field %q: %q", p.Path, key, value)
	}
	var existing *Field
	for i := range p.Header.Fields {
		if strings.EqualFold(p.Header.Fields[i].Key, key) {
			existing = &p.Header.Fields[i]
			break
		}
	}
	if existing != nil && existing.Value == value {
		return p.Bytes(), false, nil
	}
	lines := strings.SplitAfter(string(p.raw), "\n")
	nHead := min(p.Header.Lines, len(lines))
	eolOf := func(i int) string {
		if i >= 0 && i < len(lines) && strings.HasSuffix(lines[i], "\r\n") {
			return "\r\n"
		}
		return "\n"
	}
	at, drop, eol := nHead, 0, eolOf(nHead-1)
	if at == 0 {
		eol = eolOf(0) // no header: the first diff line's
	}
	switch {
	case existing != nil:
		at, drop, key, eol = existing.Line-1, 1+strings.Count(existing.Value, "\n"), existing.Key, eolOf(existing.Line-1)
	case len(p.Header.Fields) > 0:
		last := p.Header.Fields[len(p.Header.Fields)-1]
		at = last.Line + strings.Count(last.Value, "\n")
		eol = eolOf(at - 1)
	}
	if at < 0 || at > nHead || at+drop > nHead {
		return nil, false, fmt.Errorf("%s: cannot place the %s field in the header", p.Path, key)
	}
	var b bytes.Buffer
	for _, l := range lines[:at] {
		b.WriteString(l)
	}
	if at > 0 && !strings.HasSuffix(lines[at-1], "\n") {
		b.WriteString(eol)
	}
	b.WriteString(key + ": " + value + eol)
	for _, l := range lines[at+drop:] {
		b.WriteString(l)
	}
	out := b.Bytes()
	np, err := Parse(p.Path, out, WithOptions(p.options))
	if err != nil {
		return nil, false, fmt.Errorf("%s: the patch would not parse with %s: %s: %w", p.Path, key, value, err)
	}
	got := ""
	for _, f := range np.Header.Fields {
		if strings.EqualFold(f.Key, key) {
			got = f.Value
			break
		}
	}
	if got != value || !bytes.Equal(np.Diff(), p.Diff()) {
		return nil, false, fmt.Errorf("%s: setting %s: %s would change more than the header field", p.Path, key, value)
	}
	return out, true, nil
}
