package stamp

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/patchkit/patchkit/internal/lazyre"
	"github.com/patchkit/patchkit/internal/stamp/expr"
)

// A values file can be megabytes of YAML. Parsing all of it with yaml.v3
// takes seconds and hundreds of megabytes, so stamp walks the block
// structure line by line (indentation, keys, sequence items: linear and
// allocation-light) to the entry that holds the target, and parses only
// that entry's lines with yaml.v3, which then gives the target's exact
// style, tag, anchor and position.

// doc is a file being stamped: its bytes, split into lines.
type doc struct {
	rel    string
	data   []byte
	text   string // data, for slicing lines without copies
	starts []int  // starts[i] is the offset of line i (0-based); starts[len] = len(data)
}

func newDoc(rel string, data []byte) *doc {
	starts := make([]int, 1, bytes.Count(data, []byte{'\n'})+2)
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	if starts[len(starts)-1] != len(data) {
		starts = append(starts, len(data))
	}
	return &doc{rel: rel, data: data, text: string(data), starts: starts}
}

// nlines is the number of lines.
func (d *doc) nlines() int { return len(d.starts) - 1 }

// line returns line i without its line ending.
func (d *doc) line(i int) string {
	l := d.text[d.starts[i]:d.starts[i+1]]
	l = strings.TrimSuffix(l, "\n")
	return strings.TrimSuffix(l, "\r")
}

// errAt is bad input at line i (0-based) of the file.
func (d *doc) errAt(i int, format string, args ...any) error {
	return inputErr(d.rel, i+1, format, args...)
}

// blank reports whether line i holds no node: empty, spaces, or a comment.
func (d *doc) blank(i int) bool {
	t := strings.TrimLeft(d.line(i), " \t")
	return t == "" || t[0] == '#'
}

// indent is the number of leading spaces of line i; a tab there is refused.
func (d *doc) indent(i int) (int, error) {
	l := d.line(i)
	n := 0
	for n < len(l) && l[n] == ' ' {
		n++
	}
	if n < len(l) && l[n] == '\t' {
		return 0, d.errAt(i, "a tab in the indentation")
	}
	return n, nil
}

// isItem reports whether s (a line from its indentation on) starts a block sequence item.
func isItem(s string) bool {
	return s == "-" || strings.HasPrefix(s, "- ") || strings.HasPrefix(s, "-\t")
}

// snippet is the lines [lo, hi) that hold a target, and the path from
// their root to it: yaml.v3 parses just these lines.
type snippet struct {
	lo, hi int
	rest   expr.Path
}

// bytes returns the snippet's text.
func (d *doc) snippetBytes(s snippet) []byte { return d.data[d.starts[s.lo]:d.starts[s.hi]] }

// locate walks the block structure to the entry that holds path.
func (d *doc) locate(path expr.Path) (snippet, error) {
	lo, hi, err := d.body()
	if err != nil {
		return snippet{}, err
	}
	for k, step := range path {
		if step.IsIndex {
			ilo, ihi, err := d.findItem(lo, hi, step.Index, path[:k+1])
			if err != nil {
				return snippet{}, err
			}
			return snippet{lo: ilo, hi: ihi, rest: append(expr.Path{{IsIndex: true}}, path[k+1:]...)}, nil
		}
		elo, ehi, val, err := d.findKey(lo, hi, step.Key, path[:k+1])
		if err != nil {
			return snippet{}, err
		}
		if k == len(path)-1 || val != "" {
			// The target's entry, or a value that is not a block
			// collection (flow, alias, scalar): yaml.v3 takes it from here.
			return snippet{lo: elo, hi: ehi, rest: path[k:]}, nil
		}
		lo, hi = elo+1, ehi
	}
	panic("unreachable: a path has at least one step")
}

// body returns the lines of the file's one document, past a leading
// "---"; a second document or a directive is refused.
func (d *doc) body() (int, int, error) {
	lo, hi := 0, d.nlines()
	for lo < hi && d.blank(lo) {
		lo++
	}
	if lo < hi && strings.HasPrefix(d.line(lo), "%") {
		return 0, 0, d.errAt(lo, "YAML directives (%%...) are not supported by stamp")
	}
	if lo < hi && isDocMarker(d.line(lo), "---") {
		lo++
	}
	for i := lo; i < hi; i++ {
		if l := d.line(i); isDocMarker(l, "---") || isDocMarker(l, "...") {
			return 0, 0, d.errAt(i, "a second YAML document (%s): stamp edits files with one document", strings.TrimSpace(l))
		}
	}
	return lo, hi, nil
}

func isDocMarker(l, m string) bool {
	return strings.HasPrefix(l, m) && (len(l) == len(m) || l[len(m)] == ' ' || l[len(m)] == '\t')
}

// firstContent returns the first line in [lo, hi) that holds a node, and its indentation.
func (d *doc) firstContent(lo, hi int) (int, int, error) {
	for i := lo; i < hi; i++ {
		if !d.blank(i) {
			n, err := d.indent(i)
			return i, n, err
		}
	}
	return hi, 0, nil
}

