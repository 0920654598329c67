package stamp

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/spec"
)

// The stamp formats, as spec stamp[].format names them.
const (
	FormatTagDigest = "tag@digest"
	FormatDigest    = "digest"
	FormatRef       = "ref"
	FormatSplit     = "split"
)

// ErrBadDigest is wrapped by the error for a digest that is not sha256:<64 hex>.
var ErrBadDigest = errors.New("not a sha256 digest")

var digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// CheckDigest returns an error wrapping ErrBadDigest unless d is
// sha256:<64 lower-case hex digits>.
func CheckDigest(d string) error {
	if !digestRE.MatchString(d) {
		return fmt.Errorf("%q: %w (want sha256:<64 hex digits>)", d, ErrBadDigest)
	}
	return nil
}

// Value is what a stamp writes.
type Value struct {
	// Registry is where the image is pushed (ghcr.io/org); "" when none.
	Registry string
	// Repository is image.repository.
	Repository string
	// Tag is the image's tag.
	Tag string
	// Digest is sha256:<64 hex>.
	Digest string
}

// FullRepository is Registry/Repository, or Repository without a registry.
func (v Value) FullRepository() string {
	if v.Registry == "" {
		return v.Repository
	}
	return strings.TrimSuffix(v.Registry, "/") + "/" + v.Repository
}

// Scalar renders v for a scalar format: tag@digest, digest or ref.
func (v Value) Scalar(format string) string {
	switch format {
	case FormatDigest:
		return v.Digest
	case FormatRef:
		return v.FullRepository() + ":" + v.Tag + "@" + v.Digest
	default:
		return v.Tag + "@" + v.Digest
	}
}

// split is the map the split format writes, in the order it adds keys.
func (v Value) split() [][2]string {
	return [][2]string{{"repository", v.FullRepository()}, {"tag", v.Tag}, {"digest", v.Digest}}
}

// Change is one value a stamp writes.
type Change struct {
	// File is the target file, relative to the root; Key its stamp key.
	File string `json:"file"`
	Key  string `json:"key"`
	// Format is the stamp's format; Old and New the values before and
	// after (for split, each subkey is its own Change, Key ending in it).
	Format string `json:"format"`
	Old    string `json:"old"`
	New    string `json:"new"`
}

// Plan is every stamp target of a spec, edited in memory and checked.
// Nothing is written until Write.
type Plan struct {
	Changes []Change
	files   []*file
}

type file struct {
	rel  string
	path string
	mode os.FileMode
	old  []byte
	new  []byte
}

// Prepare reads each stamp target of s under root, finds its key and
// computes the new content. Any problem (a bad digest, a missing file or
// key, a key that holds the wrong kind of node) fails the whole plan, so
// a stamp is all or nothing.
func Prepare(root string, s *spec.Spec, v Value) (*Plan, error) {
	if err := CheckDigest(v.Digest); err != nil {
		return nil, &diag.InputError{File: "--digest", Msg: "bad digest", Err: err}
	}
	if v.Tag == "" {
		return nil, &diag.InputError{File: s.File, Line: s.Line("image.tag"), Key: "image.tag", Msg: "required to stamp"}
	}
	if len(s.Stamp) == 0 {
		return nil, &diag.InputError{File: s.File, Key: "stamp", Msg: "the image has no stamp targets"}
	}
	// Group the targets by file, in spec order.
	byFile := map[string][]int{}
	var order []string
	for i, st := range s.Stamp {
		if _, ok := byFile[st.File]; !ok {
			order = append(order, st.File)
		}
		byFile[st.File] = append(byFile[st.File], i)
	}
	p := &Plan{}
	for _, rel := range order {
		f, changes, err := planFile(root, s, rel, byFile[rel], v)
		if err != nil {
			return nil, err
		}
		p.files = append(p.files, f)
		p.Changes = append(p.Changes, changes...)
	}
	return p, nil
}

