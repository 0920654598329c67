package stamp

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/patchkit/patchkit/internal/stamp/expr"
)

// The file is edited as bytes, never re-encoded: each stamped scalar is
// replaced where it stands, written as `yq -i '.key = strenv(V)'` would
// write it (yq keeps a string's quoting style, and quotes a plain scalar
// only when it would not read back as the same string), and the missing
// keys of a split map are added as lines after its last entry. A target
// this cannot edit exactly is refused with its reason and line.

// A textEdit replaces bytes [start, end) of the file.
type textEdit struct {
	start, end int
	text       string
}

// located is a target found in a file: its snippet, parsed.
type located struct {
	snip   snippet
	sdata  []byte     // the snippet's bytes
	root   *yaml.Node // the snippet parsed
	node   *yaml.Node // the target node in root
	inFlow bool       // the node is inside a flow collection
	line   int        // the node's line in the file
}

// locateTarget finds path in the file and checks it is a node stamp can
// edit: scalar for a scalar format, block or flow mapping for split.
func (d *doc) locateTarget(path expr.Path) (*located, error) {
	s, err := d.locate(path)
	if err != nil {
		return nil, err
	}
	root, err := d.parseSnippet(s)
	if err != nil {
		return nil, err
	}
	at := path[:len(path)-len(s.rest)]
	n, inFlow, lerr := lookup(root, s.rest, at)
	if lerr != nil {
		return nil, inputErr(d.rel, s.lo+lerr.line, "%s", lerr.msg)
	}
	return &located{snip: s, sdata: d.snippetBytes(s), root: root, node: n, inFlow: inFlow, line: s.lo + n.Line}, nil
}

type lookupError struct {
	line int
	msg  string
}

// lookup follows the path from n, the node at path prefix at.
func lookup(n *yaml.Node, path, at expr.Path) (*yaml.Node, bool, *lookupError) {
	cur, inFlow := n, false
	for i, st := range path {
		here := append(append(expr.Path{}, at...), path[:i]...)
		if cur.Kind == yaml.AliasNode {
			return nil, false, &lookupError{cur.Line, fmt.Sprintf("%s is an alias (*%s); stamp does not edit through aliases", here, cur.Value)}
		}
		inFlow = inFlow || cur.Style&yaml.FlowStyle != 0
		var next *yaml.Node
		switch {
		case st.IsIndex && cur.Kind == yaml.SequenceNode:
			if st.Index >= len(cur.Content) {
				return nil, false, &lookupError{cur.Line, fmt.Sprintf("index %s out of range: %s has %d items", append(here, st), here, len(cur.Content))}
			}
			next = cur.Content[st.Index]
		case st.IsIndex:
			return nil, false, &lookupError{cur.Line, fmt.Sprintf("%s is not a sequence", here)}
		case cur.Kind != yaml.MappingNode:
			return nil, false, &lookupError{cur.Line, fmt.Sprintf("%s is not a mapping", here)}
		default:
			for j := 0; j+1 < len(cur.Content); j += 2 {
				if k := cur.Content[j]; k.Value == "<<" && k.Tag == "!!merge" {
					return nil, false, &lookupError{k.Line, fmt.Sprintf("the mapping of %s has a merge key (<<): stamp does not edit through merges", append(here, st))}
				}
				if cur.Content[j].Value == st.Key {
					if next != nil {
						return nil, false, &lookupError{cur.Content[j].Line, fmt.Sprintf("key %s appears twice", append(here, st))}
					}
					next = cur.Content[j+1]
				}
			}
			if next == nil {
				return nil, false, &lookupError{cur.Line, fmt.Sprintf("key %s not found", append(here, st))}
			}
		}
		cur = next
	}
	if cur.Kind == yaml.AliasNode {
		return nil, false, &lookupError{cur.Line, fmt.Sprintf("%s is an alias (*%s); stamp does not edit through aliases", append(append(expr.Path{}, at...), path...), cur.Value)}
	}
	return cur, inFlow || cur.Style&yaml.FlowStyle != 0, nil
}

// scalarEdit replaces the scalar node n of the snippet l with v; the
// edit is in snippet coordinates.
func scalarEdit(d *doc, l *located, n *yaml.Node, key string, v string) (textEdit, error) {
	e, why := replaceScalar(l.sdata, newDoc("", l.sdata).starts, n, v, l.inFlow)
	if why != "" {
		return textEdit{}, inputErr(d.rel, l.snip.lo+n.Line, "%s %s: stamp edits the bytes of the file and does not re-encode it", key, why)
	}
	return e, nil
}

