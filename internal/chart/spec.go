package chart

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/patchkit/patchkit/internal/buildfile"
	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/spec"
	"github.com/patchkit/patchkit/internal/upstream"
)

// FileName is the spec file of the chart units of one directory (a package).
const FileName = spec.ChartFileName

// Upstream kinds.
const (
	KindHelm = "helm" // a Helm repository: index.yaml and chart archives
	KindOCI  = "oci"  // an OCI chart reference, oci://host/path/chart
	KindGit  = "git"  // a subdirectory of a tagged git upstream
	KindURL  = "url"  // one file, a release asset
)

// Tools that apply a series.
const (
	ToolPatch    = "patch"     // GNU patch, one invocation per file
	ToolGitApply = "git-apply" // git apply
)

// File is one patchkit-charts.yaml.
type File struct {
	Path   string  `yaml:"-"` // relative to the root, slash-separated
	Charts []*Unit `yaml:"charts"`
}

// Unit is one vendored directory.
type Unit struct {
	// Dir is the vendored directory (relative to the spec's directory when
	// it starts with ./ or ../, else to the root). After Load it is
	// relative to the root.
	Dir      string    `yaml:"dir"`
	Upstream Upstream  `yaml:"upstream"`
	Version  Version   `yaml:"version"`
	Remove   []string  `yaml:"remove,omitempty"` // paths under Dir the Makefile removes after fetching
	Series   Series    `yaml:"series"`
	Image    string    `yaml:"image,omitempty"` // the image unit whose pin names the same upstream version
	Spec     string    `yaml:"-"`               // the spec file
	Line     int       `yaml:"-"`
	Base     string    `yaml:"-"` // the spec's directory, relative to the root
	node     yaml.Node `yaml:"-"`
	resolved string
}

// Upstream is where the chart comes from. Exactly one of Helm, OCI, Git, URL.
type Upstream struct {
	Helm  string `yaml:"helm,omitempty"`  // Helm repository URL
	Chart string `yaml:"chart,omitempty"` // chart name in it
	OCI   string `yaml:"oci,omitempty"`   // oci://host/path/chart (the tag is the version)
	Git   string `yaml:"git,omitempty"`   // git URL
	Path  string `yaml:"path,omitempty"`  // the subdirectory of Git that Dir holds
	Tag   string `yaml:"tag,omitempty"`   // Git tag, with {version} (default "{version}")
	URL   string `yaml:"url,omitempty"`   // a file's URL, with {version}
	Name  string `yaml:"name,omitempty"`  // the file's name in Dir (default: the URL's base name)
}

// Version is the pin: a literal, or where the repository keeps it.
type Version struct {
	Value       string `yaml:"value,omitempty"`
	MakefileVar string `yaml:"makefile-var,omitempty"`
	Makefile    string `yaml:"makefile,omitempty"`
	ChartYAML   string `yaml:"chart-yaml,omitempty"` // version | appVersion of the vendored Chart.yaml
	Prefix      string `yaml:"prefix,omitempty"`     // stripped from what is read
}

// UnmarshalYAML takes a scalar as a literal pin.
func (v *Version) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		v.Value = n.Value
		return nil
	}
	type plain Version
	dec := (*plain)(v)
	return strictNode(n, dec)
}

// Series is the order and the tool the Makefile applies the patches with.
type Series struct {
	Tool    string   `yaml:"tool"`              // patch | git-apply
	Args    string   `yaml:"args,omitempty"`    // the tool's options, as the Makefile writes them
	Workdir string   `yaml:"workdir,omitempty"` // where the Makefile runs it (default: the spec's directory)
	Patches []string `yaml:"patches,omitempty"` // in the Makefile's order
	// Target is the file operand of `patch FILE < p`, relative to Workdir.
	Target string `yaml:"target,omitempty"`
	// PatchArgs holds, per patch, options that replace Args for it: an
	// entry of patches written as {file: ./patches/x.patch, args: -p3}.
	PatchArgs []string `yaml:"-"`
}