// entryEnd returns the line after the entry starting at line i, at
// indentation n: past a value that continues over lines (a flow
// collection or quoted scalar), deeper lines, blank and comment lines,
// and, in a mapping (inMap), a sequence at the key's own indentation.
func (d *doc) entryEnd(i, n, valueAt, hi int, inMap bool) (int, error) {
	j, err := d.skipFlow(i, valueAt)
	if err != nil {
		return 0, err
	}
	for ; j < hi; j++ {
		if d.blank(j) {
			continue
		}
		m, err := d.indent(j)
		if err != nil {
			return 0, err
		}
		if m > n || (inMap && m == n && isItem(d.line(j)[m:])) {
			continue
		}
		if m < n {
			return 0, d.errAt(j, "indentation %d is less than the %d of the entries above it", m, n)
		}
		break
	}
	return j, nil
}

// findKey finds key in the block mapping on lines [lo, hi): the lines of
// its entry and the value text on the key's line (without properties
// and comment; "" when the value is a block node on the following lines).
func (d *doc) findKey(lo, hi int, key string, at expr.Path) (int, int, string, error) {
	i, n, err := d.firstContent(lo, hi)
	if err != nil {
		return 0, 0, "", err
	}
	parent := max(lo-1, 0)
	if i == hi {
		return 0, 0, "", d.errAt(parent, "key %s not found (%s is empty)", at, at[:len(at)-1])
	}
	if isItem(d.line(i)[n:]) {
		return 0, 0, "", d.errAt(i, "%s is a sequence, not a mapping: use an index like %s[0]", at[:len(at)-1], at[:len(at)-1])
	}
	found, foundHi, foundVal, merge := -1, 0, "", -1
	for i < hi {
		if m, _ := d.indent(i); m != n {
			return 0, 0, "", d.errAt(i, "indentation %d where the mapping's keys are at %d", m, n)
		}
		k, valueAt, err := d.parseKey(i, n)
		if err != nil {
			return 0, 0, "", err
		}
		j, err := d.entryEnd(i, n, valueAt, hi, true)
		if err != nil {
			return 0, 0, "", err
		}
		switch k {
		case key:
			if found >= 0 {
				return 0, 0, "", d.errAt(i, "key %s appears twice (also line %d)", at, found+1)
			}
			found, foundHi, foundVal = i, j, valueText(d.line(i)[valueAt:])
		case "<<":
			merge = i
		}
		i = j
	}
	if merge >= 0 {
		return 0, 0, "", d.errAt(merge, "the mapping of %s has a merge key (<<): stamp does not edit through merges", at)
	}
	if found < 0 {
		return 0, 0, "", d.errAt(parent, "key %s not found", at)
	}
	return found, foundHi, foundVal, nil
}

// findItem finds item idx of the block sequence on lines [lo, hi).
func (d *doc) findItem(lo, hi, idx int, at expr.Path) (int, int, error) {
	seq := at[:len(at)-1]
	i, n, err := d.firstContent(lo, hi)
	if err != nil {
		return 0, 0, err
	}
	parent := max(lo-1, 0)
	if i == hi || !isItem(d.line(i)[n:]) {
		return 0, 0, d.errAt(min(i, parent), "%s is not a block sequence", seq)
	}
	count := 0
	for i < hi {
		if m, _ := d.indent(i); m != n || !isItem(d.line(i)[n:]) {
			return 0, 0, d.errAt(i, "expected an item of %s at indentation %d", seq, n)
		}
		j, err := d.entryEnd(i, n, n+1, hi, false)
		if err != nil {
			return 0, 0, err
		}
		if count == idx {
			return i, j, nil
		}
		count++
		i = j
	}
	return 0, 0, d.errAt(parent, "index %s out of range: %s has %d items", at, seq, count)
}

// parseKey reads the key of the mapping entry on line i at indentation n,
// returning it and the byte offset in the line just after its colon.
func (d *doc) parseKey(i, n int) (string, int, error) {
	l := d.line(i)
	s := l[n:]
	var key string
	rest := 0
	switch {
	case isDocMarker(l, "---") || isDocMarker(l, "..."):
		return "", 0, d.errAt(i, "a second YAML document: stamp edits files with one document")
	case s[0] == '"' || s[0] == '\'':
		end := quoteEnd(s)
		if end < 0 {
			return "", 0, d.errAt(i, "a quoted key must end on its line")
		}
		var k string
		if err := yaml.Unmarshal([]byte(s[:end]), &k); err != nil {
			return "", 0, d.errAt(i, "bad quoted key %s", s[:end])
		}
		key, rest = k, end
		for rest < len(s) && s[rest] == ' ' {
			rest++
		}
		if rest >= len(s) || s[rest] != ':' || (rest+1 < len(s) && s[rest+1] != ' ' && s[rest+1] != '\t') {
			return "", 0, d.errAt(i, "expected ':' after the key %s", s[:end])
		}
	case strings.ContainsRune("?&*!|>[{%@`", rune(s[0])):
		return "", 0, d.errAt(i, "a key written %q (complex key, key with an anchor, alias or tag, or flow collection) is not supported by stamp", s[:1])
	default:
		rest = plainKeyEnd(s)
		if rest < 0 {
			return "", 0, d.errAt(i, "expected a 'key: value' line here")
		}
		key = strings.TrimRight(s[:rest], " ")
	}
	return key, n + rest + 1, nil
}

