// Package spec loads and validates an image unit's patchkit.yaml.
package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"gopkg.in/yaml.v3"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/image/caps"
	"github.com/patchkit/patchkit/internal/lazyre"
	"github.com/patchkit/patchkit/internal/stamp/expr"
	"github.com/patchkit/patchkit/internal/tree"
)

// Defaults, kept in one place.
const (
	// DefaultBuilder is used when build.builder is empty.
	DefaultBuilder = "auto"
	// DefaultStampFormat is used when a stamp target names no format.
	DefaultStampFormat = "tag@digest"
	// DefaultBase is the native builder's base image when build.base is empty.
	DefaultBase = "scratch"
	// DefaultApplyTool is used when apply.tool is empty: the series applies
	// as `git apply --whitespace=error` of the glob.
	DefaultApplyTool = ToolGitApply
	// DefaultApplyOrder is used when apply.order is empty.
	DefaultApplyOrder = OrderGlob
	// DefaultSeriesFile is the quilt series file of order: series when
	// apply.series is empty: series in the patch directory.
	DefaultSeriesFile = "series"
	// FileName is the spec's name inside images/<name>/.
	FileName = "patchkit.yaml"
	// ImagesDir holds one directory per image unit.
	ImagesDir = "images"
)

// Spec is one image unit: images/<Name>/patchkit.yaml.
type Spec struct {
	// Name is the image's directory name.
	Name string `yaml:"-"`
	// File is the spec's path relative to the repository root, for messages.
	File string `yaml:"-"`
	// Dir is the unit's directory relative to the repository root.
	Dir string `yaml:"-"`

	Upstream Upstream `yaml:"upstream"`
	// Patches is the patch directory, relative to the repository root:
	// `patches: DIR`, or `patches: {dir: DIR, ...}` with the keys of Series.
	Patches string `yaml:"-"`
	// Series says how the patches apply (strip level, base directory,
	// recount), from the mapping form of patches; zero for the string form.
	Series Series `yaml:"-"`
	// Apply is the tool the unit's recipe applies the series with, its
	// flags and the order of the patches (apply); see applyspec.go.
	Apply Apply   `yaml:"apply"`
	Test  *Test   `yaml:"test,omitempty"`
	Build Build   `yaml:"build"`
	Image Image   `yaml:"image"`
	Stamp []Stamp `yaml:"stamp,omitempty"`
	// Inputs are extra paths or globs (path.Match syntax, relative by the
	// path rule) whose change rebuilds this unit, beyond the ones patchkit
	// derives (see internal/matrix): a file of another package it reads.
	Inputs []string `yaml:"inputs,omitempty"`
	// Deprecations note each deprecated spelling the file uses (see
	// respellings); Load passes them to diag.Notify.
	Deprecations []diag.Note `yaml:"-" json:"-"`

	lines map[string]int
}

// Series is the mapping form of the patches key: how the series applies, as
// the flags of `git apply` say.
type Series struct {
	// Dir is the patch directory (patches.dir).
	Dir string `yaml:"dir"`
	// Strip is git apply's -p<n> (patches.strip); 0 means the default, 1.
	Strip int `yaml:"strip"`
	// Directory is git apply's --directory (patches.directory): prepended
	// to every stripped name; a relative path inside the upstream tree.
	Directory string `yaml:"directory"`
	// Recount is git apply's --recount (patches.recount): the "@@" line
	// counts are ignored and recounted from the hunks.
	Recount bool `yaml:"recount"`
	// Canonical (patches.canonical) turns verify's canonical check on
	// (true) or off (false); unset, it runs when patchkit wrote the series
	// (some patch is in the canonical text already).
	Canonical *bool `yaml:"canonical"`
}

