package chart

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/patchkit/patchkit/internal/buildfile"
	"github.com/patchkit/patchkit/internal/lazyre"
	"github.com/patchkit/patchkit/internal/series"
	"github.com/patchkit/patchkit/internal/spec"
)

// Found is a chart unit init found in a package Makefile, or a line or a
// patch file it could not place.
type Found struct {
	Unit    *Unit    // nil for a problem that names no unit
	Dir     string   // the vendored directory (relative to the root)
	Spec    string   // the spec file it goes to
	Pin     string   // the pin, read where From says (set by WriteSpecs)
	From    string   // where the pin is read: "makefile-var CHART_VERSION (packages/x/Makefile:5)"
	Problem string   // why it cannot be adopted, naming file:line; "" when it can
	Notes   []string // what the user should know
	Status  string   // new | written | exists | unreadable
}

var (
	reRepoAdd  = lazyre.New(`helm\s+repo\s+add\s+(\S+)\s+(\S+)`)
	reHelmPull = lazyre.New(`helm\s+pull\s+(\S+)((?:\s+[^;&|]*)?)`)
	reArchive  = lazyre.New(`(https?://\S+?)/archive/refs/tags/([^\s"']+?)\.tar\.gz\S*\s*\|\s*tar\s+([^;&|]*)`)
	reAsset    = lazyre.New(`(?:^|[;&|(]\s*)(?:wget|curl)\s[^;&|]*?["']?(https?://[^\s"']+)["']?[^;&|]*?(?:\s-O\s*|\s-o\s*|\s--output[= ]|>\s*)["']?([^\s"';&|]+)`)
	rePatch    = lazyre.New(`(?:^|[;&|(]\s*)(?:cd\s+(\S+)\s*&&\s*)?patch((?:\s+[^<;&|]*)?)<\s*(\S+)`)
	reGitApply = lazyre.New(`(?:^|[;&|(]\s*)git\s+apply((?:\s+[^;&|]*)?)`)
	reFor      = lazyre.New(`for\s+(\w+)\s+in\s+([^;]+);`)
	reRm       = lazyre.New(`(?:^|[;&|]\s*)rm\s+-(?:rf|fr|r|f)\s+([^;&|]+)`)
	reMv       = lazyre.New(`(?:^|[;&|]\s*)mv\s+(?:-f\s+)?(\S+)\s+(\S+)`)
	reFetchy   = lazyre.New(`(?:^|[;&|(]\s*)(helm\s+pull|wget|curl|patch|git\s+apply)\s`)
)

type pending struct {
	u     *Unit
	found *Found
	line  buildfile.SourceLine
}

// Adopt reads every package Makefile under root (in dirs, when given) and
// returns the chart units its update target vendors, and the problems:
// a fetch or patch line it cannot read, a patch that no unit takes, a
// patches/ directory nothing applies (patch files ignoring those image
// specs list in imagePatchDirs).
func Adopt(root string, dirs []string, imagePatchDirs []string) ([]Found, error) {
	makefiles, err := findMakefiles(root, dirs)
	if err != nil {
		return nil, err
	}
	var out []Found
	applied := map[string]bool{}
	for _, mf := range makefiles {
		m, err := buildfile.ReadMakeTree(root, mf)
		if err != nil {
			return nil, err
		}
		found, used := adoptMakefile(root, m)
		for _, p := range used {
			applied[p] = true
		}
		out = append(out, found...)
	}
	linkImages(root, out)
	// patches/ directories of packages that nothing applies
	imageDirs := map[string]bool{}
	for _, d := range imagePatchDirs {
		imageDirs[path.Clean(d)] = true
	}
	for _, mf := range makefiles {
		pd := path.Join(path.Dir(mf), "patches")
		if imageDirs[pd] {
			continue
		}
		entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(pd)))
		if err != nil {
			continue
		}
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() || !(strings.HasSuffix(n, ".diff") || strings.HasSuffix(n, ".patch")) {
				continue
			}
			p := path.Join(pd, n)
			if !applied[p] {
				out = append(out, Found{Dir: pd, Status: "unreadable", Problem: fmt.Sprintf("%s: no line of %s's update target applies it%s", p, mf, staleNote(root, path.Dir(mf), p))})
			}
		}
	}
	return out, nil
}

