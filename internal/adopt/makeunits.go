package adopt

// Release-branch units read from Makefiles (issue V).
//
// A distribution such as aws/eks-distro builds each upstream from a project
// Makefile that includes a common one:
//
//	GIT_TAG?=$(shell cat $(RELEASE_BRANCH)/GIT_TAG)
//	include $(BASE_DIRECTORY)/Common.mk
//
// and the common Makefile clones the upstream, checks out $(GIT_TAG) and
// applies the release branch's patches (git am $(PATCHES_DIR)/*). Each
// directory beside the Makefile that holds the pin file (1-30/GIT_TAG) is a
// release branch, and each release branch with a patch directory is a unit:
// its spec goes in that directory, its pin points at the file.
//
// GNU make reads the Makefile: patchkit runs `make` in the Makefile's
// directory with RELEASE_BRANCH (the variable the pin file's path names)
// set, and a target of its own that writes the variables and the recipe
// lines it needs, expanded as make expands them, to a scratch directory.
// Reading a Makefile runs the $(shell ...) calls its variables make while it
// is read, as `make help` would; no recipe of the repository runs.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/patchkit/patchkit/internal/lazyre"
	"github.com/patchkit/patchkit/internal/spec"
)

// makeTimeout bounds one make run of a release-branch unit.
const makeTimeout = 30 * time.Second

// fileVarRE finds `VAR ?= $(shell cat $(BRANCH)/FILE)` (any of = := ::= ?=).
var fileVarRE = lazyre.New(`(?m)^[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)[ \t]*(?:\?|::|:)?=[ \t]*\$\(shell[ \t]+cat[ \t]+\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]/([^\s()$]+)[ \t]*\)[ \t]*$`)

// fileVar is a Makefile variable read from a file of each release branch.
type fileVar struct {
	name, branchVar, file string
	line                  int
}

// makeUnits finds the release-branch units of the Makefile at file
// (relative to root): none when it reads no variable from a release
// branch's file.
func makeUnits(ctx context.Context, root, file string) []Unit {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
	if err != nil {
		return nil
	}
	var vars []fileVar
	for _, m := range fileVarRE.Regexp().FindAllSubmatchIndex(data, -1) {
		vars = append(vars, fileVar{
			name: string(data[m[2]:m[3]]), branchVar: string(data[m[4]:m[5]]), file: string(data[m[6]:m[7]]),
			line: 1 + bytes.Count(data[:m[0]], []byte("\n")),
		})
	}
	dir := path.Dir(file)
	if len(vars) == 0 {
		return unreadMakefile(root, file, data, "")
	}
	if why := runsScript(data); why != "" {
		// make would run it while reading the Makefile: a bootstrap
		// script that asks a cloud API, downloads, writes files.
		return unreadMakefile(root, file, data, why)
	}
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
	if err != nil {
		return nil
	}
	var units []Unit
	for _, e := range entries {
		if !e.IsDir() || slicesContains(spec.SkipDirs, e.Name()) {
			continue
		}
		branch := e.Name()
		var own []fileVar
		for _, v := range vars {
			if st, err := os.Stat(filepath.Join(root, filepath.FromSlash(dir), branch, filepath.FromSlash(v.file))); err == nil && st.Mode().IsRegular() {
				own = append(own, v)
			}
		}
		if len(own) == 0 || !mayHavePatches(root, dir, branch) {
			continue
		}
		if u, ok := makeUnit(ctx, root, file, branch, own); ok {
			units = append(units, u)
		}
	}
	return units
}

// shellVarRE finds a variable a Makefile sets from a $(shell ...) call.
var shellVarRE = lazyre.New(`(?m)^[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)[ \t]*(?:\?|::|:)?=[ \t]*\$\(shell\b.*$`)