// Upstream is the pinned upstream.
type Upstream struct {
	URL      string   `yaml:"url"`
	Ref      string   `yaml:"ref"`
	Releases string   `yaml:"releases"`
	Branches []string `yaml:"branches"`
	// Versions are the other places that name the pinned version (see
	// Version): upgrade moves them with the pin, verify checks they agree.
	Versions []Version `yaml:"versions"`

	// URLFrom and RefFrom are set when url or ref is a Source (a mapping)
	// rather than a value; URL and Ref then hold the value read from it.
	URLFrom *Source `yaml:"-"`
	RefFrom *Source `yaml:"-"`
}

// Test is the regression gate.
type Test struct {
	Inject  []Inject `yaml:"inject"`
	Package string   `yaml:"package"`
	Run     string   `yaml:"run"`
}

// Inject copies a file from the repository into the patched tree.
type Inject struct {
	From string `yaml:"from"`
	To   string `yaml:"to"`
}

// Build says how the image is built.
type Build struct {
	// Builder is auto, buildah, docker or native.
	Builder string `yaml:"builder"`
	// Dockerfile is the Dockerfile of the buildah and docker builders,
	// relative to the repository root; the patched tree is its context.
	Dockerfile string `yaml:"dockerfile"`
	// Base is the native builder's base image: "scratch" (the default), a
	// registry reference, or "oci:<dir>", an OCI image layout directory
	// relative to the repository root.
	Base string `yaml:"base"`
	// Files are what the native builder adds on top of Base, in one layer.
	Files []File `yaml:"files"`
	// Context is the build context of the buildah and docker builders:
	// "tree" (the default), the patched tree, or "unit", the unit's
	// directory, for a Dockerfile that fetches the upstream and applies
	// the series itself. patchkit still applies and gates its own tree.
	Context string `yaml:"context"`
	// Target is the Dockerfile stage to build (--target), "" for the last:
	// build.stage (build.target is its deprecated spelling).
	Target string `yaml:"stage"`
	// Args are build arguments (--build-arg NAME=value).
	Args map[string]string `yaml:"args"`
}

// Build contexts.
const (
	ContextTree = "tree"
	ContextUnit = "unit"
)

// File is one file the native builder copies from the patched tree into the image.
type File struct {
	// From is the file's path in the patched tree (build.files[].tree;
	// from is its deprecated spelling).
	From string `yaml:"tree"`
	// To is its absolute path in the image (build.files[].image; to is its
	// deprecated spelling).
	To string `yaml:"image"`
	// Mode is the octal permission bits as written ("0755"); empty leaves
	// the mode to the native builder: 0755 for a source that is executable
	// in the tree, else 0644 (image.DefaultExecMode, image.DefaultFileMode).
	Mode string `yaml:"mode"`
	// Capabilities are Linux file capabilities (cap_net_bind_service),
	// written as the security.capability xattr, permitted and effective, as
	// `setcap <caps>=ep` writes them.
	Capabilities []string `yaml:"capabilities"`
	// Perm is Mode parsed, or 0 when Mode is empty.
	Perm os.FileMode `yaml:"-"`
}

// Image names the pushed image.
type Image struct {
	Repository string `yaml:"repository"`
	Tag        string `yaml:"tag"`
}

// Stamp is a file and key that receive the built digest.
type Stamp struct {
	// File is the target file relative to the repository root.
	File string `yaml:"file"`
	// Kind is yaml (File is YAML, Key names the value) or text (File holds
	// just the value on one line): yaml when Key is given, text when it is
	// not. The spec does not spell it (stamp[].kind is deprecated).
	Kind string `yaml:"-"`
	// Key is the yq path of the value to write (.global.images.x.tag,
	// .args[0], .a["b.c"]); see stamp/expr.
	Key string `yaml:"key"`
	// Format is tag@digest, digest, ref (registry/repository:tag@digest) or
	// split: Key is then a mapping whose repository, tag and digest keys are
	// written together. It defaults to tag@digest unless Value is given.
	Format string `yaml:"format"`
	// Value is a template of the value to write, literal text around
	// {{.Registry}}, {{.Repository}}, {{.Tag}}, {{.Digest}} and
	// {{.Reference}}, when the spec's format is one (stamp[].value is its
	// deprecated spelling); Format is then "".
	Value string `yaml:"-"`
	// Stale is what verify's stamp check reports when the digest stamped
	// here was built from another version of the series: warn (the
	// default) or fail.
	Stale string `yaml:"stale"`
}