// quoteEnd returns the index after the closing quote of the quoted
// scalar at the start of s, or -1.
func quoteEnd(s string) int {
	q := s[0]
	for j := 1; j < len(s); j++ {
		switch {
		case q == '"' && s[j] == '\\':
			j++
		case s[j] == q && q == '\'' && j+1 < len(s) && s[j+1] == '\'':
			j++
		case s[j] == q:
			return j + 1
		}
	}
	return -1
}

// plainKeyEnd returns the index of the colon that ends a plain key in s, or -1.
func plainKeyEnd(s string) int {
	for j := 0; j < len(s); j++ {
		switch {
		case s[j] == ':' && (j+1 == len(s) || s[j+1] == ' ' || s[j+1] == '\t'):
			return j
		case s[j] == '#' && j > 0 && (s[j-1] == ' ' || s[j-1] == '\t'):
			return -1
		}
	}
	return -1
}

var propsRE = lazyre.New(`^(?:[&!][^ \t]*[ \t]+)*`)

// valueText is a value's text on its key's line: without the comment and
// without node properties (anchor, tag) when nothing else follows them.
func valueText(s string) string {
	s = strings.TrimSpace(stripComment(s))
	if rest := strings.TrimSpace(propsRE.ReplaceAllString(s+" ", "")); rest == "" {
		return ""
	}
	return s
}

// stripComment cuts a " #" comment off a line's value, outside quotes.
func stripComment(s string) string {
	for j := 0; j < len(s); j++ {
		switch {
		case (s[j] == '"' || s[j] == '\'') && (j == 0 || strings.ContainsRune(" \t[{,:", rune(s[j-1]))):
			if e := quoteEnd(s[j:]); e > 0 {
				j += e - 1
			} else {
				return s
			}
		case s[j] == '#' && (j == 0 || s[j-1] == ' ' || s[j-1] == '\t'):
			return s[:j]
		}
	}
	return s
}

// skipFlow returns the line after the value that starts at byte offset
// at of line i: the next line, unless the value is a flow collection or a
// quoted scalar that continues over the following lines.
func (d *doc) skipFlow(i, at int) (int, error) {
	l := d.line(i)
	if at > len(l) {
		return i + 1, nil
	}
	v := strings.TrimLeft(l[at:], " \t")
	v = v[len(propsRE.FindString(v)):]
	if v == "" || !strings.ContainsRune("\"'[{", rune(v[0])) {
		return i + 1, nil
	}
	depth, quote := 0, byte(0)
	for j := i; j < d.nlines(); j++ {
		s := d.line(j)
		if j == i {
			s = v
		}
		for k := 0; k < len(s); k++ {
			c := s[k]
			switch {
			case quote == '"' && c == '\\':
				k++
			case quote != 0 && c == quote && quote == '\'' && k+1 < len(s) && s[k+1] == '\'':
				k++
			case quote != 0 && c == quote:
				quote = 0
				if depth == 0 {
					return j + 1, nil
				}
			case quote != 0:
			case c == '"' || c == '\'':
				if k == 0 || strings.ContainsRune(" \t[{,:", rune(s[k-1])) {
					quote = c
				}
			case c == '#' && (k == 0 || s[k-1] == ' ' || s[k-1] == '\t'):
				k = len(s)
			case c == '[' || c == '{':
				depth++
			case c == ']' || c == '}':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
	}
	return 0, d.errAt(i, "a flow collection or quoted scalar that does not end")
}

var (
	yamlLineRE      = lazyre.New(`line (\d+)`)
	unknownAnchorRE = lazyre.New(`unknown anchor '([^']*)' referenced`)
)

// parseSnippet parses the snippet's lines with yaml.v3; an error names
// the line in the whole file.
func (d *doc) parseSnippet(s snippet) (*yaml.Node, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(d.snippetBytes(s), &root); err != nil {
		line := s.lo + 1
		msg := yamlLineRE.ReplaceAllStringFunc(strings.TrimPrefix(err.Error(), "yaml: "), func(m string) string {
			n, _ := strconv.Atoi(m[5:])
			line = s.lo + n
			return fmt.Sprintf("line %d", s.lo+n)
		})
		if m := unknownAnchorRE.FindStringSubmatch(msg); m != nil {
			return nil, inputErr(d.rel, line, "an alias (*%s) of an anchor elsewhere in the file: stamp does not edit through aliases", m[1])
		}
		return nil, inputErr(d.rel, line, "parsing YAML: %s", msg)
	}
	if len(root.Content) == 0 {
		return nil, d.errAt(s.lo, "no YAML node here")
	}
	return root.Content[0], nil
}
