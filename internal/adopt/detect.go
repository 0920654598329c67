package adopt

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/patchkit/patchkit/internal/buildfile"
	"github.com/patchkit/patchkit/internal/lazyre"
)

// Fetch is how a Dockerfile fetches its upstream source.
type Fetch struct {
	// Line is the Dockerfile line of the fetch.
	Line int
	// How is "git clone" or "archive".
	How string
	// URL is the repository URL as written (may hold ${VAR}).
	URL string
	// Ref is the ref expression as written (v${VERSION}, ${TAG}, a commit),
	// "" when the clone checks out the default branch.
	Ref string
	// RefLine is the line of the ref (a later git checkout may give it).
	RefLine int
}

// Apply is how a Dockerfile applies its patch directory.
type Apply struct {
	// Dir is the patch directory relative to the build context (patches).
	Dir string
	// CopyLine is the COPY/ADD line, Line the line that applies.
	CopyLine, Line int
	// Command is the applying command as written.
	Command string
	// Tool is "git apply" or "patch".
	Tool string
	// Glob is the files applied, as written after the container directory
	// (*.diff, *.patch, or one file name).
	Glob string
	// Flags are the options of the applying command (--recount, -p1).
	Flags []string
}

var archiveRE = lazyre.New(`https://github\.com/([A-Za-z0-9_.${}-]+)/([A-Za-z0-9_.${}-]+)/archive/(refs/(?:tags|heads)/)?([^\s"'|;&]+?)\.(?:tar\.gz|tgz|zip)\b`)

// findFetch returns the first upstream fetch of d: a git clone (with its
// --branch or a later git checkout) or a GitHub archive download.
func findFetch(d *buildfile.Dockerfile) (*Fetch, error) {
	var f *Fetch
	for _, in := range d.Instrs {
		if in.Cmd != "RUN" && in.Cmd != "ADD" {
			continue
		}
		if f == nil {
			if m := archiveRE.FindStringSubmatch(in.Args); m != nil {
				if m[3] == "refs/heads/" {
					return nil, fmt.Errorf("%s:%d: the archive is of branch %s, not a pin (a tag or commit)", d.File, in.Line, m[4])
				}
				f = &Fetch{Line: in.Line, How: "archive", URL: "https://github.com/" + m[1] + "/" + strings.TrimSuffix(m[2], ".git"), Ref: m[4], RefLine: in.Line}
				continue
			}
			if c := parseClone(in.Args); c != nil {
				c.Line, c.RefLine = in.Line, in.Line
				if c.Ref == "" {
					c.RefLine = 0
				}
				f = c
				// a checkout in the same RUN line is read below
			} else {
				continue
			}
		}
		if f.How == "git clone" && f.Ref == "" {
			if ref := checkoutRef(in.Args); ref != "" {
				f.Ref, f.RefLine = ref, in.Line
			}
		}
	}
	if f == nil {
		return nil, nil
	}
	if f.Ref == "" {
		return nil, fmt.Errorf("%s:%d: git clone of %s checks out the default branch: no tag or commit pins it", d.File, f.Line, f.URL)
	}
	return f, nil
}

// gitCommands splits a RUN line into its git commands' arguments (after
// "git" and its global -C/-c options).
func gitCommands(run string) [][]string {
	var out [][]string
	for _, part := range regexp.MustCompile(`&&|\|\||;|\|`).Split(run, -1) {
		f := buildfile.Fields(part)
		for len(f) > 0 && f[0] != "git" {
			f = f[1:]
		}
		if len(f) == 0 {
			continue
		}
		f = f[1:]
		for len(f) > 1 && (f[0] == "-C" || f[0] == "-c") {
			f = f[2:]
		}
		out = append(out, f)
	}
	return out
}

var cloneValueFlags = map[string]bool{"--depth": true, "--branch": true, "-b": true, "--origin": true, "-o": true,
	"--config": true, "-c": true, "--reference": true, "--filter": true, "--jobs": true, "-j": true, "--shallow-since": true}

func parseClone(run string) *Fetch {
	for _, g := range gitCommands(run) {
		if len(g) == 0 || g[0] != "clone" {
			continue
		}
		f := &Fetch{How: "git clone"}
		for i := 1; i < len(g); i++ {
			a := g[i]
			switch {
			case a == "--branch" || a == "-b":
				if i+1 < len(g) {
					f.Ref = g[i+1]
				}
				i++
			case strings.HasPrefix(a, "--branch="):
				f.Ref = strings.TrimPrefix(a, "--branch=")
			case cloneValueFlags[a]:
				i++
			case strings.HasPrefix(a, "-"):
			default:
				if f.URL == "" {
					f.URL = a
				}
			}
		}
		if f.URL != "" {
			return f
		}
	}
	return nil
}

func checkoutRef(run string) string {
	for _, g := range gitCommands(run) {
		if len(g) < 2 {
			continue
		}
		switch g[0] {
		case "checkout", "switch":
			for _, a := range g[1:] {
				if !strings.HasPrefix(a, "-") {
					return a
				}
			}
		case "reset":
			if g[1] == "--hard" && len(g) > 2 {
				return g[2]
			}
		}
	}
	return ""
}

var patchToolRE = lazyre.New(`(git\s+apply|patch)\b([^&|;<]*)(<\s*)?(\S*)`)

// findApply returns how d applies a patch directory: a COPY or ADD of a
// directory to a container directory, then a git apply or patch of files
// in it.
func findApply(d *buildfile.Dockerfile) *Apply {
	copies := map[string]*Apply{} // container dir -> source
	for _, in := range d.Instrs {
		switch in.Cmd {
		case "COPY", "ADD":
			f := buildfile.Fields(in.Args)
			var srcs []string
			for _, a := range f {
				if !strings.HasPrefix(a, "--") {
					srcs = append(srcs, a)
				}
			}
			if len(srcs) != 2 || strings.Contains(srcs[0], "://") {
				continue
			}
			src := path.Clean(strings.TrimPrefix(srcs[0], "./"))
			dst := path.Clean(srcs[1])
			if strings.HasSuffix(src, ".diff") || strings.HasSuffix(src, ".patch") {
				src = path.Dir(src)
			}
			copies[dst] = &Apply{Dir: src, CopyLine: in.Line}
		case "RUN":
			for dst, a := range copies {
				if ap := applyIn(in.Args, dst); ap != nil {
					ap.Dir, ap.CopyLine, ap.Line = a.Dir, a.CopyLine, in.Line
					return ap
				}
			}
		}
	}
	return nil
}

// applyIn reads a git apply or patch command of files under dir in run.
func applyIn(run, dir string) *Apply {
	for _, part := range regexp.MustCompile(`&&|\|\||;`).Split(run, -1) {
		part = strings.TrimSpace(part)
		m := patchToolRE.FindStringSubmatch(part)
		if m == nil {
			continue
		}
		tool := "patch"
		if strings.HasPrefix(m[1], "git") {
			tool = "git apply"
		}
		args := buildfile.Fields(m[2])
		if m[4] != "" {
			args = append(args, m[4])
		}
		ap := &Apply{Tool: tool, Command: part}
		for _, a := range args {
			switch {
			case strings.HasPrefix(a, dir+"/"):
				ap.Glob = strings.TrimPrefix(a, dir+"/")
			case strings.HasPrefix(a, "-"):
				ap.Flags = append(ap.Flags, a)
			}
		}
		if ap.Glob != "" {
			return ap
		}
	}
	return nil
}