// The stamp.stale settings.
const (
	StaleWarn = "warn"
	StaleFail = "fail"
)

// The stamp kinds.
const (
	StampYAML = "yaml"
	StampText = "text"
)

// Line returns the line of the key path (e.g. "upstream.ref") in the spec file, or 0.
func (s *Spec) Line(key string) int { return s.lines[key] }

// allowed lists the keys of each mapping, by key path; "[]" stands for a list element.
var allowed = map[string][]string{
	"":               {"upstream", "patches", "apply", "test", "build", "image", "stamp", "inputs"},
	"apply":          {"tool", "args", "order", "series"},
	"upstream":       {"url", "ref", "releases", "branches", "versions"},
	"patches":        {"dir", "strip", "directory", "recount", "canonical"},
	"upstream.url":   sourceKeys,
	"upstream.ref":   refSourceKeys,
	"test":           {"inject", "package", "run"},
	"test.inject.[]": {"from", "to"},
	"build":          {"builder", "dockerfile", "base", "files", "context", "stage", "args", "target"},
	"build.files.[]": {"tree", "image", "mode", "capabilities", "from", "to"},
	"image":          {"repository", "tag"},
	"stamp.[]":       {"file", "key", "format", "stale", "kind", "value"},
	// the repository config, .patchkit.yaml (see repo.go)
	repoSchema:                       {"build", "shared", "exclude", "unbuilt", "headers"},
	repoSchema + ".headers":          {"policy", "units"},
	repoSchema + ".headers.units.[]": {"unit", "policy"},
	repoSchema + ".build":            {"makefile", "target"},

	// the other places of the pinned version (see versions.go)
	"upstream.versions.[]":     {"file", "dockerfile-arg", "makefile-var", "key", "whole-file", "spelling"},
	repoSchema + ".unbuilt.[]": {"unit", "reason"},
}

var (
	builders     = []string{"auto", "buildah", "docker", "native"}
	stampFormats = []string{"tag@digest", "digest", "ref", "split"}
	fullCommit   = lazyre.New(`^[0-9a-f]{40}$`)
	nameRE       = lazyre.New(`^[a-z0-9][a-z0-9._-]*$`)
)

// Path returns the spec path of image name in images/, relative to the root.
func Path(name string) string { return path.Join(ImagesDir, name, FileName) }

// List returns an IMAGE argument for every image unit under root (see
// Discover and Args): the unit's name, or its directory when another unit
// has the same name. Sorted.
func List(root string) ([]string, error) {
	units, err := Discover(root)
	if err != nil {
		return nil, err
	}
	return Args(units), nil
}

// Load reads and validates the spec of the image unit arg names under root:
// a unit directory or a unique unit name (see Find).
func Load(root, arg string) (*Spec, error) {
	u, err := Find(root, arg)
	if err != nil {
		return nil, err
	}
	return LoadUnit(root, u)
}

// LoadUnit reads and validates the spec of unit u under root.
func LoadUnit(root string, u Unit) (*Spec, error) {
	file := u.File()
	f, err := os.Open(filepath.Join(root, filepath.FromSlash(file)))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &diag.InputError{File: file, Msg: fmt.Sprintf("no image %q (no %s)", u.Name, file)}
		}
		return nil, &diag.InputError{File: file, Msg: "reading spec", Err: err}
	}
	defer f.Close()
	return loadReader(f, root, u)
}

// LoadReader decodes a spec strictly from r and validates it. root is the
// repository root that relative paths must stay inside; name is the image
// name, whose unit is images/<name>.
func LoadReader(r io.Reader, root, name string) (*Spec, error) {
	return loadReader(r, root, Unit{Name: name, Dir: path.Join(ImagesDir, name)})
}