// unreadMakefile reports a Makefile beside release-branch directories that
// hold patches whose pin patchkit cannot read from a file of the branch
// (it is computed when make runs, by a script or a network call): one
// unreadable unit naming the Makefile's line, or none when no directory
// beside it holds patches.
func unreadMakefile(root, file string, data []byte, why string) []Unit {
	dir := path.Dir(file)
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
	if err != nil {
		return nil
	}
	var patched []string
	for _, e := range entries {
		if e.IsDir() && countPatches(root, path.Join(dir, e.Name(), "patches")) > 0 {
			patched = append(patched, e.Name())
		}
	}
	if len(patched) == 0 {
		return nil
	}
	u := Unit{Dir: dir, Kind: KindImage, Spec: path.Join(dir, spec.FileName), Recipe: file, Status: StatusUnreadable}
	if why != "" {
		u.Problem = fmt.Sprintf("%s: the release branches %s hold patches, but %s", file, strings.Join(patched, ", "), why)
		return []Unit{u}
	}
	why = "no variable of it is read from a file of a release branch (VAR ?= $(shell cat $(RELEASE_BRANCH)/FILE))"
	if m := pinLike(shellVarRE.Regexp().FindAllSubmatchIndex(data, -1), data); m != nil {
		line := 1 + bytes.Count(data[:m[0]], []byte("\n"))
		why = fmt.Sprintf("line %d sets %s when make runs (%s), not from a file of a release branch: patchkit does not run a Makefile's scripts to learn a pin",
			line, data[m[2]:m[3]], strings.TrimSpace(string(data[m[0]:m[1]])))
	}
	u.Problem = fmt.Sprintf("%s: the release branches %s hold patches, but %s", file, strings.Join(patched, ", "), why)
	return []Unit{u}
}

// safeShell are the commands a Makefile's $(shell) may run for init to read
// it with make: they read, and run nothing of the repository's.
var safeShell = map[string]bool{"cat": true, "git": true, "echo": true, "printf": true, "pwd": true, "basename": true, "dirname": true, "tr": true, "test": true, "[": true, "date": true, "uname": true}

// runsScript says which line of Makefile data runs a script or a command
// init will not run while make reads it (a $(shell) whose command is not
// one of safeShell: ./build/bootstrap.sh, aws, curl, source), or "".
func runsScript(data []byte) string {
	for i, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "\t") || strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue // a recipe line runs only when its target is made
		}
		for _, call := range shellCalls(l) {
			words := strings.Fields(call)
			for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "=") {
				words = words[1:] // VAR=value before the command
			}
			if len(words) == 0 || safeShell[words[0]] {
				continue
			}
			return fmt.Sprintf("line %d runs %s when make reads it (%s): patchkit does not run a repository's scripts or other commands to read a Makefile",
				i+1, words[0], strings.TrimSpace(l))
		}
	}
	return ""
}

// shellCalls returns the commands of the $(shell ...) calls of line l, each
// up to its matching parenthesis (make variables inside it kept as written).
func shellCalls(l string) []string {
	var out []string
	for i := 0; ; {
		j := strings.Index(l[i:], "$(shell")
		if j < 0 {
			return out
		}
		start := i + j + len("$(shell")
		depth, k := 1, start
		for ; k < len(l) && depth > 0; k++ {
			switch l[k] {
			case '(':
				depth++
			case ')':
				depth--
			}
		}
		end := k
		if depth == 0 {
			end = k - 1
		}
		out = append(out, l[start:end])
		i = start
	}
}

// mayHavePatches reports whether a release branch, or its project, holds a
// patch directory with patches: a branch with none is no unit, and make is
// not run for it.
func mayHavePatches(root, dir, branch string) bool {
	return countPatches(root, path.Join(dir, branch, "patches")) > 0 || countPatches(root, path.Join(dir, "patches")) > 0
}

// pinLike picks, of the $(shell) assignments ms of data, the first whose
// variable names a tag, else a version, else the first.
func pinLike(ms [][]int, data []byte) []int {
	for _, word := range []string{"TAG", "VERSION", ""} {
		for _, m := range ms {
			if strings.Contains(string(data[m[2]:m[3]]), word) {
				return m
			}
		}
	}
	return nil
}

