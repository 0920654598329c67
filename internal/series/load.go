package series

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/tree"
)

// Load parses the series in dir: every *.diff and *.patch file directly in
// it, in byte-wise name order, which is the order of a shell glob handed to
// git apply (or git am). display is dir as messages name it (patches/kubeovn);
// each Patch.Path is display + "/" + name.
//
// Like the glob, Load skips names that start with a dot, and follows a
// symbolic link to a regular file; subdirectories (tests/) and other files are
// ignored, and a name that matches but is not a readable regular file is
// an error. A missing dir is a *diag.InputError; a dir without patches gives
// an empty slice. opts apply to every patch (see Parse).
//
// With WithSeriesFile the patches and their order are the lines of a quilt
// series file instead (see readSeriesFile). With WithMail each file is read
// as git am reads it (see parseMail): a mailbox of several mails gives a
// Patch per mail.
func Load(dir string, display string, opts ...Option) ([]*Patch, error) {
	o := buildOptions(opts)
	files, err := Files(dir, display, opts...)
	if err != nil {
		return nil, err
	}
	patches := make([]*Patch, 0, len(files))
	for _, f := range files {
		raw, err := readPatch(filepath.Join(dir, filepath.FromSlash(f.Name)), f.Path)
		if err != nil {
			return nil, err
		}
		if raw == nil {
			if o.SeriesFile != "" {
				return nil, diag.Inputf(o.SeriesShown, f.Line, "%s is a directory, not a patch", f.Name)
			}
			continue // a symbolic link to a directory
		}
		ps, err := ParseFile(f.Path, raw, f.Options...)
		if err != nil {
			return nil, err
		}
		patches = append(patches, ps...)
	}
	return patches, nil
}

// File is one file of a series, as Files lists it.
type File struct {
	// Name is its path relative to the patch directory, Path as messages
	// name it (display + "/" + Name).
	Name, Path string
	// Line is the series file's line that names it (0 for the glob).
	Line int
	// Options parse it: the series' own, with its -p<n> from the series file.
	Options []Option
}

// Files lists the files of the series in dir in the order they apply, as
// Load reads them: the glob's, or the series file's (WithSeriesFile). It
// reads no patch.
func Files(dir, display string, opts ...Option) ([]File, error) {
	o := buildOptions(opts)
	var entries []seriesEntry
	if o.SeriesFile != "" {
		var err error
		if entries, err = readSeriesFile(dir, o); err != nil {
			return nil, err
		}
	} else {
		names, err := globNames(dir, display)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			entries = append(entries, seriesEntry{name: n})
		}
	}
	out := make([]File, 0, len(entries))
	for _, e := range entries {
		f := File{Name: e.name, Path: e.name, Line: e.line, Options: opts}
		if display != "" {
			f.Path = strings.TrimSuffix(display, "/") + "/" + e.name
		}
		if e.strip != 0 {
			f.Options = append(append([]Option(nil), opts...), WithStrip(e.strip))
		}
		out = append(out, f)
	}
	return out, nil
}

// ParseFile parses one file of a series as Load does: with Mail, as git am
// reads it (a mailbox of several mails gives a Patch per mail); else the one
// Patch Parse gives.
func ParseFile(shown string, raw []byte, opts ...Option) ([]*Patch, error) {
	if o := buildOptions(opts); o.Mail {
		return parseMail(shown, raw, o, opts)
	}
	p, err := Parse(shown, raw, opts...)
	if err != nil {
		return nil, err
	}
	return []*Patch{p}, nil
}

