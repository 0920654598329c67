package series

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/patchkit/patchkit/internal/diag"
	"github.com/patchkit/patchkit/internal/tree"
)

// Options say how a series names its files and counts its hunks, as the
// flags of `git apply` do. The zero value is git apply's default.
type Options struct {
	// Strip is git apply's -p<n>: the leading path components removed from
	// the names in the diff. 0 means the default, -p1 (and git's guess for
	// traditional diffs). Names of "rename from"/"copy from" lines lose one
	// fewer, as git's do, since they carry no a/ b/ prefix.
	Strip int
	// Directory is git apply's --directory=<dir>: prepended to every name
	// after stripping. A clean relative path; "" means the tree's root.
	Directory string
	// Recount is git apply's --recount: the line counts of "@@" lines are
	// ignored and recounted from the hunk's lines.
	Recount bool
	// Mail reads each file as `git am` does (see mail.go): a file must be a
	// mail, a mailbox of several is split as git mailsplit splits it, the
	// CR of CRLF lines is dropped unless KeepCR, and a mail signature whose
	// "-- " lost its trailing space ("--") ends the last hunk.
	Mail bool
	// KeepCR is git am --keep-cr.
	KeepCR bool
	// SeriesFile, when set, is a quilt series file that gives the order of
	// the patches instead of the glob (see readSeriesFile): its path
	// relative to the patch directory, and SeriesShown as messages name it.
	SeriesFile, SeriesShown string
}

// Option configures Load and Parse.
type Option func(*Options)

// WithStrip strips n leading components from the names in the diff (n >= 1),
// as `git apply -p<n>` does.
func WithStrip(n int) Option { return func(o *Options) { o.Strip = n } }

// WithDirectory prepends dir to every name, as `git apply --directory=<dir>` does.
func WithDirectory(dir string) Option { return func(o *Options) { o.Directory = dir } }

// WithRecount ignores the line counts of "@@" lines, as `git apply --recount` does.
func WithRecount() Option { return func(o *Options) { o.Recount = true } }

// WithMail reads each file as `git am` does (Options.Mail); keepCR is
// git am --keep-cr.
func WithMail(keepCR bool) Option {
	return func(o *Options) { o.Mail, o.KeepCR = true, keepCR }
}

// WithSeriesFile orders Load's patches by the quilt series file rel (relative
// to the patch directory; shown names it in messages) instead of the glob.
func WithSeriesFile(rel, shown string) Option {
	return func(o *Options) { o.SeriesFile, o.SeriesShown = rel, shown }
}

// WithOptions sets every option at once, e.g. to parse part of a patch again
// with the options of the series it came from (Patch.Options).
func WithOptions(opts Options) Option { return func(o *Options) { *o = opts } }

func buildOptions(opts []Option) Options {
	var o Options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// rewritesNames reports whether names differ from git apply's default ones.
func (o Options) rewritesNames() bool { return o.Strip > 1 || o.Directory != "" }

// CheckOptions validates opts as a spec gives them: Strip is 0 (the default)
// or at least 1, Directory a clean relative path inside the tree. The error
// says what is wrong, for the caller to name the file and key.
func CheckOptions(o Options) error {
	if o.Strip < 0 {
		return fmt.Errorf("strip %d: want 1 or more (git apply -p<n>)", o.Strip)
	}
	if o.Directory != "" {
		if path.IsAbs(o.Directory) || strings.HasPrefix(o.Directory, "/") {
			return fmt.Errorf("directory %q is absolute: want a path relative to the upstream tree", o.Directory)
		}
		d := strings.TrimSuffix(o.Directory, "/")
		if err := tree.Clean(d); err != nil {
			return fmt.Errorf("directory %q: %w", o.Directory, err)
		}
	}
	return nil
}

// rewriteNames applies Strip and Directory to the names go-gitdiff parsed,
// so that every consumer of the Patch sees tree paths. go-gitdiff has already
// removed one component from the names of git diffs (not from "rename
// from"/"copy from" lines, which git strips by one fewer anyway); traditional
// diffs keep theirs. A name with fewer components than the strip level, and a
// result that leaves the tree, is bad input naming the file diff's line.
func (p *Patch) rewriteNames(lines *lineTable, o Options) error {
	strip := max(o.Strip, 1)
	dir := strings.Trim(o.Directory, "/")
	for _, f := range p.Files {
		line := p.FileLine[f]
		traditional := line > 0 && line <= lines.len() && !isGitFileHeader(lines.at(line-1))
		n := strip - 1
		if traditional {
			n = strip
		}
		for _, name := range []*string{&f.OldName, &f.NewName} {
			if *name == "" {
				continue
			}
			s, ok := StripGit(*name, n)
			if !ok {
				return diag.Inputf(p.Path, line, "strip %d removes the whole path %q: it has fewer leading directories (git apply: unable to find filename)", strip, *name)
			}
			if dir != "" {
				s = dir + "/" + s
			}
			if err := tree.Clean(s); err != nil {
				return diag.Inputf(p.Path, line, "unsafe path: %v", err)
			}
			*name = s
		}
	}
	p.NamesFinal = true
	return nil
}

// recount rewrites the "@@" lines of a diff with the line counts of their
// hunks, as `git apply --recount` does (its recount_diff): a hunk runs until
// a line that starts "@@ " or "diff ", or the end; ' ' and empty lines count
// on both sides, '-' on the old, '+' on the new, '\' on neither. When any
// other line ends a hunk, git warns and keeps the header's counts, and so
// does recount. Line numbers stay as they were. It returns the text of
// lines with the headers rewritten.
func recount(lines *lineTable, start int) string {
	var b strings.Builder
	b.Grow(len(lines.s))
	b.WriteString(lines.s[:lines.offset(start)])
	for i := start; i < lines.len(); i++ {
		b.WriteString(recountedLine(lines, i))
	}
	return b.String()
}

// recountedLine is line i of lines, an "@@" line recounted.
func recountedLine(lines *lineTable, i int) string {
	r, ok := parseFragmentHeader(lines.at(i))
	if !ok {
		return lines.at(i)
	}
	var oldN, newN int64
	j := i + 1
	good := true
scan:
	for ; j < lines.len(); j++ {
		l := lines.at(j)
		if CountHunkLine(l[0], &oldN, &newN) {
			continue
		}
		switch l[0] {
		case '\\':
		case '@':
			good = strings.HasPrefix(l, "@@ ")
			break scan
		case 'd':
			good = strings.HasPrefix(l, "diff ")
			break scan
		default:
			good = false
			break scan
		}
	}
	if !good {
		return lines.at(i)
	}
	return formatFragmentHeader(lines.at(i), r, oldN, newN)
}

// formatFragmentHeader rewrites the counts of header l, keeping its start
// lines and the text after the closing "@@".
func formatFragmentHeader(l string, r fragmentRange, oldN, newN int64) string {
	_, rest, _ := strings.Cut(l[len("@@ -"):], " @@")
	count := func(pos, n int64) string {
		return strconv.FormatInt(pos, 10) + "," + strconv.FormatInt(n, 10)
	}
	return "@@ -" + count(r.oldPos, oldN) + " +" + count(r.newPos, newN) + " @@" + rest
}

// ParseOptions returns the options the patch was parsed with.
func (p *Patch) ParseOptions() Options { return p.options }
