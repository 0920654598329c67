package chart

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/patchkit/patchkit/internal/spec"
)

// Check names and statuses, as verify reports them.
const (
	CheckVendored = "vendored"
	CheckPins     = "chart-pin"
	StatusPass    = "pass"
	StatusFail    = "fail"
	StatusWarn    = "warn"
)

// Causes of a vendored check that fails.
const (
	CauseSeries   = "series fails to apply"
	CauseUpstream = "upstream version differs"
	CauseHand     = "edited by hand"
)

// Check is one verify check of a chart unit.
type Check struct {
	File    string   // the file the check is about (a patch, the spec)
	Check   string   // vendored | chart-pin
	Status  string   // pass | fail | warn
	Message string   //
	Cause   string   // for a failed vendored check: one of the Cause constants
	Files   []string // the vendored files that differ, relative to the root
	Line    int
}

// Result is verify's result for one chart unit.
type Result struct {
	Unit   string // the vendored directory
	Pin    string
	OK     bool
	Checks []Check
}

// Expected is the unit's directory as the Makefile would leave it: the
// upstream at the pin, less the removed paths, with the series applied in
// order with the Makefile's tool. problems lists what the tool refused,
// per patch ("patches/x.diff: charts/x/f.yaml: hunk #1 FAILED at 3").
func (f *Fetcher) Expected(ctx context.Context, u *Unit, version string) (Files, []string, Files, error) {
	out, problems, _, up, err := f.expected(ctx, u, version, false)
	return out, problems, up, err
}

// expected is Expected; with carry (upgrade), a patch that does not apply
// but reverse-applies (the release carries it) is left out of the series
// instead of being a problem, and its index is returned in dropped.
func (f *Fetcher) expected(ctx context.Context, u *Unit, version string, carry bool) (Files, []string, []int, Files, error) {
	up, err := f.Fetch(ctx, u, version)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	prefix, err := relUnder(u.Series.Workdir, u.Dir)
	if err != nil {
		return nil, nil, nil, nil, u.errf("series.workdir", "%v", err)
	}
	ws := Files{}
	for p, b := range up {
		ws[path.Join(prefix, p)] = b
	}
	var problems []string
	var dropped []int
	for i, p := range u.Series.Patches {
		opt, err := u.optionsOf(u.Series.ArgsOf(i))
		if err != nil {
			return nil, nil, nil, nil, err
		}
		opt.File = u.Series.Target
		opt.GitApply = u.Series.Tool == ToolGitApply
		data, err := os.ReadFile(filepath.Join(f.root, filepath.FromSlash(p)))
		if err != nil {
			return nil, nil, nil, nil, err
		}
		before := ws
		if carry {
			before = cloneFiles(ws)
		}
		res, err := GNUPatch(ws, p, data, opt)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		if carry && !res.OK() {
			ro := opt
			ro.Reverse, ro.Force, ro.NoBackup = true, true, true
			if rr, err := GNUPatch(cloneFiles(before), p, data, ro); err == nil && rr.OK() {
				ws = before
				dropped = append(dropped, i)
				continue
			}
		}
		for _, pr := range res.Problems() {
			problems = append(problems, p+": "+pr)
		}
	}
	out := Files{}
	for p, b := range ws {
		if p == prefix || strings.HasPrefix(p, prefix+"/") || prefix == "." {
			r := strings.TrimPrefix(strings.TrimPrefix(p, prefix), "/")
			if prefix == "." {
				r = p
			}
			out[r] = b
		}
	}
	return out, problems, dropped, up, nil
}

// relUnder is dir relative to base; dir must be base or under it.
func relUnder(base, dir string) (string, error) {
	if base == "." || base == "" {
		return dir, nil
	}
	if dir == base {
		return ".", nil
	}
	if !strings.HasPrefix(dir, base+"/") {
		return "", fmt.Errorf("the vendored directory %s is not under the directory the series runs in, %s", dir, base)
	}
	return strings.TrimPrefix(dir, base+"/"), nil
}