// UnmarshalYAML reads a patches entry as a path or {file, args}.
func (s *Series) UnmarshalYAML(n *yaml.Node) error {
	type plain struct {
		Tool    string      `yaml:"tool"`
		Args    string      `yaml:"args,omitempty"`
		Workdir string      `yaml:"workdir,omitempty"`
		Patches []yaml.Node `yaml:"patches,omitempty"`
		Target  string      `yaml:"target,omitempty"`
	}
	var p plain
	if err := strictNode(n, &p); err != nil {
		return err
	}
	*s = Series{Tool: p.Tool, Args: p.Args, Workdir: p.Workdir, Target: p.Target}
	for _, e := range p.Patches {
		if e.Kind == yaml.ScalarNode {
			s.Patches = append(s.Patches, e.Value)
			s.PatchArgs = append(s.PatchArgs, "")
			continue
		}
		var m struct {
			File string `yaml:"file"`
			Args string `yaml:"args"`
		}
		if err := strictNode(&e, &m); err != nil {
			return fmt.Errorf("line %d: %w", e.Line, err)
		}
		if m.File == "" {
			return fmt.Errorf("line %d: a patches entry needs file", e.Line)
		}
		s.Patches = append(s.Patches, m.File)
		s.PatchArgs = append(s.PatchArgs, m.Args)
	}
	return nil
}

// ArgsOf is the options patch i is applied with.
func (s *Series) ArgsOf(i int) string {
	if i < len(s.PatchArgs) && s.PatchArgs[i] != "" {
		return s.PatchArgs[i]
	}
	return s.Args
}

func strictNode(n *yaml.Node, v any) error {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	if err := enc.Encode(n); err != nil {
		return err
	}
	dec := yaml.NewDecoder(&b)
	dec.KnownFields(true)
	return dec.Decode(v)
}

// Discover returns the chart spec files under root, sorted (the walk of
// spec.Discovery.ChartFiles).
func Discover(root string) ([]string, error) {
	return spec.NewDiscovery(root).ChartFiles()
}

// LoadAll loads every chart unit under root.
func LoadAll(root string) ([]*Unit, error) {
	return loadAll(root, spec.NewDiscovery(root))
}

// loadAll loads every chart unit d finds under root.
func loadAll(root string, d *spec.Discovery) ([]*Unit, error) {
	files, err := d.ChartFiles()
	if err != nil {
		return nil, err
	}
	var units []*Unit
	for _, f := range files {
		cf, err := Load(root, f)
		if err != nil {
			return nil, err
		}
		units = append(units, cf.Charts...)
	}
	return units, nil
}

// Find returns the chart unit whose directory is arg (relative to root), or nil.
func Find(root, arg string) (*Unit, error) {
	units, err := LoadAll(root)
	if err != nil {
		return nil, err
	}
	return findIn(units, arg), nil
}

// findIn is the unit of units whose directory arg names, or nil.
func findIn(units []*Unit, arg string) *Unit {
	clean := path.Clean(strings.TrimPrefix(filepath.ToSlash(arg), "./"))
	for _, u := range units {
		if u.Dir == clean {
			return u
		}
	}
	return nil
}

// Load reads and validates the spec file rel (relative to root).
func Load(root, rel string) (*File, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, &diag.InputError{File: rel, Msg: "reading chart spec", Err: err}
	}
	return Parse(root, rel, data)
}

// Parse decodes a spec strictly: unknown keys are errors naming file and line.
func Parse(root, rel string, data []byte) (*File, error) {
	f, _, err := parse(root, rel, data, false)
	return f, err
}

// parse is Parse; with alone, a unit that does not validate is left out
// of the file and returned in bad instead of being the file's error.
func parse(root, rel string, data []byte, alone bool) (*File, []UnitError, error) {
	f := &File{Path: rel}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(f); err != nil {
		return nil, nil, yamlErr(rel, err)
	}
	var doc yaml.Node
	_ = yaml.Unmarshal(data, &doc)
	lines := chartLines(&doc)
	base := path.Dir(rel)
	seen := map[string]bool{}
	var bad []UnitError
	good := f.Charts[:0]
	for i, u := range f.Charts {
		u.Spec, u.Base = rel, base
		if i < len(lines) {
			u.Line = lines[i]
		}
		dir, derr := u.repoPath("dir", u.Dir)
		err := u.validate(root)
		if err == nil && seen[u.Dir] {
			err = u.errf("dir", "%s is vendored by two units", u.Dir)
		}
		if err != nil {
			if !alone {
				return nil, nil, err
			}
			if derr != nil {
				dir = rel
			}
			bad = append(bad, UnitError{Dir: dir, Spec: rel, Line: u.Line, Err: err})
			continue
		}
		seen[u.Dir] = true
		good = append(good, u)
	}
	f.Charts = good
	if len(f.Charts) == 0 && len(bad) == 0 {
		return nil, nil, &diag.InputError{File: rel, Line: 1, Key: "charts", Msg: "no chart units"}
	}
	return f, bad, nil
}