// LoadUnitReader decodes and validates the spec of unit u from r, as if it
// were u's patchkit.yaml: `patchkit init` checks a spec before writing it.
func LoadUnitReader(r io.Reader, root string, u Unit) (*Spec, error) {
	return loadReader(r, root, u)
}

func loadReader(r io.Reader, root string, u Unit) (*Spec, error) {
	file := u.File()
	data, err := io.ReadAll(io.LimitReader(r, 1<<20+1))
	if err != nil {
		return nil, &diag.InputError{File: file, Msg: "reading spec", Err: err}
	}
	if len(data) > 1<<20 {
		return nil, &diag.InputError{File: file, Msg: "spec is larger than 1 MiB"}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &diag.InputError{File: file, Line: 1, Msg: "spec is empty"}
		}
		return nil, yamlError(file, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, &diag.InputError{File: file, Line: doc.Line, Msg: "spec must be a mapping"}
	}
	s := &Spec{Name: u.Name, File: file, Dir: u.Dir, lines: map[string]int{}}
	if err := checkKeys(file, doc.Content[0], "", "", s.lines); err != nil {
		return nil, err
	}
	if err := s.respell(doc.Content[0], "", ""); err != nil {
		return nil, err
	}
	slices.SortStableFunc(s.Deprecations, func(a, b diag.Note) int { return a.Line - b.Line })
	if err := s.decodePatches(doc.Content[0]); err != nil {
		return nil, err
	}
	if err := s.takeSources(doc.Content[0]); err != nil {
		return nil, err
	}
	if err := doc.Content[0].Decode(s); err != nil {
		return nil, yamlError(file, err)
	}
	if err := s.validate(root); err != nil {
		return nil, err
	}
	for _, n := range s.Deprecations {
		diag.Notify(n)
	}
	return s, nil
}

var yamlLine = lazyre.New(`line (\d+): `)

func yamlError(file string, err error) error {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n  ")
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		fmt.Sscanf(m[1], "%d", &line)
		msg = strings.Replace(msg, m[0], "", 1)
	}
	return &diag.InputError{File: file, Line: line, Msg: msg}
}