// ReadDir reads every file under root/dir (dotfiles and .helmignore'd files too).
func ReadDir(root, dir string) (Files, error) {
	files := Files{}
	base := filepath.Join(root, filepath.FromSlash(dir))
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == base && os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(base, p)
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	return files, err
}

// Diff lists the paths whose bytes differ, or that only one side has.
func Diff(a, b Files) []string {
	var out []string
	for p, x := range a {
		if y, ok := b[p]; !ok || !bytes.Equal(x, y) {
			out = append(out, p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// Verify runs the chart unit's checks: vendored, and chart-pin when the
// unit names its image unit.
func (f *Fetcher) Verify(ctx context.Context, u *Unit) (*Result, error) {
	pin, err := u.Pin(f.root)
	if err != nil {
		return nil, err
	}
	res := &Result{Unit: u.Dir, Pin: pin, OK: true}
	c, err := f.vendored(ctx, u, pin)
	if err != nil {
		return nil, err
	}
	res.Checks = append(res.Checks, c)
	if u.Image != "" {
		pc, err := pinCheck(f.root, u, pin)
		if err != nil {
			return nil, err
		}
		res.Checks = append(res.Checks, pc)
	}
	for _, c := range res.Checks {
		if c.Status == StatusFail {
			res.OK = false
		}
	}
	return res, nil
}

func (f *Fetcher) vendored(ctx context.Context, u *Unit, pin string) (Check, error) {
	c := Check{File: u.Spec, Check: CheckVendored, Line: u.Line}
	want, problems, up, err := f.Expected(ctx, u, pin)
	if err != nil {
		if nf, ok := err.(*NotFoundError); ok {
			c.Status, c.Cause = StatusFail, CauseUpstream
			c.Message = fmt.Sprintf("%s: the pin %s: %v", CauseUpstream, pin, nf)
			return c, nil
		}
		return c, err
	}
	have, err := ReadDir(f.root, u.Dir)
	if err != nil {
		return c, err
	}
	if u.Kind() == KindURL {
		// A release asset is one file: the directory may hold others.
		for p := range have {
			if _, ok := want[p]; !ok {
				delete(have, p)
			}
		}
	}
	diff := Diff(want, have)
	for i, p := range diff {
		diff[i] = path.Join(u.Dir, p)
	}
	c.Files = diff
	src := fmt.Sprintf("%s %s", u.URL(), pin)
	if u.Kind() == KindURL {
		src = u.AssetURL(pin)
	}
	closerV, closerN, closer := "", 0, false
	if len(problems) > 0 || len(diff) > 0 {
		closerV, closerN, closer = f.closerAtImage(ctx, u, pin, have, len(diff))
	}
	switch {
	case closer:
		c.Status, c.Cause = StatusFail, CauseUpstream
		c.Message = fmt.Sprintf("%s: %s is closer to upstream %s, the version its image unit %s is built from (%s differ), than to the pin %s (%s", CauseUpstream, u.Dir, closerV, u.Image, plural(closerN, "file", "files"), pin, plural(len(diff), "file", "files"))
		if len(problems) > 0 {
			c.Message += ", and the series does not apply there: " + strings.Join(problems, "; ")
		}
		c.Message += "): re-vendor it at one version"
	case len(problems) > 0:
		c.Status, c.Cause = StatusFail, CauseSeries
		how := "GNU patch"
		if u.Series.Tool == ToolGitApply {
			how = "git apply"
		}
		c.Message = fmt.Sprintf("%s: %s refuses it on %s: %s", CauseSeries, how, src, strings.Join(problems, "; "))
		if p := problems[0]; strings.Contains(p, ": ") {
			c.File, c.Line = p[:strings.Index(p, ": ")], 0
		}
	case len(diff) == 0:
		c.Status = StatusPass
		c.Message = fmt.Sprintf("%s equals %s plus %s, byte for byte (%s)", u.Dir, src, plural(len(u.Series.Patches), "patch", "patches"), plural(len(want), "file", "files"))
		return c, nil
	default:
		c.Status = StatusFail
		hv, uv := chartVersionOf(have), chartVersionOf(up)
		if hv != "" && uv != "" && hv != uv {
			c.Cause = CauseUpstream
			c.Message = fmt.Sprintf("%s: the vendored %s/Chart.yaml is version %s, the pin %s (%s) is version %s: re-vendor it with the Makefile's update target, or with patchkit upgrade %s --to %s", CauseUpstream, u.Dir, hv, pin, u.URL(), uv, u.Dir, pin)
		} else {
			c.Cause = CauseHand
			c.Message = fmt.Sprintf("%s: %s differs from %s plus its series", CauseHand, u.Dir, src)
		}
	}
	if len(diff) > 0 {
		shown := diff
		if len(shown) > 20 {
			shown = shown[:20]
		}
		c.Message += fmt.Sprintf("; files that differ: %s", strings.Join(shown, ", "))
		if len(diff) > len(shown) {
			c.Message += fmt.Sprintf(" and %d more", len(diff)-len(shown))
		}
	}
	return c, nil
}

func chartVersionOf(files Files) string {
	b, ok := files["Chart.yaml"]
	if !ok {
		return ""
	}
	m, err := parseChartYAML(b)
	if err != nil {
		return ""
	}
	return m.Version
}

// pinCheck warns when the image unit's pin and the chart's name different
// upstream versions: the chart's appVersion (else its pin) against the
// image's resolved upstream.ref, each without a leading v.
func pinCheck(root string, u *Unit, pin string) (Check, error) {
	c := Check{File: u.Spec, Check: CheckPins, Line: u.Line}
	su, err := spec.Find(root, u.Image)
	if err != nil {
		return c, err
	}
	s, err := spec.LoadUnit(root, su)
	if err != nil {
		return c, err
	}
	chartApp := pin
	what := "pin"
	if m, err := readChartYAML(filepath.Join(root, filepath.FromSlash(chartYAMLPath(root, u.Dir)))); err == nil && m.AppVersion != "" {
		chartApp, what = m.AppVersion, "appVersion"
	}
	if strings.TrimPrefix(chartApp, "v") == strings.TrimPrefix(s.Upstream.Ref, "v") {
		c.Status = StatusPass
		c.Message = fmt.Sprintf("image %s is built from %s, the chart's %s", su.Dir, s.Upstream.Ref, what)
		return c, nil
	}
	c.Status = StatusWarn
	c.Message = fmt.Sprintf("image %s is built from %s, but the chart %s has %s %s: they name different upstream versions", su.Dir, s.Upstream.Ref, u.Dir, what, chartApp)
	return c, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// closerAtImage reports whether the vendored files are closer to the
// upstream at the image unit's version than at the pin (fewer files
// differ): a chart vendored from one release and labelled with another.
// Only a git chart unit shares its versions with the image.
func (f *Fetcher) closerAtImage(ctx context.Context, u *Unit, pin string, have Files, atPin int) (string, int, bool) {
	if u.Image == "" || u.Kind() != KindGit {
		return "", 0, false
	}
	su, err := spec.Find(f.root, u.Image)
	if err != nil {
		return "", 0, false
	}
	s, err := spec.LoadUnit(f.root, su)
	if err != nil {
		return "", 0, false
	}
	v := s.Upstream.Ref
	if strings.HasPrefix(u.Tag("{}"), "v") || !strings.HasPrefix(pin, "v") {
		v = strings.TrimPrefix(v, "v")
	}
	if v == pin {
		return "", 0, false
	}
	want, problems, _, err := f.Expected(ctx, u, v)
	if err != nil || len(problems) > 0 {
		return "", 0, false
	}
	n := len(Diff(want, have))
	return v, n, n < atPin
}