// UnitError is a chart unit that does not load, for a run over every unit
// to report alone (SplitArgsAlone): its directory (the spec file when the
// entry names none that resolves, or the file does not parse), its entry's
// spec file and line, and why.
type UnitError struct {
	Dir  string
	Spec string
	Line int
	Err  error
}

func chartLines(doc *yaml.Node) []int {
	if len(doc.Content) == 0 {
		return nil
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "charts" {
			var out []int
			for _, c := range m.Content[i+1].Content {
				out = append(out, c.Line)
			}
			return out
		}
	}
	return nil
}

func yamlErr(file string, err error) error {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "yaml: ")
	line := 0
	if _, rest, ok := strings.Cut(msg, "line "); ok {
		fmt.Sscanf(rest, "%d", &line)
	}
	return &diag.InputError{File: file, Line: line, Msg: msg}
}

func (u *Unit) errf(key, format string, args ...any) error {
	return &diag.InputError{File: u.Spec, Line: u.Line, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// repoPath resolves a spec path: ./ and ../ are relative to the spec's
// directory, others to the root. It must stay inside the repository.
func (u *Unit) repoPath(key, p string) (string, error) {
	if p == "" {
		return "", u.errf(key, "empty path")
	}
	if path.IsAbs(p) {
		return "", u.errf(key, "%s is absolute", p)
	}
	var r string
	if strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || p == "." {
		r = path.Join(u.Base, p)
	} else {
		r = path.Clean(p)
	}
	if r == ".." || strings.HasPrefix(r, "../") {
		return "", u.errf(key, "%s leaves the repository", p)
	}
	return r, nil
}

func (u *Unit) validate(root string) error {
	var err error
	if u.Dir, err = u.repoPath("dir", u.Dir); err != nil {
		return err
	}
	up := u.Upstream
	n := 0
	for _, s := range []string{up.Helm, up.OCI, up.Git, up.URL} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return u.errf("upstream", "name exactly one of helm, oci, git, url")
	}
	switch u.Kind() {
	case KindHelm:
		if up.Chart == "" {
			return u.errf("upstream.chart", "a Helm repository needs the chart's name")
		}
	case KindOCI:
		if !strings.HasPrefix(up.OCI, "oci://") {
			return u.errf("upstream.oci", "%q is not an oci:// reference", up.OCI)
		}
	case KindGit:
		if err := upstream.CheckURL(up.Git); err != nil {
			return u.errf("upstream.git", "upstream %s: %v", upstream.Redact(up.Git), err)
		}
	}
	if u.Kind() != KindHelm && up.Chart != "" {
		return u.errf("upstream.chart", "only a Helm repository has a chart name")
	}
	v := u.Version
	switch {
	case v.Value != "" && (v.MakefileVar != "" || v.ChartYAML != ""),
		v.MakefileVar != "" && v.ChartYAML != "":
		return u.errf("version", "name one of a value, makefile-var, chart-yaml")
	case v.Value == "" && v.MakefileVar == "" && v.ChartYAML == "":
		return u.errf("version", "missing: the pin (a value, makefile-var with makefile, or chart-yaml: version|appVersion)")
	case v.MakefileVar != "" && v.Makefile == "":
		return u.errf("version.makefile", "makefile-var needs makefile")
	case v.ChartYAML != "" && v.ChartYAML != "version" && v.ChartYAML != "appVersion":
		return u.errf("version.chart-yaml", "%q is not version or appVersion", v.ChartYAML)
	}
	if v.Makefile != "" {
		if u.Version.Makefile, err = u.repoPath("version.makefile", v.Makefile); err != nil {
			return err
		}
	}
	s := &u.Series
	switch s.Tool {
	case "":
		if len(s.Patches) > 0 {
			return u.errf("series.tool", "missing: patch or git-apply")
		}
	case ToolPatch, ToolGitApply:
	default:
		return u.errf("series.tool", "%q is not patch or git-apply", s.Tool)
	}
	if _, err := u.PatchOptions(); err != nil {
		return err
	}
	for i := range s.Patches {
		if _, err := u.optionsOf(s.ArgsOf(i)); err != nil {
			return err
		}
	}
	wd := s.Workdir
	if wd == "" {
		wd = "."
	}
	if s.Workdir, err = u.repoPath("series.workdir", wd); err != nil {
		return err
	}
	for i, p := range s.Patches {
		if s.Patches[i], err = u.repoPath(fmt.Sprintf("series.patches[%d]", i), p); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(s.Patches[i]))); err != nil {
			return u.errf(fmt.Sprintf("series.patches[%d]", i), "%s does not exist", p)
		}
	}
	if u.Image != "" {
		if u.Image, err = u.repoPath("image", u.Image); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(u.Image), spec.FileName)); err != nil {
			return u.errf("image", "%s is no image unit (no %s there)", u.Image, spec.FileName)
		}
	}
	if _, err := u.Pin(root); err != nil {
		return err
	}
	return nil
}