// globNames lists the patch files of dir as the shell glob sorts them in
// the C locale: byte-wise.
func globNames(dir, display string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &diag.InputError{File: display, Msg: "patch directory does not exist"}
		}
		return nil, &diag.InputError{File: display, Msg: "reading the patch directory", Err: err}
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !(strings.HasSuffix(name, ".diff") || strings.HasSuffix(name, ".patch")) {
			continue
		}
		if e.IsDir() {
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

// seriesEntry is one patch of the series: its name in the patch directory,
// the series file's line that names it (0 for the glob) and its own strip
// level (0: the series').
type seriesEntry struct {
	name  string
	line  int
	strip int
}

// readSeriesFile reads a quilt series file: one patch per line, a path
// relative to the patch directory, in the order they apply. Blank lines and
// lines that start with "#" are skipped, and " #" starts a comment. After a
// name, -p<n> (also -p <n>) gives that patch's strip level (1 or more) and is
// honoured; any other option (quilt's -R, -p0) is bad input naming the line,
// as are a name that leaves the directory, a missing file and a name listed
// twice.
func readSeriesFile(dir string, o Options) ([]seriesEntry, error) {
	full := filepath.Join(dir, filepath.FromSlash(o.SeriesFile))
	fi, err := os.Stat(full)
	if err != nil {
		return nil, &diag.InputError{File: o.SeriesShown, Msg: "reading the series file", Err: err}
	}
	if fi.Size() > MaxPatchSize {
		return nil, tooLarge(o.SeriesShown, fi.Size())
	}
	data, err := os.ReadFile(full)
	if err != nil {
		return nil, &diag.InputError{File: o.SeriesShown, Msg: "reading the series file", Err: err}
	}
	var out []seriesEntry
	seen := map[string]int{}
	for i, l := range strings.Split(string(data), "\n") {
		line := i + 1
		l = strings.TrimSpace(strings.TrimSuffix(l, "\r"))
		if j := strings.Index(l, " #"); j >= 0 {
			l = l[:j]
		}
		if j := strings.Index(l, "\t#"); j >= 0 {
			l = l[:j]
		}
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Fields(l)
		e := seriesEntry{name: f[0], line: line}
		if err := tree.Clean(e.name); err != nil {
			return nil, diag.Inputf(o.SeriesShown, line, "%q: want a path inside the patch directory: %v", e.name, err)
		}
		for k := 1; k < len(f); k++ {
			v, ok := strings.CutPrefix(f[k], "-p")
			if ok && v == "" && k+1 < len(f) {
				k++
				v = f[k]
			}
			n, err := strconv.Atoi(v)
			switch {
			case !ok:
				return nil, diag.Inputf(o.SeriesShown, line, "%s: option %s is not modelled (patchkit reads -p<n> after a name)", e.name, f[k])
			case err != nil || n < 1:
				return nil, diag.Inputf(o.SeriesShown, line, "%s: -p%s: want -p<n> with n 1 or more (-p0 is not supported)", e.name, v)
			}
			e.strip = n
		}
		if e.strip == max(o.Strip, 1) {
			e.strip = 0
		}
		if prev, dup := seen[e.name]; dup {
			return nil, diag.Inputf(o.SeriesShown, line, "%s is listed twice (first on line %d)", e.name, prev)
		}
		seen[e.name] = line
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(e.name))); err != nil {
			return nil, diag.Inputf(o.SeriesShown, line, "%s: no such patch in the patch directory", e.name)
		}
		out = append(out, e)
	}
	return out, nil
}

// readPatch reads a patch file, checking its size first. It returns nil, nil
// for a link to a directory, which Load ignores as it ignores directories.
func readPatch(full, shown string) ([]byte, error) {
	fi, err := os.Stat(full)
	if err != nil {
		return nil, &diag.InputError{File: shown, Msg: "reading the patch", Err: err}
	}
	switch {
	case fi.IsDir():
		return nil, nil
	case !fi.Mode().IsRegular():
		return nil, diag.Inputf(shown, 0, "not a regular file (%s)", fi.Mode().Type())
	case fi.Size() > MaxPatchSize:
		return nil, tooLarge(shown, fi.Size())
	}
	raw, err := os.ReadFile(full)
	if err != nil {
		return nil, &diag.InputError{File: shown, Msg: "reading the patch", Err: err}
	}
	if raw == nil {
		raw = []byte{}
	}
	return raw, nil
}
