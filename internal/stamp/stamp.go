package stamp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/lazyre"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/stamp/expr"
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

var digestRE = lazyre.New(`^sha256:[0-9a-f]{64}$`)

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
	// Series names the patches the image was built from (series.Idents);
	// the stamp record keeps it, and its fingerprint, beside each stamped
	// file. nil is the empty series.
	Series []series.Ident
	// By says who records the stamp: ByBuild, or ByStamp (the default).
	By string
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

// Field returns the value of a template field (see expr.Fields).
func (v Value) Field(name string) string {
	switch name {
	case "Registry":
		return strings.TrimSuffix(v.Registry, "/")
	case "Repository":
		return v.Repository
	case "Tag":
		return v.Tag
	case "Digest":
		return v.Digest
	case "Reference":
		return v.Scalar(FormatRef)
	}
	return ""
}

// Change is one value a stamp writes.
type Change struct {
	// File is the target file, relative to the root; Key its stamp key
	// ("" for a text file).
	File string `json:"file"`
	Key  string `json:"key"`
	// Format is the stamp's format, or "value" for a value template; Old
	// and New the values before and after (for split, each subkey is its
	// own Change, Key ending in it).
	Format string `json:"format"`
	Old    string `json:"old"`
	New    string `json:"new"`
}

// Plan is every stamp target of a spec, edited in memory and checked.
// Nothing is written until Write, which takes each file's lock and redoes
// the edit on the file as it then is.
type Plan struct {
	Changes []Change
	spec    *spec.Spec
	value   Value
	files   []*file
	// Waiting is called once when another patchkit holds the repository
	// lock that Write takes, with its holder (txn.Options.Waiting).
	Waiting func(holder string)
	// LockTimeout is how long Write waits for the repository lock
	// (txn.Options.LockTimeout).
	LockTimeout time.Duration
	root        string          // the root, as given
	realRoot    string          // the root, symlinks resolved
	started     time.Time       // when Write began; older temporary files are stale
	ctx         context.Context // WriteContext's, for the lock waits
}

type file struct {
	rel  string // as the (first) stamp entry names it
	path string // the file itself, symlinks resolved
	idxs []int  // its stamp entries
	old  []byte
	new  []byte
	// changes are the values the plan writes in this file.
	changes []Change
}

// Prepare reads each stamp target of s under root, finds its key and
// computes the new content. Any problem (a bad digest, a missing file or
// key, a key that holds the wrong kind of node, a file stamp cannot edit
// exactly) fails the whole plan, so a stamp is all or nothing.
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
	if v.By == "" {
		v.By = ByStamp
	}
	p := &Plan{spec: s, value: v, root: root}
	if rr, err := filepath.EvalSymlinks(root); err == nil {
		p.realRoot = rr
	}
	byPath := map[string]*file{}
	for i, st := range s.Stamp {
		path, err := resolve(root, st.File)
		if err != nil {
			return nil, specErr(s, i, "file", "%v", err)
		}
		f := byPath[path]
		if f == nil {
			f = &file{rel: st.File, path: path}
			byPath[path] = f
			p.files = append(p.files, f)
		}
		f.idxs = append(f.idxs, i)
	}
	for _, f := range p.files {
		st, err := os.Stat(f.path)
		if err == nil {
			err = checkFile(f.rel, st)
		}
		if err == nil {
			f.old, err = os.ReadFile(f.path)
		}
		if err != nil {
			if diag.IsInput(err) {
				return nil, err
			}
			return nil, specErr(s, f.idxs[0], "file", "%v", err)
		}
		f.new, f.changes, err = p.edit(f, f.old)
		if err != nil {
			return nil, err
		}
		p.Changes = append(p.Changes, f.changes...)
	}
	return p, nil
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

func specErr(s *spec.Spec, i int, field, format string, args ...any) error {
	key := fmt.Sprintf("stamp[%d].%s", i, field)
	return &diag.InputError{File: s.File, Line: s.Line(key), Key: key, Msg: fmt.Sprintf(format, args...)}
}

func inputErr(file string, line int, format string, args ...any) error {
	return diag.Inputf(file, line, format, args...)
}

// resolve returns the file rel names under root with symlinks resolved,
// refusing one that leaves the repository.
func resolve(root, rel string) (string, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	path, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return "", err
	}
	if r, err := filepath.Rel(realRoot, path); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s resolves to %s, outside the repository: stamp does not write there", rel, path)
	}
	return path, nil
}

// render is the scalar stamp entry i writes.
func (p *Plan) render(i int) (string, error) {
	st := p.spec.Stamp[i]
	if st.Value == "" {
		return p.value.Scalar(st.Format), nil
	}
	t, err := expr.ParseTemplate(st.Value)
	if err != nil {
		return "", specErr(p.spec, i, "format", "%v", err)
	}
	if t.Uses("Registry") && p.value.Registry == "" {
		return "", specErr(p.spec, i, "format", "uses {{.Registry}} but no registry is set: give --registry or set REGISTRY")
	}
	return t.Render(p.value.Field), nil
}