// Kind is the upstream's kind.
func (u *Unit) Kind() string {
	switch {
	case u.Upstream.Helm != "":
		return KindHelm
	case u.Upstream.OCI != "":
		return KindOCI
	case u.Upstream.Git != "":
		return KindGit
	}
	return KindURL
}

// URL is the upstream's URL, as init lists it.
func (u *Unit) URL() string {
	switch u.Kind() {
	case KindHelm:
		return strings.TrimSuffix(u.Upstream.Helm, "/") + "/" + u.Upstream.Chart
	case KindOCI:
		return u.Upstream.OCI
	case KindGit:
		return u.Upstream.Git
	}
	return u.Upstream.URL
}

// Pin reads the version where the spec says the repository keeps it.
func (u *Unit) Pin(root string) (string, error) {
	if u.resolved != "" {
		return u.resolved, nil
	}
	v := u.Version
	var val string
	switch {
	case v.Value != "":
		val = v.Value
	case v.MakefileVar != "":
		mf, err := buildfile.ReadMakefile(filepath.Join(root, filepath.FromSlash(v.Makefile)), v.Makefile)
		if err != nil {
			return "", u.errf("version.makefile", "%v", err)
		}
		s, _, err := mf.Value(v.MakefileVar)
		if err != nil {
			return "", u.errf("version.makefile-var", "%v", err)
		}
		val = s
	case v.ChartYAML != "":
		cy := chartYAMLPath(root, u.Dir)
		meta, err := readChartYAML(filepath.Join(root, filepath.FromSlash(cy)))
		if err != nil {
			return "", u.errf("version.chart-yaml", "%s: %v", cy, err)
		}
		if v.ChartYAML == "version" {
			val = meta.Version
		} else {
			val = meta.AppVersion
		}
		if val == "" {
			return "", u.errf("version.chart-yaml", "%s has no %s", cy, v.ChartYAML)
		}
	}
	val = strings.TrimPrefix(strings.Trim(val, `"'`), v.Prefix)
	if val == "" {
		return "", u.errf("version", "the pin is empty")
	}
	u.resolved = val
	return val, nil
}

// chartMeta is the part of Chart.yaml patchkit reads.
type chartMeta struct {
	Name       string `yaml:"name"`
	Version    string `yaml:"version"`
	AppVersion string `yaml:"appVersion"`
}

func readChartYAML(p string) (*chartMeta, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	return parseChartYAML(data)
}