// splitEdits sets the repository, tag and digest keys of the mapping at
// l, adding missing ones after its last split key (its last entry when it
// has none), at its keys' indentation.
func splitEdits(d *doc, l *located, key string, v Value) ([]textEdit, error) {
	m := l.node
	var edits []textEdit
	var missing []string
	for _, kv := range v.split() {
		val := mapValue(m, kv[0])
		if val == nil {
			missing = append(missing, kv[0]+": "+render(kv[1], 0, false))
			continue
		}
		if val.Kind != yaml.ScalarNode {
			return nil, inputErr(d.rel, l.snip.lo+val.Line, "%s.%s is not a scalar", key, kv[0])
		}
		e, err := scalarEdit(d, l, val, key+"."+kv[0], kv[1])
		if err != nil {
			return nil, err
		}
		edits = append(edits, e)
	}
	if len(missing) == 0 {
		return edits, nil
	}
	if m.Style&yaml.FlowStyle != 0 || len(m.Content) == 0 {
		return nil, inputErr(d.rel, l.line, "%s is a flow mapping ({...}) without %s: stamp adds keys to block mappings only", key, strings.Join(missingKeys(missing), ", "))
	}
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
		return nil, inputErr(d.rel, l.snip.lo+lastKey.Line, "%s: the entry after which stamp would add %s spans several lines", key, strings.Join(missingKeys(missing), ", "))
	}
	if _, why := replaceScalar(l.sdata, newDoc("", l.sdata).starts, lastVal, lastVal.Value, false); why != "" {
		return nil, inputErr(d.rel, l.snip.lo+lastKey.Line, "%s: the entry after which stamp would add %s %s", key, strings.Join(missingKeys(missing), ", "), why)
	}
	line := l.snip.lo + lastKey.Line // 0-based: the line after the last key
	at, prefix := d.starts[line]-d.starts[l.snip.lo], ""
	if at == len(l.sdata) && l.sdata[len(l.sdata)-1] != '\n' {
		prefix = "\n"
	}
	eol := "\n"
	if bytes.HasSuffix(d.data[d.starts[line-1]:d.starts[line]], []byte("\r\n")) {
		eol = "\r\n"
	}
	indent := strings.Repeat(" ", lastKey.Column-1)
	var b strings.Builder
	b.WriteString(prefix)
	for _, kv := range missing {
		b.WriteString(indent + kv + eol)
	}
	return append(edits, textEdit{start: at, end: at, text: b.String()}), nil
}

func missingKeys(lines []string) []string {
	var keys []string
	for _, l := range lines {
		keys = append(keys, l[:strings.IndexByte(l, ':')])
	}
	return keys
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	for j := 0; j+1 < len(m.Content); j += 2 {
		if m.Content[j].Value == key {
			return m.Content[j+1]
		}
	}
	return nil
}

// applyEdits applies edits to data in one pass. Edits are in spec order;
// a later edit of exactly the same bytes (a split and a scalar target of
// one key) replaces the earlier, as the later of two yq lines would.
// Other overlaps are refused.
func applyEdits(data []byte, edits []textEdit) ([]byte, error) {
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	var kept []textEdit
	grow := 0
	for _, e := range edits {
		if n := len(kept); n > 0 && e.start == kept[n-1].start && e.end == kept[n-1].end && e.end > e.start {
			grow -= len(kept[n-1].text)
			kept[n-1].text = e.text
			grow += len(e.text)
			continue
		}
		if n := len(kept); n > 0 && e.start < kept[n-1].end {
			return nil, fmt.Errorf("two stamp targets overlap")
		}
		kept = append(kept, e)
		grow += len(e.text) - (e.end - e.start)
	}
	out := make([]byte, 0, len(data)+max(grow, 0))
	at := 0
	for _, e := range kept {
		out = append(out, data[at:e.start]...)
		out = append(out, e.text...)
		at = e.end
	}
	return append(out, data[at:]...), nil
}