func findMakefiles(root string, dirs []string) ([]string, error) {
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	seen := map[string]bool{}
	var out []string
	for _, d := range dirs {
		base := filepath.Join(root, filepath.FromSlash(d))
		err := filepath.WalkDir(base, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() {
				switch e.Name() {
				case ".git", "_output", "vendor", "node_modules":
					return filepath.SkipDir
				}
				return nil
			}
			if e.Name() == "Makefile" {
				rel, _ := filepath.Rel(root, p)
				rel = filepath.ToSlash(rel)
				if !seen[rel] {
					seen[rel] = true
					out = append(out, rel)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(out)
	return out, nil
}

// adoptMakefile reads the update target of one Makefile.
func adoptMakefile(root string, m *buildfile.MakeTree) ([]Found, []string) {
	if _, ok := m.Rules["update"]; !ok {
		return nil, nil
	}
	recipe := m.Recipe("update")
	pkg := m.Dir
	spec := path.Join(pkg, FileName)
	repos := map[string]string{}
	var units []*pending
	var problems []Found
	var used []string
	problem := func(l buildfile.SourceLine, format string, args ...any) {
		problems = append(problems, Found{Dir: pkg, Spec: spec, Status: "unreadable", Problem: fmt.Sprintf("%s:%d: %s", l.File, l.N, fmt.Sprintf(format, args...))})
	}
	forVars := map[string]string{}
	for _, l := range recipe {
		raw := l.Text
		text := strings.ReplaceAll(m.Expand(raw), "$$", "$")
		text = strings.TrimLeft(text, "@-+ ")
		if strings.Contains(text, "command -v") || strings.HasPrefix(text, "$(shell") || strings.HasPrefix(text, "$(eval") {
			continue
		}
		for _, f := range reFor.FindAllStringSubmatch(text, -1) {
			forVars[f[1]] = strings.TrimSpace(f[2])
		}
		handled := false
		for _, a := range reRepoAdd.FindAllStringSubmatch(text, -1) {
			repos[a[1]] = a[2]
			handled = true
		}
		if hp := reHelmPull.FindStringSubmatch(text); hp != nil {
			handled = true
			if u, f := helmUnit(m, l, raw, hp[1], hp[2], repos); u != nil {
				units = append(units, &pending{u, f, l})
			} else {
				problems = append(problems, *f)
			}
		}
		if ar := reArchive.FindStringSubmatch(text); ar != nil {
			handled = true
			if u, f := archiveUnit(root, m, l, raw, ar); u != nil {
				units = append(units, &pending{u, f, l})
			} else {
				problems = append(problems, *f)
			}
		} else if as := reAsset.FindStringSubmatch(text); as != nil && !strings.Contains(as[1], "api.github.com") {
			handled = true
			if u, f := assetUnit(m, l, raw, as[1], as[2]); u != nil {
				units = append(units, &pending{u, f, l})
			} else {
				problems = append(problems, *f)
			}
		}
		for _, rm := range reRm.FindAllStringSubmatch(text, -1) {
			for _, t := range strings.Fields(rm[1]) {
				t = path.Clean(t)
				for _, p := range units {
					rel := strings.TrimPrefix(path.Join(pkg, t), p.u.Dir+"/")
					if rel != path.Join(pkg, t) && rel != "" {
						p.u.Remove = append(p.u.Remove, rel)
					}
				}
			}
		}
		for _, pm := range rePatch.FindAllStringSubmatch(text, -1) {
			handled = true
			workdir, args, file := pm[1], strings.TrimSpace(pm[2]), strings.TrimRight(pm[3], ")")
			fields := strings.Fields(args)
			target := ""
			if n := len(fields); n > 0 && !strings.HasPrefix(fields[n-1], "-") && !isOptArg(fields, n-1) {
				target = fields[n-1]
				args = strings.TrimSpace(strings.Join(fields[:n-1], " "))
			}
			files := []string{file}
			if strings.HasPrefix(file, "$") || strings.Contains(file, "/$") {
				// a loop variable: for p in patches/*.diff
				v := strings.TrimLeft(path.Base(file), "${")
				v = strings.TrimRight(v, "}")
				glob, ok := forVars[v]
				if !ok {
					problem(l, "cannot tell which patch files %s names", file)
					continue
				}
				files = nil
				for _, g := range strings.Fields(glob) {
					ms, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(pkg), filepath.FromSlash(g)))
					sort.Strings(ms)
					for _, x := range ms {
						r, _ := filepath.Rel(filepath.Join(root, filepath.FromSlash(pkg)), x)
						files = append(files, filepath.ToSlash(r))
					}
				}
			} else if workdir != "" {
				files = []string{path.Clean(path.Join(workdir, file))}
			}
			for _, f := range files {
				rel := path.Clean(path.Join(pkg, f))
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
					problem(l, "patch file %s does not exist", rel)
					continue
				}
				p := placePatch(root, units, pkg, workdir, target, args, rel)
				if p == nil {
					problem(l, "%s patches no directory this update target vendors", rel)
					continue
				}
				if p.u.Series.Tool == "" {
					p.u.Series.Tool, p.u.Series.Args = ToolPatch, args
					if workdir != "" {
						p.u.Series.Workdir = "./" + workdir
					}
					if target != "" {
						p.u.Series.Target = target
					}
				} else if p.u.Series.Tool != ToolPatch || (workdir != "" && "./"+workdir != p.u.Series.Workdir) || target != p.u.Series.Target {
					problem(l, "%s is applied by another tool, in another directory or to another file than the patches before it: one unit takes one", rel)
					continue
				}
				own := ""
				if args != p.u.Series.Args {
					own = args
				}
				p.u.Series.PatchArgs = append(p.u.Series.PatchArgs, own)
				p.u.Series.Patches = append(p.u.Series.Patches, "./"+strings.TrimPrefix(rel, pkg+"/"))
				used = append(used, rel)
			}
		}
		for _, mv := range reMv.FindAllStringSubmatch(text, -1) {
			// A release asset patched in a scratch directory, then moved into place.
			src, dst := path.Join(pkg, mv[1]), path.Join(pkg, mv[2])
			for _, p := range units {
				if p.u.Kind() != KindURL || path.Join(p.u.Dir, p.u.Upstream.Name) != src {
					continue
				}
				handled = true
				if s := &p.u.Series; s.Target != "" {
					if path.Join(pkg, strings.TrimPrefix(s.Workdir, "./"), s.Target) != src {
						problem(l, "mv %s: the series patches another file", mv[1])
						continue
					}
					s.Workdir, s.Target = "", strings.TrimPrefix(dst, pkg+"/")
				} else if s.Workdir != "" {
					problem(l, "mv %s after patching in %s is not read", mv[1], s.Workdir)
					continue
				}
				p.u.Dir, p.u.Upstream.Name = path.Dir(dst), path.Base(dst)
				p.found.Dir = p.u.Dir
			}
		}
		if ga := reGitApply.FindStringSubmatch(text); ga != nil {
			handled = true
			var args, files []string
			for _, f := range strings.Fields(ga[1]) {
				if strings.HasPrefix(f, "-") {
					args = append(args, f)
				} else {
					files = append(files, f)
				}
			}
			for _, f := range files {
				rel := path.Clean(path.Join(pkg, f))
				p := placePatch(root, units, pkg, "", "", strings.Join(args, " "), rel)
				if p == nil {
					problem(l, "%s patches no directory this update target vendors", rel)
					continue
				}
				p.u.Series.Tool, p.u.Series.Args = ToolGitApply, strings.Join(args, " ")
				p.u.Series.PatchArgs = append(p.u.Series.PatchArgs, "")
				p.u.Series.Patches = append(p.u.Series.Patches, "./"+strings.TrimPrefix(rel, pkg+"/"))
				used = append(used, rel)
			}
		}
		if !handled && reFetchy.MatchString(text) {
			problem(l, "cannot read this line: %s", strings.TrimSpace(raw))
		}
	}
	var out []Found
	for _, p := range units {
		p.found.Unit = p.u
		out = append(out, *p.found)
	}
	return append(out, problems...), used
}

func isOptArg(fields []string, i int) bool {
	if i == 0 {
		return false
	}
	switch fields[i-1] {
	case "-p", "--strip", "-F", "--fuzz", "-d", "--directory", "-i", "--input", "-o", "--output", "-r", "--reject-file", "-B", "-z", "-V":
		return true
	}
	return false
}

// placePatch finds the unit whose directory the patch's files are in.
func placePatch(root string, units []*pending, pkg, workdir, target, args, rel string) *pending {
	if len(units) == 0 {
		return nil
	}
	wd := path.Join(pkg, workdir)
	if target != "" {
		t := path.Join(wd, target)
		for _, p := range units {
			if strings.HasPrefix(t, p.u.Dir+"/") || t == p.u.Dir {
				return p
			}
		}
		return nil
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return nil
	}
	u0 := &Unit{Series: Series{Tool: ToolPatch, Args: args}}
	if strings.HasPrefix(args, "git") {
		u0.Series.Tool = ToolGitApply
	}
	opt, err := u0.PatchOptions()
	if err != nil {
		opt = DefaultPatchOptions()
	}
	secs, err := parseGNU(rel, data)
	if err != nil {
		return nil
	}
	for _, s := range secs {
		for _, n := range []string{s.newName, s.oldName} {
			if n == "/dev/null" {
				continue
			}
			st, ok := series.StripGNU(n, opt.Strip)
			if !ok {
				continue
			}
			full := path.Join(wd, st)
			for _, p := range units {
				if strings.HasPrefix(full, p.u.Dir+"/") {
					return p
				}
			}
		}
	}
	return nil
}

// versionOf reads a version as the Makefile writes it: a Makefile variable
// (the pin then stays there), a literal, or nothing/a shell variable (the
// pin is the vendored Chart.yaml's).
func versionOf(m *buildfile.MakeTree, rawVersion string, dir string, chartKey string) (Version, string, []string) {
	rawVersion = strings.Trim(rawVersion, `"'`)
	if refs := buildfile.VarRefs(rawVersion); len(refs) == 1 && strings.TrimSpace(buildfile.ReplaceVarRefs(rawVersion, "")) == "" {
		name := refs[0]
		if at, ok := m.VarAt[name]; ok {
			val := m.Expand(m.Vars[name])
			if isPin(val) {
				mf := relFrom(m.Dir, at.File)
				return Version{MakefileVar: name, Makefile: mf}, fmt.Sprintf("makefile-var %s (%s:%d)", name, at.File, at.N), nil
			}
			return Version{ChartYAML: chartKey}, fmt.Sprintf("chart-yaml %s (%s/Chart.yaml)", chartKey, dir),
				[]string{fmt.Sprintf("%s:%d: %s = %s is a range, not a pin: the pin is the vendored Chart.yaml's %s", at.File, at.N, name, val, chartKey)}
		}
	}
	if rawVersion != "" && !strings.Contains(rawVersion, "$") && isPin(rawVersion) {
		return Version{Value: rawVersion}, "literal", nil
	}
	return Version{ChartYAML: chartKey}, fmt.Sprintf("chart-yaml %s (%s/Chart.yaml)", chartKey, dir),
		[]string{"the update target takes the newest upstream version: the pin is what is vendored, the Chart.yaml's " + chartKey}
}

var pinRE = lazyre.New(`^v?[0-9][0-9A-Za-z.+_-]*$`)

func isPin(s string) bool { return pinRE.MatchString(s) }

func relFrom(dir, file string) string {
	r, err := filepath.Rel(filepath.FromSlash(dir), filepath.FromSlash(file))
	if err != nil {
		return file
	}
	r = filepath.ToSlash(r)
	if !strings.HasPrefix(r, "../") {
		r = "./" + r
	}
	return r
}

func flagValue(args []string, names ...string) (string, bool) {
	for i, a := range args {
		for _, n := range names {
			if a == n && i+1 < len(args) {
				return args[i+1], true
			}
			if v, ok := strings.CutPrefix(a, n+"="); ok {
				return v, true
			}
		}
	}
	return "", false
}

func newFound(m *buildfile.MakeTree, l buildfile.SourceLine, u *Unit, from string, notes []string) *Found {
	if from == "literal" {
		from = fmt.Sprintf("a literal at %s:%d", l.File, l.N)
		notes = append(notes, fmt.Sprintf("%s:%d writes the version %s in the recipe, so the spec holds a copy: move it into a Makefile variable and point version.makefile-var at it, so one place holds the pin", l.File, l.N, u.Version.Value))
	}
	return &Found{Dir: u.Dir, Spec: path.Join(m.Dir, FileName), From: from, Notes: notes, Status: "new"}
}

func helmUnit(m *buildfile.MakeTree, l buildfile.SourceLine, raw, ref, rest string, repos map[string]string) (*Unit, *Found) {
	args := strings.Fields(rest)
	fail := func(format string, a ...any) (*Unit, *Found) {
		return nil, &Found{Dir: m.Dir, Spec: path.Join(m.Dir, FileName), Status: "unreadable", Problem: fmt.Sprintf("%s:%d: %s", l.File, l.N, fmt.Sprintf(format, a...))}
	}
	untardir, _ := flagValue(args, "--untardir", "-d")
	hasUntar := false
	for _, a := range args {
		if a == "--untar" {
			hasUntar = true
		}
	}
	if !hasUntar {
		return fail("helm pull without --untar: nothing is vendored")
	}
	if untardir == "" {
		untardir = "."
	}
	u := &Unit{}
	var chartName string
	if strings.HasPrefix(ref, "oci://") {
		u.Upstream.OCI = ref
		chartName = path.Base(ref)
		if i := strings.IndexAny(chartName, "@:"); i > 0 {
			return fail("helm pull %s pins a digest or tag in the reference: patchkit pins OCI charts by --version", ref)
		}
	} else {
		repo, chart, ok := strings.Cut(ref, "/")
		if !ok {
			return fail("cannot read the chart reference %s", ref)
		}
		url, ok := repos[repo]
		if !ok {
			return fail("helm pull %s: no helm repo add %s line before it", ref, repo)
		}
		u.Upstream.Helm, u.Upstream.Chart, chartName = strings.Trim(url, `"'`), chart, chart
	}
	u.Dir = path.Join(m.Dir, untardir, chartName)
	// the raw (unexpanded) version keeps the variable's name
	rawVersion := ""
	if hp := reHelmPull.FindStringSubmatch(strings.ReplaceAll(raw, "$$", "$")); hp != nil {
		rawVersion, _ = flagValue(strings.Fields(hp[2]), "--version")
	}
	v, from, notes := versionOf(m, rawVersion, u.Dir, "version")
	u.Version = v
	return u, newFound(m, l, u, from, notes)
}

func archiveUnit(root string, m *buildfile.MakeTree, l buildfile.SourceLine, raw string, ar []string) (*Unit, *Found) {
	fail := func(format string, a ...any) (*Unit, *Found) {
		return nil, &Found{Dir: m.Dir, Spec: path.Join(m.Dir, FileName), Status: "unreadable", Problem: fmt.Sprintf("%s:%d: %s", l.File, l.N, fmt.Sprintf(format, a...))}
	}
	repoURL, tag, tarArgs := ar[1], ar[2], strings.Fields(ar[3])
	strip := 0
	cdir := "."
	member := ""
	for i := 0; i < len(tarArgs); i++ {
		a := tarArgs[i]
		switch {
		case a == "--strip" || a == "--strip-components":
			if i+1 < len(tarArgs) {
				strip, _ = strconv.Atoi(tarArgs[i+1])
				i++
			}
		case strings.HasPrefix(a, "--strip-components=") || strings.HasPrefix(a, "--strip="):
			_, v, _ := strings.Cut(a, "=")
			strip, _ = strconv.Atoi(v)
		case a == "-C" || a == "--directory":
			if i+1 < len(tarArgs) {
				cdir = tarArgs[i+1]
				i++
			}
		case strings.HasPrefix(a, "-"):
		default:
			member = strings.Trim(a, `"'`)
		}
	}
	if member == "" {
		return fail("the tar member is missing: the whole archive would be vendored")
	}
	parts := strings.Split(strings.Trim(member, "/"), "/")
	if len(parts) < 2 || strip < 1 || strip > len(parts) {
		return fail("cannot read tar --strip %d %s", strip, member)
	}
	u := &Unit{}
	u.Upstream.Git = repoURL
	u.Upstream.Path = strings.Join(parts[1:], "/")
	u.Dir = path.Join(m.Dir, cdir, strings.Join(parts[strip:], "/"))
	if strip == len(parts) {
		return fail("tar --strip %d %s extracts its files into %s directly: name the directory", strip, member, cdir)
	}
	// The tag: a Makefile variable or literal is the pin; a shell variable
	// (the newest tag) leaves the pin to the vendored Chart.yaml.
	rawTag := tag
	if ar2 := reArchive.FindStringSubmatch(raw); ar2 != nil {
		rawTag = ar2[2]
	}
	if !strings.Contains(rawTag, "$$") {
		prefix := ""
		if strings.HasPrefix(rawTag, "v") {
			prefix, rawTag = "v", rawTag[1:]
		}
		v, from, notes := versionOf(m, rawTag, u.Dir, "appVersion")
		u.Version = v
		u.Upstream.Tag = prefix + "{version}"
		return u, newFound(m, l, u, from, notes)
	}
	key := "appVersion"
	u.Upstream.Tag = "{version}"
	if meta, err := readChartYAML(filepath.Join(root, filepath.FromSlash(chartYAMLPath(root, u.Dir)))); err == nil {
		switch {
		case meta.AppVersion != "" && !strings.HasPrefix(meta.AppVersion, "v") && strings.Contains(member, "#*v}"):
			u.Upstream.Tag = "v{version}"
		case meta.AppVersion == "" && meta.Version != "":
			key = "version"
		}
	}
	v, from, notes := versionOf(m, "", u.Dir, key)
	u.Version = v
	return u, newFound(m, l, u, from, notes)
}

func assetUnit(m *buildfile.MakeTree, l buildfile.SourceLine, raw, url, out string) (*Unit, *Found) {
	fail := func(format string, a ...any) (*Unit, *Found) {
		return nil, &Found{Dir: m.Dir, Spec: path.Join(m.Dir, FileName), Status: "unreadable", Problem: fmt.Sprintf("%s:%d: %s", l.File, l.N, fmt.Sprintf(format, a...))}
	}
	// find the version variable in the raw URL
	rawURL := ""
	if as := reAsset.FindStringSubmatch(strings.ReplaceAll(raw, "$$", "$")); as != nil {
		rawURL = as[1]
	}
	refs := buildfile.VarRefs(rawURL)
	if len(refs) != 1 {
		return fail("cannot tell the version in %s: name it with one Makefile variable", rawURL)
	}
	name := refs[0]
	at, ok := m.VarAt[name]
	if !ok || !isPin(m.Expand(m.Vars[name])) {
		return fail("the version $(%s) in %s is not a Makefile variable holding a pin (the Makefile computes it when it runs): pin it in a variable", name, rawURL)
	}
	u := &Unit{}
	u.Upstream.URL = m.Expand(buildfile.ReplaceVarRefs(rawURL, "{version}"))
	u.Upstream.Name = path.Base(out)
	u.Dir = path.Join(m.Dir, path.Dir(out))
	u.Version = Version{MakefileVar: name, Makefile: relFrom(m.Dir, at.File)}
	return u, newFound(m, l, u, fmt.Sprintf("makefile-var %s (%s:%d)", name, at.File, at.N), nil)
}

// linkImages sets the image of each git chart unit to the image unit of the
// same package built from the same upstream, so verify compares their pins.
func linkImages(root string, found []Found) {
	units, err := spec.Discover(root)
	if err != nil {
		return
	}
	norm := func(u string) string { return strings.TrimSuffix(strings.TrimSuffix(u, "/"), ".git") }
	for _, f := range found {
		if f.Unit == nil || f.Unit.Kind() != KindGit {
			continue
		}
		pkg := path.Dir(f.Spec)
		for _, su := range units {
			if !strings.HasPrefix(su.Dir, pkg+"/") {
				continue
			}
			s, err := spec.LoadUnit(root, su)
			if err != nil || norm(s.Upstream.URL) != norm(f.Unit.Upstream.Git) {
				continue
			}
			f.Unit.Image = su.Dir
			break
		}
	}
}