func parseChartYAML(data []byte) (*chartMeta, error) {
	var m chartMeta
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// PatchOptions reads the GNU patch options of series.args.
func (u *Unit) PatchOptions() (PatchOptions, error) { return u.optionsOf(u.Series.Args) }

// optionsOf reads the options args (series.args or a patch's own).
func (u *Unit) optionsOf(args string) (PatchOptions, error) {
	opt := DefaultPatchOptions()
	s := u.Series
	if s.Tool == ToolGitApply {
		opt.Strip, opt.Fuzz, opt.NoBackup = 1, 0, true
	}
	f := strings.Fields(args)
	for i := 0; i < len(f); i++ {
		a := f[i]
		next := func() (string, error) {
			if i+1 >= len(f) {
				return "", u.errf("series.args", "%s needs a value", a)
			}
			i++
			return f[i], nil
		}
		num := func(s string) (int, error) {
			var n int
			if _, err := fmt.Sscanf(s, "%d", &n); err != nil || n < 0 || fmt.Sprint(n) != s {
				return 0, u.errf("series.args", "%q is not a number", s)
			}
			return n, nil
		}
		var err error
		switch {
		case a == "-p" || a == "--strip":
			var v string
			if v, err = next(); err == nil {
				opt.Strip, err = num(v)
			}
		case strings.HasPrefix(a, "-p"):
			opt.Strip, err = num(a[2:])
		case strings.HasPrefix(a, "--strip="):
			opt.Strip, err = num(a[len("--strip="):])
		case s.Tool == ToolPatch && (a == "-N" || a == "--forward"):
			opt.Forward = true
		case s.Tool == ToolPatch && (a == "-f" || a == "--force"):
			opt.Force = true
		case s.Tool == ToolPatch && (a == "-F" || a == "--fuzz"):
			var v string
			if v, err = next(); err == nil {
				opt.Fuzz, err = num(v)
			}
		case s.Tool == ToolPatch && strings.HasPrefix(a, "-F"):
			opt.Fuzz, err = num(a[2:])
		case s.Tool == ToolPatch && strings.HasPrefix(a, "--fuzz="):
			opt.Fuzz, err = num(a[len("--fuzz="):])
		case s.Tool == ToolPatch && a == "--no-backup-if-mismatch":
			opt.NoBackup = true
		case s.Tool == ToolPatch && (a == "-s" || a == "--quiet" || a == "--silent"):
		case s.Tool == ToolGitApply && (a == "-v" || a == "--verbose" || a == "--whitespace=nowarn"):
		default:
			return opt, u.errf("series.args", "%s option %q is not modelled (patchkit reads -pN, -N/--forward, -f, -F N, --no-backup-if-mismatch, -s)", s.Tool, a)
		}
		if err != nil {
			return opt, err
		}
	}
	return opt, nil
}

// errNoSpec is returned when nothing names the unit.
var errNoSpec = errors.New("no chart unit")

// chartYAMLPath is dir/Chart.yaml, or, when dir holds charts (tar --strip
// of a charts/ directory), the Chart.yaml of its only subdirectory that has one.
func chartYAMLPath(root, dir string) string {
	cy := path.Join(dir, "Chart.yaml")
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(cy))); err == nil {
		return cy
	}
	ms, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(dir), "*", "Chart.yaml"))
	if len(ms) > 1 {
		// charts/ holding the upstream's charts: the one named after the package
		for _, m := range ms {
			if filepath.Base(filepath.Dir(m)) == path.Base(path.Dir(dir)) {
				ms = []string{m}
				break
			}
		}
	}
	if len(ms) == 1 {
		rel, _ := filepath.Rel(root, ms[0])
		return filepath.ToSlash(rel)
	}
	return cy
}

// SplitArgsAlone is SplitArgs for a command whose units fail alone: with
// no argument, a chart spec file or entry that does not load is returned
// in bad (UnitError), and every other chart unit is loaded. With
// arguments, one that names a unit whose entry does not load is that
// entry's error; the entries not named do not matter.
func SplitArgsAlone(d *spec.Discovery, args []string) ([]*Unit, []string, []UnitError, error) {
	all, bad, err := loadAllAlone(d)
	if err != nil || len(args) == 0 {
		return all, nil, bad, err
	}
	var units []*Unit
	var rest []string
	for _, a := range args {
		if u := findIn(all, a); u != nil {
			units = append(units, u)
			continue
		}
		clean := path.Clean(strings.TrimPrefix(filepath.ToSlash(a), "./"))
		for _, b := range bad {
			if b.Dir == clean {
				return nil, nil, nil, b.Err
			}
		}
		rest = append(rest, a)
	}
	return units, rest, nil, nil
}

// loadAllAlone loads every chart unit d finds, keeping those that load;
// the entries and files that do not are returned in bad.
func loadAllAlone(d *spec.Discovery) ([]*Unit, []UnitError, error) {
	files, err := d.ChartFiles()
	if err != nil {
		return nil, nil, err
	}
	var units []*Unit
	var bad []UnitError
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(d.Root(), filepath.FromSlash(f)))
		if err != nil {
			bad = append(bad, UnitError{Dir: f, Spec: f, Err: &diag.InputError{File: f, Msg: "reading chart spec", Err: err}})
			continue
		}
		cf, fbad, err := parse(d.Root(), f, data, true)
		if err != nil {
			line := 0
			var ie *diag.InputError
			if errors.As(err, &ie) {
				line = ie.Line
			}
			bad = append(bad, UnitError{Dir: f, Spec: f, Line: line, Err: err})
			continue
		}
		units = append(units, cf.Charts...)
		bad = append(bad, fbad...)
	}
	return units, bad, nil
}

// SplitArgs splits a command's IMAGE arguments into the chart units they
// name (by vendored directory) and the rest; with no argument, every chart
// unit and no rest. The chart units come from d's one walk of the tree,
// which also finds the image units.
func SplitArgs(d *spec.Discovery, args []string) ([]*Unit, []string, error) {
	all, err := loadAll(d.Root(), d)
	if err != nil || len(args) == 0 {
		return all, nil, err
	}
	var units []*Unit
	var rest []string
	for _, a := range args {
		if u := findIn(all, a); u != nil {
			units = append(units, u)
			continue
		}
		rest = append(rest, a)
	}
	return units, rest, nil
}