// Write writes every changed file atomically: a temporary file beside it,
// synced, then renamed over it, keeping its mode.
func (p *Plan) Write() error {
	for _, f := range p.files {
		if bytes.Equal(f.old, f.new) {
			continue
		}
		if err := writeAtomic(f.path, f.new, f.mode); err != nil {
			return fmt.Errorf("writing %s: %w", f.rel, err)
		}
	}
	return nil
}

// Content returns the new content of the target file rel, for tests and dry runs.
func (p *Plan) Content(rel string) ([]byte, bool) {
	for _, f := range p.files {
		if f.rel == rel {
			return f.new, true
		}
	}
	return nil, false
}

func writeAtomic(path string, data []byte, mode os.FileMode) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".patchkit-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(mode); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// target is one stamp key located in a file.
type target struct {
	idx    int
	key    string
	format string
	text   *yaml.Node // the node in the document parsed for positions
	tree   *yaml.Node // the same node in the document edited as a tree
}

func planFile(root string, s *spec.Spec, rel string, idxs []int, v Value) (*file, []Change, error) {
	specErr := func(i int, field, format string, args ...any) error {
		key := fmt.Sprintf("stamp[%d].%s", i, field)
		return &diag.InputError{File: s.File, Line: s.Line(key), Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	path := filepath.Join(root, filepath.FromSlash(rel))
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, specErr(idxs[0], "file", "%v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, specErr(idxs[0], "file", "%v", err)
	}
	var textDoc, treeDoc yaml.Node
	if err := yaml.Unmarshal(data, &textDoc); err != nil {
		return nil, nil, &diag.InputError{File: rel, Msg: "parsing YAML", Err: err}
	}
	yaml.Unmarshal(data, &treeDoc)
	if len(textDoc.Content) == 0 || textDoc.Content[0].Kind != yaml.MappingNode {
		return nil, nil, &diag.InputError{File: rel, Line: 1, Msg: "a stamp target must be a YAML mapping"}
	}
	var targets []target
	for _, i := range idxs {
		st := s.Stamp[i]
		path := strings.Split(strings.TrimPrefix(st.Key, "."), ".")
		tn, err := lookup(textDoc.Content[0], path)
		if err != nil {
			return nil, nil, &diag.InputError{File: rel, Line: err.line, Msg: fmt.Sprintf("%s (stamp[%d].key %s in %s)", err.msg, i, st.Key, s.File)}
		}
		rn, _ := lookup(treeDoc.Content[0], path)
		if st.Format == FormatSplit {
			if tn.Kind != yaml.MappingNode {
				return nil, nil, &diag.InputError{File: rel, Line: tn.Line, Msg: fmt.Sprintf("%s must be a mapping for the split format (repository, tag, digest)", st.Key)}
			}
		} else if tn.Kind != yaml.ScalarNode {
			return nil, nil, &diag.InputError{File: rel, Line: tn.Line, Msg: fmt.Sprintf("%s must be a scalar for the %s format", st.Key, st.Format)}
		}
		targets = append(targets, target{idx: i, key: st.Key, format: st.Format, text: tn, tree: rn})
	}

	// Edit the tree: the oracle for the text edit, and the fallback.
	var changes []Change
	for _, t := range targets {
		if t.format == FormatSplit {
			for _, kv := range v.split() {
				old := setMapKey(t.tree, kv[0], kv[1])
				changes = append(changes, Change{File: rel, Key: t.key + "." + kv[0], Format: t.format, Old: old, New: kv[1]})
			}
			continue
		}
		nv := v.Scalar(t.format)
		changes = append(changes, Change{File: rel, Key: t.key, Format: t.format, Old: t.tree.Value, New: nv})
		setScalar(t.tree, nv)
	}
	var want any
	if err := treeDoc.Decode(&want); err != nil {
		return nil, nil, fmt.Errorf("stamping %s: %w", rel, err)
	}
	out, ok := editText(data, targets, v)
	if ok {
		var got any
		if yaml.Unmarshal(out, &got) != nil || !reflect.DeepEqual(got, want) {
			ok = false
		}
	}
	if !ok {
		// The text edit could not keep everything: re-render the tree.
		// Comments and order survive, blank lines and spacing may not.
		out, err = encode(&treeDoc, data)
		if err != nil {
			return nil, nil, fmt.Errorf("stamping %s: %w", rel, err)
		}
	}
	return &file{rel: rel, path: path, mode: st.Mode().Perm(), old: data, new: out}, changes, nil
}

type lookupError struct {
	line int
	msg  string
}

// lookup follows a key path through mappings.
func lookup(n *yaml.Node, path []string) (*yaml.Node, *lookupError) {
	cur := n
	for i, k := range path {
		if cur.Kind == yaml.AliasNode {
			return nil, &lookupError{cur.Line, fmt.Sprintf(".%s is an alias; stamp does not edit through aliases", strings.Join(path[:i], "."))}
		}
		if cur.Kind != yaml.MappingNode {
			return nil, &lookupError{cur.Line, fmt.Sprintf(".%s is not a mapping", strings.Join(path[:i], "."))}
		}
		var next *yaml.Node
		for j := 0; j+1 < len(cur.Content); j += 2 {
			if cur.Content[j].Value == k {
				next = cur.Content[j+1]
			}
		}
		if next == nil {
			return nil, &lookupError{cur.Line, fmt.Sprintf("key .%s not found", strings.Join(path[:i+1], "."))}
		}
		cur = next
	}
	if cur.Kind == yaml.AliasNode {
		return nil, &lookupError{cur.Line, fmt.Sprintf(".%s is an alias; stamp does not edit through aliases", strings.Join(path, "."))}
	}
	return cur, nil
}

// setScalar sets a scalar node's value as a string, keeping its style
// unless a plain scalar would read as something else.
func setScalar(n *yaml.Node, v string) {
	n.Value = v
	n.Tag = "!!str"
	if n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) == 0 && !plainSafe(v) {
		n.Style = yaml.DoubleQuotedStyle
	}
	if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		n.Style = 0
	}
}

