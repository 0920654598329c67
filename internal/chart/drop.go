package chart

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/patchkit/patchkit/internal/txn"
)

// Dropped is a patch of the series that upgrade drops: the new release
// carries it.
type Dropped struct {
	File     string `json:"file"`     // the patch file, relative to the root (deleted)
	Evidence string `json:"evidence"` // why it is dropped
}

// carried is what an Upgrade does beyond the vendored directory and the pin.
type carried struct {
	Dropped []Dropped `json:"dropped"` // patches the release carries: deleted, out of the series and the Makefile
	Edited  []string  `json:"edited"`  // the other files changed (spec, Makefile) or deleted (dropped patches)
	Also    []string  `json:"also"`    // other places that name the old version, which upgrade does not move

	edits      []fileEdit
	recipePins []string // a pin the Makefile's fetch line writes as a literal, moved too
}

// planCarried plans what upgrading u from pin to to does beyond the
// directory and the pin: the patches at indexes dropped leave the series
// (planDrops), and the other places that name the old version are listed.
func (f *Fetcher) planCarried(u *Unit, pin, to string, dropped []int, want Files) (carried, []string, error) {
	var c carried
	for _, i := range dropped {
		c.Dropped = append(c.Dropped, Dropped{File: u.Series.Patches[i], Evidence: fmt.Sprintf("%s carries it: it reverse-applies there", to)})
	}
	edits, problems, err := planDrops(f.root, u, dropped)
	if err != nil {
		return c, nil, err
	}
	c.edits = edits
	seen := map[string]bool{}
	for _, e := range edits {
		if !seen[e.File] {
			seen[e.File] = true
			c.Edited = append(c.Edited, e.File)
		}
	}
	oldApp, newApp := "", ""
	if m, err := readChartYAML(filepath.Join(f.root, filepath.FromSlash(chartYAMLPath(f.root, u.Dir)))); err == nil {
		oldApp = m.AppVersion
	}
	if b, ok := want["Chart.yaml"]; ok {
		if m, err := parseChartYAML(b); err == nil {
			newApp = m.AppVersion
		}
	}
	recipe, skip, pins, err := recipeLiteral(f.root, u, pin, to)
	if err != nil {
		return c, nil, err
	}
	c.edits = append(c.edits, recipe...)
	c.recipePins = pins
	for _, e := range recipe {
		if !seen[e.File] {
			seen[e.File] = true
			c.Edited = append(c.Edited, e.File)
		}
	}
	also, err := f.alsoNames(u, pin, to, oldApp, newApp, skip)
	if err != nil {
		return c, nil, err
	}
	c.Also = also
	return c, problems, nil
}

// fileEdit is one change upgrade makes besides the vendored directory and
// the pin: a transform of a file's current bytes, or a deletion. A
// transform runs on the file as it is when written, so that two edits of
// one file (the pin's and a patch line's) compose.
type fileEdit struct {
	File      string                       // relative to the root
	Delete    bool                         //
	Transform func([]byte) ([]byte, error) // nil when Delete
}

// planDrops plans dropping the patches of u at indexes drops: the file
// deleted, its entry out of the spec's series, and the Makefile recipe
// line that applies it removed (a series applied by a glob needs no
// line). A line that applies it with other patches, or that continues
// over several lines, cannot be removed safely: it is a problem, and
// nothing is written.
func planDrops(root string, u *Unit, drops []int) ([]fileEdit, []string, error) {
	if len(drops) == 0 {
		return nil, nil, nil
	}
	var edits []fileEdit
	var problems []string
	specData, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(u.Spec)))
	if err != nil {
		return nil, nil, err
	}
	files := make([]string, 0, len(drops))
	for _, i := range drops {
		files = append(files, u.Series.Patches[i])
	}
	specEdit := func(data []byte) ([]byte, error) { return dropSeriesEntries(data, u.Dir, u.Base, files) }
	if _, err := specEdit(specData); err != nil {
		problems = append(problems, fmt.Sprintf("%s: %v: drop %s from its series by hand", u.Spec, err, strings.Join(files, ", ")))
	} else {
		edits = append(edits, fileEdit{File: u.Spec, Transform: specEdit})
	}
	mk := path.Join(u.Base, "Makefile")
	mkData, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(mk)))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	for _, p := range files {
		if mkData != nil {
			line, n, err := patchLine(mkData, u.Base, p)
			switch {
			case err != nil:
				problems = append(problems, fmt.Sprintf("%s:%d: %v: remove %s from it by hand", mk, n, err, p))
			case line != "":
				edits = append(edits, fileEdit{File: mk, Transform: func(data []byte) ([]byte, error) { return removeLine(data, line) }})
			}
		}
		edits = append(edits, fileEdit{File: p, Delete: true})
	}
	return edits, problems, nil
}