// makeUnit reads one release branch of the Makefile: ok is false for a
// branch without patches (not a patch unit).
func makeUnit(ctx context.Context, root, file, branch string, vars []fileVar) (Unit, bool) {
	dir := path.Join(path.Dir(file), branch)
	u := Unit{Dir: dir, Kind: KindImage, Spec: path.Join(dir, spec.FileName), Recipe: file, Status: StatusNew}
	where := fmt.Sprintf("%s (%s=%s)", file, vars[0].branchVar, branch)
	mk, err := readMake(ctx, root, file, vars[0].branchVar, branch, vars)
	if err != nil {
		return unreadable(u, fmt.Errorf("%s: %w", where, err)), true
	}
	am := mk.applyLine()
	if am == nil {
		return u, false // builds the branch without applying patches
	}
	patches, err := mk.inRoot(am.dir)
	if err != nil {
		return unreadable(u, fmt.Errorf("%s:%d: the patch directory %s: %w", am.file, am.line, am.dir, err)), true
	}
	if st, err := os.Stat(filepath.Join(root, filepath.FromSlash(patches))); err != nil || !st.IsDir() {
		return u, false // the recipe skips a branch without patches
	}
	u.Patches = patches
	if n := countPatches(root, patches); n == 0 {
		return u, false
	}
	clone := mk.cloneLine()
	if clone == nil {
		return unreadable(u, fmt.Errorf("%s: applies %s but clones no upstream (no git clone in %s)", where, patches, strings.Join(mk.files, ", "))), true
	}
	var pin *fileVar
	named := mk.pinVars()
	for _, n := range named {
		for i := range vars {
			if pin == nil && vars[i].name == n {
				pin = &vars[i]
			}
		}
	}
	if pin == nil {
		return unreadable(u, fmt.Errorf("%s: checks out %s, none of which is read from a file of the release branch (%s)", where, orList(named), fileVarNames(vars))), true
	}
	value := strings.TrimSpace(mk.vars[pin.name])
	if value == "" || strings.ContainsAny(value, " \t$") {
		return unreadable(u, fmt.Errorf("%s/%s: cannot read the pin %q", dir, pin.file, value)), true
	}
	u.Upstream = Upstream{URL: clone.url, Ref: value, From: fmt.Sprintf("file %s (%s:%d)", path.Join(dir, pin.file), file, pin.line)}
	var goPlaces []fileVar
	for _, v := range vars {
		switch {
		case v.name == pin.name:
		case isGoVersionVar(v.name):
			// The Go release the branch builds with: upgrade raises it to
			// the new ref's go directive, verify checks it builds the pin.
			goPlaces = append(goPlaces, v)
		default:
			u.Notes = append(u.Notes, fmt.Sprintf("%s:%d: %s is read from %s; patchkit does not move it", file, v.line, v.name, path.Join(dir, v.file)))
		}
	}
	u.yaml = renderMake(&u, pin, clone, am, goPlaces)
	s, err := spec.LoadUnitReader(bytes.NewReader(u.yaml), root, spec.Unit{Name: path.Base(u.Dir), Dir: u.Dir})
	if err != nil {
		return unreadable(u, fmt.Errorf("the spec patchkit would write does not load: %w", err)), true
	}
	if s.Upstream.Ref != value || s.Upstream.URL != clone.url {
		return unreadable(u, fmt.Errorf("the spec reads %s at %s, but the build uses %s at %s", s.Upstream.URL, s.Upstream.Ref, clone.url, value)), true
	}
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(u.Spec))); err == nil {
		u.Status = StatusExists
	}
	return u, true
}

func countPatches(root, dir string) int {
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() && (strings.HasSuffix(e.Name(), ".diff") || strings.HasSuffix(e.Name(), ".patch")) {
			n++
		}
	}
	return n
}

// makeRead is what make said of one release branch.
type makeRead struct {
	root string
	// vars are the values of the file variables.
	vars map[string]string
	// files are the makefiles make read (MAKEFILE_LIST), relative to root
	// where they are inside it.
	files []string
	// lines are the recipe lines that clone, check out or apply, each
	// with make's expansion.
	lines []recipeLine
}