// setMapKey sets key in mapping m, adding it at the end when missing, and
// returns its old value.
func setMapKey(m *yaml.Node, key, v string) string {
	for j := 0; j+1 < len(m.Content); j += 2 {
		if m.Content[j].Value == key {
			old := m.Content[j+1].Value
			if m.Content[j+1].Kind != yaml.ScalarNode {
				*m.Content[j+1] = yaml.Node{Kind: yaml.ScalarNode}
			}
			setScalar(m.Content[j+1], v)
			return old
		}
	}
	val := &yaml.Node{Kind: yaml.ScalarNode}
	setScalar(val, v)
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, val)
	return ""
}

// plainSafe reports whether v reads back as the same string when written
// as a plain scalar.
func plainSafe(v string) bool {
	if v == "" || strings.ContainsAny(v, "\n\r\t#,[]{}\"'`") || strings.Contains(v, ": ") || strings.HasSuffix(v, ":") {
		return false
	}
	var m map[string]any
	if yaml.Unmarshal([]byte("k: "+v), &m) != nil {
		return false
	}
	s, ok := m["k"].(string)
	return ok && s == v
}

// encode renders the edited tree with the indentation the file used.
func encode(doc *yaml.Node, original []byte) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(indentOf(doc.Content[0]))
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// indentOf finds the file's indentation step: the column of the first
// nested block mapping's keys past its parent's.
func indentOf(n *yaml.Node) int {
	if n.Kind != yaml.MappingNode || n.Style&yaml.FlowStyle != 0 {
		return 2
	}
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, v := n.Content[j], n.Content[j+1]
		if v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0 {
			if d := v.Content[0].Column - k.Column; d > 0 {
				return d
			}
		}
	}
	for j := 1; j < len(n.Content); j += 2 {
		if d := indentOf(n.Content[j]); d != 2 {
			return d
		}
	}
	return 2
}