// patchLine finds the Makefile recipe line that applies patch (relative to
// the root) alone: `patch ARGS < patches/x.diff` or `git apply
// patches/x.diff`. It returns "" when no line names the file (a glob
// applies it), and an error (with the line number) when the line that
// names it does more than apply it.
func patchLine(mk []byte, base, patch string) (string, int, error) {
	rel := strings.TrimPrefix(patch, base+"/")
	if base == "." {
		rel = patch
	}
	name := regexp.QuoteMeta(rel)
	named := regexp.MustCompile(`(^|[\s<'"=/])(\./)?` + name + `($|[\s;'"&|)])`)
	alone := regexp.MustCompile(`^\t\s*(?:-|@)*\s*(?:cd\s+\S+\s*&&\s*)?(?:patch(?:\s+-{1,2}[^\s<]+(?:\s+\d+)?)*\s*<\s*(?:\S*/)?` + name + `|git\s+apply(?:\s+-{1,2}[^\s]+)*\s+(?:\S*/)?` + name + `)\s*$`)
	lines := strings.Split(string(mk), "\n")
	found, at := "", 0
	for i, l := range lines {
		l = strings.TrimRight(l, "\r")
		if !named.MatchString(l) {
			continue
		}
		if found != "" {
			return "", i + 1, fmt.Errorf("lines %d and %d name it", at, i+1)
		}
		if !alone.MatchString(l) || strings.HasSuffix(l, "\\") || (i > 0 && strings.HasSuffix(strings.TrimRight(lines[i-1], "\r"), "\\")) {
			return "", i + 1, errors.New("the line does more than apply it")
		}
		found, at = l, i+1
	}
	return found, at, nil
}

// removeLine removes the one line of data equal to line.
func removeLine(data []byte, line string) ([]byte, error) {
	ls := bytes.SplitAfter(data, []byte("\n"))
	out := make([][]byte, 0, len(ls))
	hit := 0
	for _, l := range ls {
		if string(bytes.TrimRight(l, "\r\n")) == line {
			hit++
			continue
		}
		out = append(out, l)
	}
	if hit != 1 {
		return nil, fmt.Errorf("the line %q is there %d times", line, hit)
	}
	return bytes.Join(out, nil), nil
}

// dropSeriesEntries removes the entries naming files (relative to the
// root) from the series of the unit vendoring dir, in the spec's text:
// each entry of a block list on its own line is deleted (a list left empty
// becomes `patches: []`); a flow list on one line is rewritten.
func dropSeriesEntries(data []byte, dir, base string, files []string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	seq, key := seriesPatches(&doc, dir, base)
	if seq == nil {
		return nil, fmt.Errorf("no series.patches for %s", dir)
	}
	drop := map[string]bool{}
	for _, f := range files {
		drop[f] = true
	}
	resolve := func(n *yaml.Node) string {
		v := n.Value
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == "file" {
					v = n.Content[i+1].Value
				}
			}
		}
		if strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") {
			return path.Join(base, v)
		}
		return path.Clean(v)
	}
	lines := strings.SplitAfter(string(data), "\n")
	var keep []*yaml.Node
	var gone []*yaml.Node
	for _, n := range seq.Content {
		if drop[resolve(n)] {
			gone = append(gone, n)
		} else {
			keep = append(keep, n)
		}
	}
	if len(gone) != len(files) {
		return nil, fmt.Errorf("its series does not list each of %s once", strings.Join(files, ", "))
	}
	if seq.Style&yaml.FlowStyle != 0 {
		if seq.Line != key.Line {
			return nil, errors.New("the flow list of patches does not start on its key's line")
		}
		l := lines[seq.Line-1]
		open, end := strings.Index(l, "["), strings.LastIndex(l, "]")
		if open < 0 || end < open {
			return nil, errors.New("the list of patches spans several lines")
		}
		var items []string
		for _, n := range keep {
			if n.Line != seq.Line || n.Kind != yaml.ScalarNode {
				return nil, errors.New("the list of patches spans several lines")
			}
			b, err := yaml.Marshal(n)
			if err != nil {
				return nil, err
			}
			items = append(items, strings.TrimSpace(string(b)))
		}
		lines[seq.Line-1] = l[:open+1] + strings.Join(items, ", ") + l[end:]
		return []byte(strings.Join(lines, "")), nil
	}
	del := map[int]bool{}
	for _, n := range gone {
		if n.Kind != yaml.ScalarNode && !(n.Kind == yaml.MappingNode && n.Style&yaml.FlowStyle != 0) {
			return nil, fmt.Errorf("line %d: an entry over several lines", n.Line)
		}
		l := strings.TrimSpace(lines[n.Line-1])
		if !strings.HasPrefix(l, "- ") {
			return nil, fmt.Errorf("line %d: not one entry on its line", n.Line)
		}
		del[n.Line-1] = true
	}
	if len(keep) == 0 {
		l := lines[key.Line-1]
		i := strings.Index(l, key.Value+":")
		lines[key.Line-1] = l[:i] + key.Value + ": []" + l[i+len(key.Value)+1:]
	}
	var out strings.Builder
	for i, l := range lines {
		if !del[i] {
			out.WriteString(l)
		}
	}
	return []byte(out.String()), nil
}