// edit computes the new content of f from data, its current content.
func (p *Plan) edit(f *file, data []byte) ([]byte, []Change, error) {
	if p.spec.Stamp[f.idxs[0]].Kind == spec.StampText {
		return p.editText(f, data)
	}
	d := newDoc(f.rel, data)
	var edits []textEdit
	var changes []Change
	for _, i := range f.idxs {
		st := p.spec.Stamp[i]
		if st.Kind == spec.StampText {
			return nil, nil, &diag.InputError{File: p.spec.File, Line: p.spec.Line(fmt.Sprintf("stamp[%d]", i)), Key: fmt.Sprintf("stamp[%d]", i),
				Msg: fmt.Sprintf("%s is a text target (no key) and also a YAML target of stamp[%d]", st.File, f.idxs[0])}
		}
		e, c, err := p.editTarget(d, i)
		if err != nil {
			return nil, nil, err
		}
		edits, changes = append(edits, e...), append(changes, c...)
	}
	out, err := applyEdits(data, edits)
	if err != nil {
		return nil, nil, inputErr(f.rel, 0, "%v", err)
	}
	return out, changes, nil
}

// editTarget computes the edits of stamp entry i in d, in file coordinates.
func (p *Plan) editTarget(d *doc, i int) ([]textEdit, []Change, error) {
	st := p.spec.Stamp[i]
	path, err := expr.ParsePath(st.Key)
	if err != nil {
		return nil, nil, specErr(p.spec, i, "key", "%v", err)
	}
	l, err := d.locateTarget(path)
	if err != nil {
		return nil, nil, err
	}
	key := path.String()
	var edits []textEdit
	var changes []Change
	var want func(*yaml.Node)
	if st.Format == FormatSplit && st.Value == "" {
		if l.node.Kind != yaml.MappingNode {
			return nil, nil, inputErr(d.rel, l.line, "%s must be a mapping for the split format (repository, tag, digest)", key)
		}
		if edits, err = splitEdits(d, l, key, p.value); err != nil {
			return nil, nil, err
		}
		for _, kv := range p.value.split() {
			old := ""
			if n := mapValue(l.node, kv[0]); n != nil {
				old = n.Value
			}
			changes = append(changes, Change{File: d.rel, Key: st.Key + "." + kv[0], Format: st.Format, Old: old, New: kv[1]})
		}
		want = func(n *yaml.Node) {
			for _, kv := range p.value.split() {
				setMapKey(n, kv[0], kv[1])
			}
		}
	} else {
		if l.node.Kind != yaml.ScalarNode {
			return nil, nil, inputErr(d.rel, l.line, "%s must be a scalar to take %s", key, describe(st))
		}
		nv, err := p.render(i)
		if err != nil {
			return nil, nil, err
		}
		e, err := scalarEdit(d, l, l.node, key, nv)
		if err != nil {
			return nil, nil, err
		}
		edits = []textEdit{e}
		changes = []Change{{File: d.rel, Key: st.Key, Format: formatName(st), Old: l.node.Value, New: nv}}
		want = func(n *yaml.Node) { n.Value, n.Tag, n.Style = nv, "!!str", yaml.DoubleQuotedStyle }
	}
	if err := checkSnippet(d, l, edits, func(root *yaml.Node) {
		if n, _, err := lookup(root, l.snip.rest, nil); err == nil {
			want(n)
		}
	}); err != nil {
		return nil, nil, err
	}
	base := d.starts[l.snip.lo]
	for j := range edits {
		edits[j].start += base
		edits[j].end += base
	}
	return edits, changes, nil
}

func formatName(st spec.Stamp) string {
	if st.Value != "" {
		return "value"
	}
	return st.Format
}

func describe(st spec.Stamp) string {
	if st.Value != "" {
		return "a format template"
	}
	return "the " + st.Format + " format"
}

// setMapKey sets key in mapping m as a string, adding it when missing.
func setMapKey(m *yaml.Node, key, v string) {
	if n := mapValue(m, key); n != nil {
		*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
		return
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v})
}

// editText stamps a text target: the file is the value on one line, its
// line ending kept.
func (p *Plan) editText(f *file, data []byte) ([]byte, []Change, error) {
	if len(f.idxs) > 1 {
		return nil, nil, specErr(p.spec, f.idxs[1], "file", "%s is a text target of stamp[%d]: it holds one value", f.rel, f.idxs[0])
	}
	i := f.idxs[0]
	body, eol := string(data), ""
	switch {
	case strings.HasSuffix(body, "\r\n"):
		body, eol = body[:len(body)-2], "\r\n"
	case strings.HasSuffix(body, "\n"):
		body, eol = body[:len(body)-1], "\n"
	case body == "":
		eol = "\n"
	}
	if j := strings.IndexAny(body, "\r\n"); j >= 0 {
		return nil, nil, inputErr(f.rel, strings.Count(body[:j], "\n")+2, "a text stamp target holds one line (the value); this file has more")
	}
	nv, err := p.render(i)
	if err != nil {
		return nil, nil, err
	}
	st := p.spec.Stamp[i]
	return []byte(nv + eol), []Change{{File: f.rel, Format: formatName(st), Old: body, New: nv}}, nil
}