type recipeLine struct {
	file     string
	line     int
	raw, exp string
}

// recipeRE picks the recipe lines worth expanding: git clone, checkout,
// am and apply.
var recipeRE = lazyre.New(`\bgit\b.*\b(clone|checkout|am|apply)\b`)

// readMake runs make in the Makefile's directory with branchVar=branch and
// returns the file variables, the makefiles read, and their clone, checkout
// and apply recipe lines expanded. The makefiles are read twice: once to
// learn MAKEFILE_LIST, once to expand their recipe lines.
func readMake(ctx context.Context, root, file, branchVar, branch string, vars []fileVar) (*makeRead, error) {
	out := &makeRead{root: root, vars: map[string]string{}}
	names := []string{"MAKEFILE_LIST"}
	for _, v := range vars {
		names = append(names, v.name)
	}
	vals, err := runMake(ctx, root, file, branchVar, branch, names, nil)
	if err != nil {
		return nil, err
	}
	for _, v := range vars {
		out.vars[v.name] = vals[v.name]
	}
	dir := filepath.Join(root, filepath.FromSlash(path.Dir(file)))
	var raws []recipeLine
	for _, mf := range strings.Fields(vals["MAKEFILE_LIST"]) {
		full := mf
		if !filepath.IsAbs(full) {
			full = filepath.Join(dir, mf)
		}
		rel, err := filepath.Rel(root, full)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue // a makefile outside the repository is not read
		}
		rel = filepath.ToSlash(rel)
		out.files = append(out.files, rel)
		data, err := os.ReadFile(full)
		if err != nil {
			continue
		}
		for i, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "\t") && recipeRE.MatchString(l) {
				raws = append(raws, recipeLine{file: rel, line: i + 1, raw: strings.TrimSpace(strings.TrimSuffix(l, "\\"))})
			}
		}
	}
	if len(raws) == 0 {
		return out, nil
	}
	exps, err := runMake(ctx, root, file, branchVar, branch, nil, raws)
	if err != nil {
		return nil, err
	}
	for i := range raws {
		raws[i].exp = exps[fmt.Sprintf("PATCHKIT_LINE_%d", i)]
	}
	out.lines = raws
	return out, nil
}

// runMake runs GNU make on file with branchVar=branch and a target of
// patchkit's own that writes each variable of names, and each line of
// lines (as make expands it in a recipe), to a file of a scratch
// directory. Nothing of the repository's recipes runs; the parent's
// MAKEFLAGS are dropped.
func runMake(ctx context.Context, root, file, branchVar, branch string, names []string, lines []recipeLine) (map[string]string, error) {
	tmp, err := os.MkdirTemp("", "patchkit-make-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var eval strings.Builder
	var recipe []string
	for _, n := range names {
		recipe = append(recipe, fmt.Sprintf("$(file >%s/%s,$(%s))", tmp, n, n))
	}
	for i, l := range lines {
		v := fmt.Sprintf("PATCHKIT_LINE_%d", i)
		fmt.Fprintf(&eval, "define %s\n%s\nendef\n", v, l.raw)
		recipe = append(recipe, fmt.Sprintf("$(file >%s/%s,$(%s))", tmp, v, v))
	}
	fmt.Fprintf(&eval, "patchkit-read-variables:\n\t@:%s\n", strings.Join(recipe, ""))
	ctx, cancel := context.WithTimeout(ctx, makeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "-s", "--no-print-directory", "-f", path.Base(file),
		"--eval", eval.String(), branchVar+"="+branch, "patchkit-read-variables")
	cmd.Dir = filepath.Join(root, filepath.FromSlash(path.Dir(file)))
	cmd.Env = makeEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		switch {
		case errors.Is(err, exec.ErrNotFound):
			return nil, fmt.Errorf("GNU make is needed to read %s: %w", file, err)
		case ctx.Err() == context.DeadlineExceeded:
			return nil, fmt.Errorf("make did not finish reading %s in %s", file, makeTimeout)
		}
		return nil, fmt.Errorf("make could not read %s: %w: %s", file, err, lastLine(stderr.String()))
	}
	out := map[string]string{}
	for _, n := range names {
		data, _ := os.ReadFile(filepath.Join(tmp, n))
		out[n] = strings.TrimSuffix(string(data), "\n")
	}
	for i := range lines {
		v := fmt.Sprintf("PATCHKIT_LINE_%d", i)
		data, _ := os.ReadFile(filepath.Join(tmp, v))
		out[v] = strings.TrimSuffix(string(data), "\n")
	}
	return out, nil
}