// seriesPatches finds, in a chart spec's document, the patches sequence of
// the unit whose dir resolves to dir, and its key node.
func seriesPatches(doc *yaml.Node, dir, base string) (*yaml.Node, *yaml.Node) {
	if len(doc.Content) == 0 {
		return nil, nil
	}
	get := func(m *yaml.Node, k string) (*yaml.Node, *yaml.Node) {
		if m == nil || m.Kind != yaml.MappingNode {
			return nil, nil
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == k {
				return m.Content[i], m.Content[i+1]
			}
		}
		return nil, nil
	}
	_, charts := get(doc.Content[0], "charts")
	if charts == nil {
		return nil, nil
	}
	for _, c := range charts.Content {
		_, d := get(c, "dir")
		if d == nil {
			continue
		}
		v := d.Value
		if strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || v == "." {
			v = path.Join(base, v)
		}
		if path.Clean(v) != dir {
			continue
		}
		_, s := get(c, "series")
		k, p := get(s, "patches")
		if p == nil || p.Kind != yaml.SequenceNode {
			return nil, nil
		}
		return p, k
	}
	return nil, nil
}

// addEdits adds the pin (pinData for pinFile, when set) and the edits to
// set: each file is read once, as the transaction's "read" content, and its
// edits are applied to it in order, so a pin move and a recipe line removed
// from one Makefile combine. A deleted file that is already gone is left.
func addEdits(root string, set *txn.Set, pinFile string, pinData []byte, edits []fileEdit) error {
	type pending struct{ read, data []byte }
	files := map[string]*pending{}
	var order []string
	load := func(rel string) (*pending, error) {
		if p, ok := files[rel]; ok {
			return p, nil
		}
		read, absent, err := txn.Snapshot(root, rel)
		if err != nil {
			return nil, err
		}
		if absent {
			return nil, nil
		}
		p := &pending{read: read, data: read}
		files[rel] = p
		order = append(order, rel)
		return p, nil
	}
	if pinFile != "" {
		p, err := load(pinFile)
		if err != nil {
			return err
		}
		if p == nil {
			return fmt.Errorf("%s: %w", pinFile, fs.ErrNotExist)
		}
		p.data = pinData
	}
	deleted := map[string]bool{}
	for _, e := range edits {
		p, err := load(e.File)
		if err != nil {
			return err
		}
		if e.Delete {
			if p != nil {
				deleted[e.File] = true
			}
			continue
		}
		if p == nil {
			return fmt.Errorf("%s: %w", e.File, fs.ErrNotExist)
		}
		out, err := e.Transform(p.data)
		if err != nil {
			return fmt.Errorf("%s: %w", e.File, err)
		}
		p.data = out
	}
	for _, rel := range order {
		p := files[rel]
		switch {
		case deleted[rel]:
			set.Delete(rel, p.read)
		case !bytes.Equal(p.data, p.read):
			set.Write(rel, p.data, p.read)
		}
	}
	return nil
}