// checkKeys walks the document and rejects keys the spec does not know,
// recording the line of every key path it sees.
func checkKeys(file string, n *yaml.Node, schema, display string, lines map[string]int) error {
	switch n.Kind {
	case yaml.MappingNode:
		keys, known := allowed[schema]
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			full := join(display, k.Value)
			if known && !contains(keys, k.Value) {
				return &diag.InputError{File: file, Line: k.Line, Key: full,
					Msg: fmt.Sprintf("unknown key (known keys here: %s)", strings.Join(currentKeys(schema, keys), ", "))}
			}
			if seen[k.Value] {
				return &diag.InputError{File: file, Line: k.Line, Key: full, Msg: "duplicate key"}
			}
			seen[k.Value] = true
			lines[full] = k.Line
			if err := checkKeys(file, v, join(schema, k.Value), full, lines); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, el := range n.Content {
			full := fmt.Sprintf("%s[%d]", display, i)
			lines[full] = el.Line
			if err := checkKeys(file, el, join(schema, "[]"), full, lines); err != nil {
				return err
			}
		}
	}
	return nil
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (s *Spec) errf(key, format string, args ...any) error {
	line := s.lines[key]
	if line == 0 {
		// a missing key: point at its parent
		if i := strings.LastIndex(key, "."); i > 0 {
			line = s.lines[key[:i]]
		}
	}
	return &diag.InputError{File: s.File, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// resolvePaths makes every repository path of the spec relative to the root
// (see Rel).
func (s *Spec) resolvePaths() {
	s.Patches = s.Rel(s.Patches)
	if s.Series.Dir != "" {
		s.Series.Dir = s.Patches
	}
	if s.Test != nil {
		for i := range s.Test.Inject {
			s.Test.Inject[i].From = s.Rel(s.Test.Inject[i].From)
		}
	}
	s.Build.Dockerfile = s.Rel(s.Build.Dockerfile)
	if dir, ok := strings.CutPrefix(s.Build.Base, "oci:"); ok && dir != "" {
		s.Build.Base = "oci:" + s.Rel(dir)
	}
	for i := range s.Stamp {
		s.Stamp[i].File = s.Rel(s.Stamp[i].File)
	}
	for i := range s.Inputs {
		s.Inputs[i] = s.Rel(s.Inputs[i])
	}
	for i := range s.Upstream.Versions {
		s.Upstream.Versions[i].File = s.Rel(s.Upstream.Versions[i].File)
	}
}

func (s *Spec) validate(root string) error {
	s.resolvePaths()
	if err := s.resolveSources(root); err != nil {
		return err
	}
	if s.Upstream.URL == "" {
		return s.errf("upstream.url", "required")
	}
	if s.Upstream.Ref == "" {
		return s.errf("upstream.ref", "required: a tag or a commit id")
	}
	if strings.HasPrefix(s.Upstream.Ref, "-") || strings.ContainsAny(s.Upstream.Ref, " \t\n:^~?*[\\") {
		return s.errf("upstream.ref", "%q is not a tag or a commit id", s.Upstream.Ref)
	}
	if s.Upstream.Releases != "" {
		if _, err := path.Match(s.Upstream.Releases, ""); err != nil {
			return s.errf("upstream.releases", "bad glob %q: %v", s.Upstream.Releases, err)
		}
	}
	for i, b := range s.Upstream.Branches {
		if b == "" || strings.HasPrefix(b, "-") || strings.ContainsAny(b, " \t:^~?*[\\") {
			return s.errf(fmt.Sprintf("upstream.branches[%d]", i), "%q is not a branch name", b)
		}
	}
	if s.Patches == "" {
		if s.lines["patches.dir"] == 0 && s.lines["patches.strip"]+s.lines["patches.directory"]+s.lines["patches.recount"] > 0 {
			return s.errf("patches.dir", "required: the patch directory, relative to the repository root (or ./ relative to the spec)")
		}
		return s.errf("patches", "required: the patch directory, relative to the repository root (or ./ relative to the spec)")
	}
	if err := s.validateSeries(); err != nil {
		return err
	}
	if err := s.validateApply(root); err != nil {
		return err
	}
	if err := inRepo(root, s.Patches); err != nil {
		return s.errf(s.patchesKey(), "%v", err)
	}
	if t := s.Test; t != nil {
		for i, in := range t.Inject {
			key := fmt.Sprintf("test.inject[%d]", i)
			if in.From == "" {
				return s.errf(key+".from", "required")
			}
			if err := inRepo(root, in.From); err != nil {
				return s.errf(key+".from", "%v", err)
			}
			if in.To == "" {
				return s.errf(key+".to", "required")
			}
			if err := tree.Clean(in.To); err != nil {
				return s.errf(key+".to", "%v", err)
			}
		}
		if t.Package == "" {
			return s.errf("test.package", "required when test is given")
		}
		if p := strings.TrimPrefix(t.Package, "./"); p != "" && p != "." && p != "..." {
			if err := tree.Clean(strings.TrimSuffix(p, "/...")); err != nil || !strings.HasPrefix(t.Package, "./") {
				return s.errf("test.package", "%q must be a package path inside the tree, like ./pkg/controller", t.Package)
			}
		}
		if t.Run != "" {
			if _, err := regexp.Compile(t.Run); err != nil {
				return s.errf("test.run", "bad regular expression: %v", err)
			}
		}
	}
	if s.Build.Builder == "" {
		s.Build.Builder = DefaultBuilder
	}
	if !contains(builders, s.Build.Builder) {
		return s.errf("build.builder", "%q is not one of %s", s.Build.Builder, strings.Join(builders, ", "))
	}
	if s.Build.Dockerfile != "" {
		if err := inRepo(root, s.Build.Dockerfile); err != nil {
			return s.errf("build.dockerfile", "%v", err)
		}
	}
	if err := s.validateContext(); err != nil {
		return err
	}
	if err := s.validateNative(root); err != nil {
		return err
	}
	if s.Image.Repository != "" {
		if _, err := name.NewRepository(s.Image.Repository); err != nil || strings.ToLower(s.Image.Repository) != s.Image.Repository {
			return s.errf("image.repository", "%q is not a repository name (lower case, like kubeovn or org/kubeovn)", s.Image.Repository)
		}
	}
	if s.Image.Tag != "" {
		if _, err := name.NewTag("x:" + s.Image.Tag); err != nil || strings.ContainsAny(s.Image.Tag, ":@/") {
			return s.errf("image.tag", "%q is not a valid tag ([A-Za-z0-9_.-], up to 128 characters)", s.Image.Tag)
		}
	}
	if err := s.validateInputs(root); err != nil {
		return err
	}
	if err := s.validateVersions(root); err != nil {
		return err
	}
	return s.validateStamps(root)
}

// validateStamps checks each stamp target: its file stays in the
// repository, its key is a yq path, its format or value template is known,
// and no two targets write the same value.
func (s *Spec) validateStamps(root string) error {
	seen := map[string]int{}
	for i := range s.Stamp {
		st := &s.Stamp[i]
		key := fmt.Sprintf("stamp[%d]", i)
		if st.File == "" {
			return s.errf(key+".file", "required")
		}
		if err := inRepo(root, st.File); err != nil {
			return s.errf(key+".file", "%v", err)
		}
		st.Kind = StampYAML
		if st.Key == "" {
			st.Kind = StampText
		}
		target := path.Clean(st.File)
		if st.Kind == StampYAML {
			p, err := expr.ParsePath(st.Key)
			if err != nil {
				return s.errf(key+".key", "%v", err)
			}
			target += " " + p.String()
		}
		if j, dup := seen[target]; dup {
			return s.errf(key, "writes the same value as stamp[%d]", j)
		}
		seen[target] = i
		switch st.Stale {
		case "":
			st.Stale = StaleWarn
		case StaleWarn, StaleFail:
		default:
			return s.errf(key+".stale", "%q is not warn or fail", st.Stale)
		}
		if st.Format == "" {
			st.Format = DefaultStampFormat
		}
		if !contains(stampFormats, st.Format) {
			// a template: literal text around {{.Field}}s, or a constant
			// (a repository name a Makefile stamps), unless it looks like a
			// misspelt format name
			if f := nearFormat(st.Format); f != "" {
				return s.errf(key+".format", "%q is not one of %s (did you mean %s? a template names a field, like {{.Tag}}@{{.Digest}})", st.Format, strings.Join(stampFormats, ", "), f)
			}
			if _, err := expr.ParseTemplate(st.Format); err != nil {
				return s.errf(key+".format", "%v", err)
			}
			st.Value, st.Format = st.Format, ""
			continue
		}
		if st.Format == "split" && st.Kind == StampText {
			return s.errf(key+".format", "split writes a mapping: a text target takes tag@digest, digest, ref or a format template")
		}
	}
	return nil
}

// nearFormat returns the stamp format that f, a format without fields,
// misspells (an edit distance of at most 2, 1 for ref; letters compared
// without case; or a constant that names a digest), or "".
func nearFormat(f string) string {
	if strings.Contains(f, "{{") {
		return ""
	}
	lower := strings.ToLower(f)
	for _, name := range stampFormats {
		if editDistance(lower, name) <= min(2, len(name)/2) {
			return name
		}
	}
	if strings.Contains(lower, "digest") || strings.Contains(lower, "sha256") {
		return "digest" // a constant cannot hold the digest of the image built
	}
	return ""
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// validateContext checks build.context, build.stage and build.args.
func (s *Spec) validateContext() error {
	b := &s.Build
	switch b.Context {
	case "":
		b.Context = ContextTree
	case ContextTree, ContextUnit:
	default:
		return s.errf("build.context", "%q is not tree (the patched tree) or unit (the unit's directory)", b.Context)
	}
	if b.Context == ContextUnit && b.Builder == "native" {
		return s.errf("build.context", "unit needs a Dockerfile builder (buildah, docker), not native")
	}
	if b.Target != "" && !nameRE.MatchString(strings.ToLower(b.Target)) {
		return s.errf("build.stage", "%q is not a stage name", b.Target)
	}
	for k := range b.Args {
		if !argRE.MatchString(k) {
			return s.errf("build.args", "%q is not a build argument name", k)
		}
	}
	return nil
}

var argRE = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ContextDir is the build context relative to the root when build.context
// is unit, and "" when the context is the patched tree.
func (s *Spec) ContextDir() string {
	if s.Build.Context == ContextUnit {
		return s.Dir
	}
	return ""
}

// validateNative checks build.base and build.files.
func (s *Spec) validateNative(root string) error {
	b := &s.Build
	switch {
	case b.Base == "":
		b.Base = DefaultBase
	case b.Base == "scratch":
	case strings.HasPrefix(b.Base, "oci:"):
		dir := strings.TrimPrefix(b.Base, "oci:")
		if dir == "" {
			return s.errf("build.base", "oci: needs a directory, like oci:images/base/oci")
		}
		if err := inRepo(root, dir); err != nil {
			return s.errf("build.base", "%v", err)
		}
	default:
		if _, err := name.ParseReference(b.Base); err != nil {
			return s.errf("build.base", "%q is not scratch, oci:<dir> or an image reference: %v", b.Base, err)
		}
	}
	seen := map[string]int{}
	for i := range b.Files {
		f := &b.Files[i]
		key := fmt.Sprintf("build.files[%d]", i)
		if f.From == "" {
			return s.errf(key+".tree", "required: a path in the patched tree")
		}
		if err := tree.Clean(f.From); err != nil {
			return s.errf(key+".tree", "%v", err)
		}
		if f.To == "" {
			return s.errf(key+".image", "required: an absolute path in the image")
		}
		if !strings.HasPrefix(f.To, "/") || path.Clean(f.To) != f.To || f.To == "/" || strings.ContainsRune(f.To, 0) {
			return s.errf(key+".image", "%q must be a clean absolute path in the image, like /usr/bin/kube-ovn", f.To)
		}
		if j, dup := seen[f.To]; dup {
			return s.errf(key+".image", "%q is also the path of build.files[%d]", f.To, j)
		}
		seen[f.To] = i
		if f.Mode != "" {
			m, err := strconv.ParseUint(strings.TrimPrefix(f.Mode, "0o"), 8, 32)
			if err != nil || m > 0o7777 || m == 0 {
				return s.errf(key+".mode", "%q is not an octal mode like \"0755\"", f.Mode)
			}
			f.Perm = os.FileMode(m & 0o777)
			if m&0o4000 != 0 {
				f.Perm |= os.ModeSetuid
			}
			if m&0o2000 != 0 {
				f.Perm |= os.ModeSetgid
			}
			if m&0o1000 != 0 {
				f.Perm |= os.ModeSticky
			}
		}
		for j, c := range f.Capabilities {
			if _, err := caps.Parse(c); err != nil {
				return s.errf(fmt.Sprintf("%s.capabilities[%d]", key, j), "%v", err)
			}
		}
	}
	return nil
}

// CheckBuild reports whether the spec has what builder (buildah, docker,
// native, or auto) needs, as bad input naming the missing key. Loading does
// not require it, since a spec is valid for apply, verify and
// obsolete-check without a build section.
func (s *Spec) CheckBuild(builder string) error {
	switch builder {
	case "buildah", "docker":
		if s.Build.Dockerfile == "" {
			return s.errf("build.dockerfile", "required by the %s builder", builder)
		}
	case "native":
		if len(s.Build.Files) == 0 {
			return s.errf("build.files", "required by the native builder: the files to add from the patched tree")
		}
	default:
		if s.Build.Dockerfile == "" && len(s.Build.Files) == 0 {
			return s.errf("build.dockerfile", "the image has nothing to build: give build.dockerfile (buildah, docker) or build.files (native)")
		}
	}
	if s.Image.Repository == "" {
		return s.errf("image.repository", "required to build")
	}
	if s.Image.Tag == "" {
		return s.errf("image.tag", "required to build")
	}
	return nil
}

// IsCommitID reports whether ref is a full 40-character commit id.
func IsCommitID(ref string) bool { return fullCommit.MatchString(ref) }

// IsCommitPin reports whether ref spells a commit: a full id, or an
// abbreviated one (7 to 39 hex digits) that upstream resolves uniquely.
func IsCommitPin(ref string) bool { return abbrevCommit.MatchString(ref) }

var abbrevCommit = lazyre.New(`^[0-9a-f]{7,40}$`)

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return s != ""
}

// inRepo checks that p, relative to root, stays inside root, also through symlinks.
func inRepo(root, p string) error {
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") {
		return fmt.Errorf("%q is absolute: paths are relative to the repository root", p)
	}
	clean := path.Clean(p)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return fmt.Errorf("%q leaves the repository", p)
	}
	if root == "" {
		return nil
	}
	absRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil // the root itself is checked by the caller
	}
	// resolve the longest existing prefix
	full := filepath.Join(absRoot, filepath.FromSlash(clean))
	probe := full
	for {
		if _, err := os.Lstat(probe); err == nil {
			break
		}
		parent := filepath.Dir(probe)
		if parent == probe {
			return nil
		}
		probe = parent
	}
	real, err := filepath.EvalSymlinks(probe)
	if err != nil {
		return fmt.Errorf("%q: %v", p, err)
	}
	rel, err := filepath.Rel(absRoot, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%q leaves the repository through a symlink", p)
	}
	return nil
}