// makeEnv is the process's environment without a parent make's flags.
func makeEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEFILES", "GNUMAKEFLAGS":
			continue
		}
		env = append(env, kv)
	}
	return env
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// amLine is how a recipe applies the series.
type amLine struct {
	file string
	line int
	// tool is git-am or git-apply.
	tool string
	// args are the tool's flags, as the recipe gives them.
	args []string
	// dir is the patch directory (absolute or relative to the Makefile's
	// directory), glob what is applied in it.
	dir, glob string
}

// applyLine returns the recipe line that applies the patch directory: git
// am or git apply of DIR/* (or DIR/*.patch, *.diff).
func (m *makeRead) applyLine() *amLine {
	for _, l := range m.lines {
		words := shellWords(l.exp)
		for i := 0; i+1 < len(words); i++ {
			if words[i] != "git" {
				continue
			}
			j := i + 1
			for j < len(words) && (words[j] == "-C" || words[j] == "-c") {
				j += 2
			}
			if j >= len(words) || (words[j] != "am" && words[j] != "apply") {
				continue
			}
			a := &amLine{file: l.file, line: l.line, tool: "git-" + words[j]}
			for _, w := range words[j+1:] {
				if isShellOp(w) {
					break
				}
				if strings.HasPrefix(w, "-") {
					a.args = append(a.args, w)
					continue
				}
				d, g := path.Split(w)
				if g == "*" || g == "*.patch" || g == "*.diff" {
					a.dir, a.glob = strings.TrimSuffix(d, "/"), g
				}
			}
			if a.dir != "" {
				if a.tool == "git-apply" && !hasWhitespaceFlag(a.args) {
					// git apply's own rule is warn; patchkit's default
					// for git-apply is error: say the recipe's.
					a.args = append(a.args, "--whitespace=warn")
				}
				return a
			}
		}
	}
	return nil
}

func hasWhitespaceFlag(args []string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "--whitespace") {
			return true
		}
	}
	return false
}

// cloneRead is the recipe's git clone.
type cloneRead struct {
	file string
	line int
	url  string
}

// cloneLine returns the first git clone of a recipe line, with its URL.
func (m *makeRead) cloneLine() *cloneRead {
	for _, l := range m.lines {
		words := shellWords(l.exp)
		for i := 0; i+1 < len(words); i++ {
			if words[i] != "git" || words[i+1] != "clone" {
				continue
			}
			for k := i + 2; k < len(words); k++ {
				w := words[k]
				switch {
				case isShellOp(w):
				case w == "-b" || w == "--branch" || w == "--depth" || w == "--origin" || w == "-o" || w == "--reference" || w == "-c" || w == "--config":
					k++
					continue
				case strings.HasPrefix(w, "-"):
					continue
				default:
					return &cloneRead{file: l.file, line: l.line, url: w}
				}
				break
			}
		}
	}
	return nil
}

// pinRE finds the variable a checkout or a clone's --branch names.
var pinRE = lazyre.New(`\b(?:checkout\b[^;&|]*|clone\b[^;&|]*(?:-b|--branch)[ \t=]+)\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]`)

// pinVars are the variables the recipe checks out: the last variable of
// each git checkout line (or a clone's --branch), as written, in order.
func (m *makeRead) pinVars() []string {
	var out []string
	for _, l := range m.lines {
		if ms := pinRE.FindAllStringSubmatch(l.raw, -1); len(ms) > 0 {
			out = append(out, ms[len(ms)-1][1])
		}
	}
	return out
}