// checkSnippet applies the target's edits (snippet coordinates) to its
// snippet, re-parses it and checks that it reads as the original with
// only the stamped values changed: want makes that change to the parsed
// original.
func checkSnippet(d *doc, l *located, edits []textEdit, want func(root *yaml.Node)) error {
	out, err := applyEdits(l.sdata, edits)
	if err != nil {
		return inputErr(d.rel, l.line, "%v", err)
	}
	var before, after yaml.Node
	if err := yaml.Unmarshal(l.sdata, &before); err != nil {
		return inputErr(d.rel, l.line, "parsing YAML: %v", err)
	}
	want(before.Content[0])
	var wantV, gotV any
	if err := before.Decode(&wantV); err != nil {
		return inputErr(d.rel, l.line, "decoding: %v", err)
	}
	if err := yaml.Unmarshal(out, &after); err == nil {
		after.Decode(&gotV)
	}
	if !reflect.DeepEqual(wantV, gotV) {
		return inputErr(d.rel, l.line, "the edited text would not read back as the stamped value; stamp refuses to re-encode the file")
	}
	return nil
}

// replaceScalar finds a one-line scalar's bytes in data and renders v in
// its style. why is the reason when it cannot.
func replaceScalar(data []byte, lines []int, n *yaml.Node, v string, inFlow bool) (textEdit, string) {
	switch {
	case n.Kind != yaml.ScalarNode:
		return textEdit{}, "is not a scalar"
	case n.Anchor != "":
		return textEdit{}, fmt.Sprintf("has an anchor (&%s), so its aliases would change too", n.Anchor)
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return textEdit{}, "is a block scalar (| or >)"
	case n.Style&yaml.TaggedStyle != 0:
		return textEdit{}, fmt.Sprintf("has a tag (%s)", n.Tag)
	case n.Line < 1 || n.Line >= len(lines):
		return textEdit{}, "has no position"
	}
	lineEnd := lines[n.Line] - 1
	line := data[lines[n.Line-1]:max(lineEnd, lines[n.Line-1])]
	// Column counts characters, not bytes.
	off := 0
	for c := 1; c < n.Column; c++ {
		if off >= len(line) {
			return textEdit{}, "has no position"
		}
		_, w := utf8.DecodeRune(line[off:])
		off += w
	}
	start := lines[n.Line-1] + off
	end, ok := scalarLen(line[off:], n)
	if !ok {
		return textEdit{}, "spans several lines"
	}
	text := render(v, n.Style, inFlow)
	if strings.ContainsRune(text, '\n') {
		return textEdit{}, "would take a value with a line break"
	}
	if start > 0 && data[start-1] == ':' {
		text = " " + text // an empty value right after its key's colon
	}
	return textEdit{start: start, end: start + end, text: text}, ""
}

// scalarLen is the length of the one-line scalar n written at the start of rest.
func scalarLen(rest []byte, n *yaml.Node) (int, bool) {
	switch {
	case n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0:
		if len(rest) == 0 || (rest[0] != '\'' && rest[0] != '"') {
			return 0, false
		}
		e := quoteEnd(strings.TrimRight(string(rest), "\r"))
		return e, e > 0
	case n.Value == "" && n.Tag == "!!null":
		// An empty value: nothing to replace, insert at the position.
		return 0, true
	default:
		// A plain scalar: its text is its value, followed by the end of
		// the line, a space, or a flow indicator.
		if !bytes.HasPrefix(rest, []byte(n.Value)) {
			return 0, false
		}
		end := len(n.Value)
		if end < len(rest) && !strings.ContainsRune(" \t\r,]}", rune(rest[end])) {
			return 0, false
		}
		return end, true
	}
}

// render writes v as yaml.v3, the YAML library yq is built on, writes a
// string scalar of the given style, in a block or flow collection: a
// quoted style stays; a plain scalar stays plain when it reads back as the
// same string, else it is quoted as yq quotes it.
func render(v string, style yaml.Style, inFlow bool) string {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Style: style & (yaml.SingleQuotedStyle | yaml.DoubleQuotedStyle)}
	m := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "k"}, n}}
	if inFlow {
		m.Style = yaml.FlowStyle
	}
	b, err := yaml.Marshal(m)
	if err != nil {
		return fmt.Sprintf("%q", v)
	}
	s := strings.TrimSuffix(string(b), "\n")
	if inFlow {
		return strings.TrimSuffix(strings.TrimPrefix(s, "{k: "), "}")
	}
	return strings.TrimPrefix(s, "k: ")
}
