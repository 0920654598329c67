package stamp

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// A text edit replaces bytes [start, end) of the file.
type textEdit struct {
	start, end int
	text       string
}

// editText applies the stamp to the file's bytes in place: each scalar
// replaced where it stands, in its own quoting, and missing keys of a split
// map added as lines after its last entry. Everything else stays byte for
// byte. ok is false when a target is written in a way this does not handle
// (a multi-line or block scalar, a tag or anchor on it, a flow mapping for
// split); the caller then re-renders the tree.
func editText(data []byte, targets []target, v Value) ([]byte, bool) {
	lines := lineStarts(data)
	var edits []textEdit
	for _, t := range targets {
		if t.format != FormatSplit {
			e, ok := replaceScalar(data, lines, t.text, v.Scalar(t.format))
			if !ok {
				return nil, false
			}
			edits = append(edits, e)
			continue
		}
		m := t.text
		if m.Style&yaml.FlowStyle != 0 || len(m.Content) == 0 {
			return nil, false
		}
		var missing []string
		for _, kv := range v.split() {
			found := false
			for j := 0; j+1 < len(m.Content); j += 2 {
				if m.Content[j].Value == kv[0] {
					found = true
					val := m.Content[j+1]
					if val.Kind != yaml.ScalarNode {
						return nil, false
					}
					e, ok := replaceScalar(data, lines, val, kv[1])
					if !ok {
						return nil, false
					}
					edits = append(edits, e)
				}
			}
			if !found {
				missing = append(missing, kv[0]+": "+render(kv[1], 0))
			}
		}
		if len(missing) == 0 {
			continue
		}
		// Add the missing keys after the last split key the mapping has
		// (its last entry when it has none), which must be a one-line
		// scalar, at its keys' indentation.
		anchor := len(m.Content) - 2
		for j := 0; j+1 < len(m.Content); j += 2 {
			for _, kv := range v.split() {
				if m.Content[j].Value == kv[0] {
					anchor = j
				}
			}
		}
		lastKey, lastVal := m.Content[anchor], m.Content[anchor+1]
		if lastVal.Kind != yaml.ScalarNode || lastVal.Line != lastKey.Line || lastVal.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			return nil, false
		}
		if _, ok := replaceScalar(data, lines, lastVal, lastVal.Value); !ok {
			return nil, false
		}
		at := len(data)
		prefix := ""
		if lastKey.Line < len(lines) {
			at = lines[lastKey.Line] // start of the next line
		} else if len(data) > 0 && data[len(data)-1] != '\n' {
			prefix = "\n"
		}
		indent := strings.Repeat(" ", lastKey.Column-1)
		var b strings.Builder
		b.WriteString(prefix)
		for _, kv := range missing {
			b.WriteString(indent + kv + "\n")
		}
		edits = append(edits, textEdit{start: at, end: at, text: b.String()})
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].start > edits[j].start })
	for i := 1; i < len(edits); i++ {
		if edits[i].end > edits[i-1].start {
			return nil, false // overlapping targets
		}
	}
	out := append([]byte{}, data...)
	for _, e := range edits {
		out = append(out[:e.start], append([]byte(e.text), out[e.end:]...)...)
	}
	return out, true
}

// lineStarts gives the byte offset where each line begins: lines[i] is line i+1.
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' && i+1 <= len(data) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// replaceScalar finds a one-line scalar's bytes and renders v in its style.
func replaceScalar(data []byte, lines []int, n *yaml.Node, v string) (textEdit, bool) {
	if n.Kind != yaml.ScalarNode || n.Anchor != "" || n.Line < 1 || n.Line > len(lines) {
		return textEdit{}, false
	}
	if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle|yaml.TaggedStyle) != 0 {
		return textEdit{}, false
	}
	lineEnd := len(data)
	if n.Line < len(lines) {
		lineEnd = lines[n.Line] - 1
	}
	line := data[lines[n.Line-1]:lineEnd]
	// Column counts characters, not bytes.
	off := 0
	for c := 1; c < n.Column; c++ {
		if off >= len(line) {
			return textEdit{}, false
		}
		_, w := utf8.DecodeRune(line[off:])
		off += w
	}
	start := lines[n.Line-1] + off
	rest := line[off:]
	var end int
	switch {
	case n.Style&yaml.SingleQuotedStyle != 0:
		if len(rest) == 0 || rest[0] != '\'' {
			return textEdit{}, false
		}
		i := 1
		for ; i < len(rest); i++ {
			if rest[i] == '\'' {
				if i+1 < len(rest) && rest[i+1] == '\'' {
					i++
					continue
				}
				break
			}
		}
		if i >= len(rest) {
			return textEdit{}, false
		}
		end = i + 1
	case n.Style&yaml.DoubleQuotedStyle != 0:
		if len(rest) == 0 || rest[0] != '"' {
			return textEdit{}, false
		}
		i := 1
		for ; i < len(rest); i++ {
			if rest[i] == '\\' {
				i++
				continue
			}
			if rest[i] == '"' {
				break
			}
		}
		if i >= len(rest) {
			return textEdit{}, false
		}
		end = i + 1
	default:
		// A plain scalar: its text is its value, followed by the end of the
		// line, a space, or a flow indicator.
		if !strings.HasPrefix(string(rest), n.Value) {
			return textEdit{}, false
		}
		end = len(n.Value)
		if end < len(rest) && !strings.ContainsRune(" \t\r,]}", rune(rest[end])) {
			return textEdit{}, false
		}
	}
	text := render(v, n.Style)
	if start > 0 && data[start-1] == ':' {
		text = " " + text // an empty value right after its key's colon
	}
	return textEdit{start: start, end: start + end, text: text}, true
}

// render writes v as a scalar in style: plain when that reads back as the
// same string, else double-quoted; quoted styles stay as they were.
func render(v string, style yaml.Style) string {
	switch {
	case style&yaml.SingleQuotedStyle != 0:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case style&yaml.DoubleQuotedStyle != 0 || !plainSafe(v):
		return strconv.Quote(v)
	}
	return v
}