// decodePatches reads the patches key, in either form: a string (the patch
// directory) or a mapping with dir, strip, directory and recount. It sets
// Patches and Series.
func (s *Spec) decodePatches(root *yaml.Node) error {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "patches" {
			continue
		}
		v := root.Content[i+1]
		switch v.Kind {
		case yaml.MappingNode:
			if err := v.Decode(&s.Series); err != nil {
				return yamlError(s.File, err)
			}
			s.Patches = s.Series.Dir
		case yaml.ScalarNode:
			if err := v.Decode(&s.Patches); err != nil {
				return yamlError(s.File, err)
			}
		default:
			return &diag.InputError{File: s.File, Line: v.Line, Key: "patches",
				Msg: "want the patch directory, or a mapping with dir, strip, directory and recount"}
		}
	}
	return nil
}

// patchesKey is the key that holds the patch directory: patches, or
// patches.dir in the mapping form.
func (s *Spec) patchesKey() string {
	if s.lines["patches.dir"] > 0 {
		return "patches.dir"
	}
	return "patches"
}

// validateSeries checks the mapping form's strip and directory.
func (s *Spec) validateSeries() error {
	if s.Series.Strip < 0 || (s.lines["patches.strip"] > 0 && s.Series.Strip == 0) {
		return s.errf("patches.strip", "%d: want 1 or more (git apply -p<n>; 1 is the default)", s.Series.Strip)
	}
	if d := s.Series.Directory; d != "" {
		if strings.HasPrefix(d, "/") {
			return s.errf("patches.directory", "%q is absolute: want a path relative to the upstream tree", d)
		}
		if err := tree.Clean(strings.TrimSuffix(d, "/")); err != nil {
			return s.errf("patches.directory", "%q: %v", d, err)
		}
	} else if s.lines["patches.directory"] > 0 {
		return s.errf("patches.directory", "empty: leave the key out to apply at the tree's root")
	}
	return nil
}