func orList(names []string) string {
	if len(names) == 0 {
		return "no variable"
	}
	return "$(" + strings.Join(names, "), $(") + ")"
}

func fileVarNames(vars []fileVar) string {
	var out []string
	for _, v := range vars {
		out = append(out, v.name)
	}
	return strings.Join(out, ", ")
}

// inRoot turns a recipe path into one relative to the root, refusing one
// outside it.
func (m *makeRead) inRoot(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", errors.New("not an absolute path after make expanded it")
	}
	rel, err := filepath.Rel(m.root, filepath.FromSlash(p))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", errors.New("outside the repository")
	}
	return filepath.ToSlash(rel), nil
}

func isShellOp(w string) bool {
	switch w {
	case ";", "&&", "||", "|", ")", "fi", "fi;", "then", "do", "done":
		return true
	}
	return strings.HasSuffix(w, ";")
}

// shellWords splits a shell command line on white space, keeping quoted
// strings whole (quotes dropped) and cutting `;` off a word's end.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	inWord := false
	var quote rune
	flush := func() {
		if inWord {
			w := cur.String()
			if strings.HasSuffix(w, ";") && len(w) > 1 {
				out = append(out, strings.TrimSuffix(w, ";"), ";")
			} else {
				out = append(out, w)
			}
		}
		cur.Reset()
		inWord = false
	}
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			flush()
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	flush()
	return out
}

// renderMake writes the spec of a release-branch unit.
func renderMake(u *Unit, pin *fileVar, clone *cloneRead, am *amLine, goPlaces []fileVar) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Written by `patchkit init` from %s with %s=%s: %s:%d clones the upstream,\n", u.Recipe, pin.branchVar, path.Base(u.Dir), clone.file, clone.line)
	fmt.Fprintf(&b, "# %s:%d applies the series.\n", am.file, am.line)
	fmt.Fprintf(&b, "# The pin is read from %s on every run: change it there (upgrade does).\n", pin.file)
	b.WriteString("# Paths starting with ./ or ../ are relative to this file.\n")
	b.WriteString("upstream:\n")
	fmt.Fprintf(&b, "  url: %s  # %s:%d\n", quote(clone.url), clone.file, clone.line)
	fmt.Fprintf(&b, "  ref:\n    file: %s  # %s\n", quote("./"+pin.file), u.Upstream.Ref)
	if g := releases(u.Upstream.Ref); g != "" {
		fmt.Fprintf(&b, "  releases: %s  # the tags obsolete-check scans\n", quote(g))
	}
	if len(goPlaces) > 0 {
		b.WriteString("  versions:  # the Go release the branch builds with: upgrade raises it to the new ref's go directive\n")
		for _, v := range goPlaces {
			fmt.Fprintf(&b, "    - file: %s  # %s:%d reads it into %s\n", quote("./"+v.file), u.Recipe, v.line, v.name)
			b.WriteString("      whole-file: true\n      spelling: go\n")
		}
	}
	fmt.Fprintf(&b, "patches: %s\n", quote(relPath(u.Dir, u.Patches)))
	b.WriteString("apply:  # as the recipe applies the series\n")
	fmt.Fprintf(&b, "  tool: %s\n", am.tool)
	if len(am.args) > 0 {
		var qs []string
		for _, a := range am.args {
			qs = append(qs, quote(a))
		}
		fmt.Fprintf(&b, "  args: [%s]\n", strings.Join(qs, ", "))
	}
	return b.Bytes()
}

// isGoVersionVar reports whether a Makefile variable names the Go release
// a build uses (GOLANG_VERSION, GO_VERSION).
func isGoVersionVar(name string) bool {
	return name == "GOLANG_VERSION" || name == "GO_VERSION"
}

// sortUnits orders units by the file that defines them, then their spec.
func sortUnits(units []Unit) {
	sort.Slice(units, func(i, j int) bool {
		a, b := units[i].Source(), units[j].Source()
		if a != b {
			return a < b
		}
		return units[i].Spec < units[j].Spec
	})
}
